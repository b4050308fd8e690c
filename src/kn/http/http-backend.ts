import type { CallContext } from "../../core/call-context";
import type { Json } from "../../core/json";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import { createJsonClient, type JsonClient } from "../../upstream/http-json";
import type { ActionQueryResult, McpToolDefinition, ToolBoxTool } from "../actions";
import type { KnowledgeNetworkBackend } from "../backend";
import type { ConceptGroup, ConceptHit, ConceptKind, ConceptSearch } from "../concepts";
import type {
  InstanceIdentity,
  KnowledgeNetwork,
  KnowledgeNetworkSummary,
  ObjectQuery,
  ObjectQueryResult,
  ObjectType,
  OperatorDetail,
  PropertiesQuery,
  PropertiesResult,
  Row,
  SubgraphQuery,
  SubgraphResult,
} from "../types";
import { ActionQueryClient } from "./action-query";
import { ConceptSearchClient } from "./concept-search";
import { NetworkIds } from "./network-ids";
import { OntologyManagerClient } from "./ontology-manager";
import { METHOD_OVERRIDE_HEADERS, OntologyQueryClient } from "./ontology-query";
import { OperatorIntegrationClient } from "./operator-integration";
import { OperatorMarketClient } from "./operator-market";
import { DEFAULT_PLATFORM_LAYOUT, PLATFORM_LAYOUTS, type PlatformPaths } from "./platform-paths";
import { hasSystemFields, type RowShape, toRow } from "./platform-wire";

export interface HttpBackendOptions {
  ontologyManagerUrl: string;
  ontologyQueryUrl: string;
  /** agent-operator-integration; without it getOperator fails with FAILED_PRECONDITION. */
  operatorMarketUrl: string | undefined;
  /** Per call, ms; a caller's shorter deadline wins. */
  timeoutMs: number;
  /** Pooled keep-alive sockets per service. */
  maxSockets: number;
  /** "new": the 2026 platform (`_instance_identities`, system fields in every row); "old": the platform before. */
  spelling: "new" | "old";
  /** Each service's path prefix below its URL; default: the 0.7 layout. */
  paths?: PlatformPaths;
}

/** How long an object type's keys are reused to complete rows that lack system fields. */
const ROW_SHAPE_TTL_MS = 60_000;

/**
 * The knowledge-network backend over the platform's REST APIs: ontology-manager
 * for schema, ontology-query for instances, subgraphs and property values, the
 * operator market for operator definitions. Answers are validated and
 * normalised to the interface's types, and unknown object types, action
 * types and networks are NOT_FOUND naming the valid ids (network-ids.ts), so
 * callers cannot tell this backend from the embedded engine. Each service's
 * path prefix comes from the platform's release (platform-paths.ts).
 */
export function createHttpBackend(opts: HttpBackendOptions): KnowledgeNetworkBackend & { close(): void } {
  return new HttpBackend(opts);
}

class HttpBackend implements KnowledgeNetworkBackend {
  readonly kind = "http";
  private readonly clients: JsonClient[];
  private readonly manager: OntologyManagerClient;
  private readonly query: OntologyQueryClient;
  private readonly market: OperatorMarketClient;
  private readonly concepts: ConceptSearchClient;
  private readonly actions: ActionQueryClient;
  private readonly integration: OperatorIntegrationClient;
  private readonly networkIds: NetworkIds;
  /** "<kn>\u0000<ot>" → the keys that build a row's system fields. */
  private readonly shapes = new Map<string, { shape: RowShape; expiresAt: number }>();

  constructor(private readonly opts: HttpBackendOptions) {
    const pool = { timeoutMs: opts.timeoutMs, maxSockets: opts.maxSockets };
    // The clients' paths start below the prefix, so a layout is nothing but these three base URLs.
    const paths = opts.paths ?? PLATFORM_LAYOUTS[DEFAULT_PLATFORM_LAYOUT];
    const managerUrl = opts.ontologyManagerUrl + paths.ontologyManager;
    const queryUrl = opts.ontologyQueryUrl + paths.ontologyQuery;
    const manager = createJsonClient({ upstream: "ontology-manager", baseUrl: managerUrl, ...pool });
    const query = createJsonClient({
      upstream: "ontology-query",
      baseUrl: queryUrl,
      headers: METHOD_OVERRIDE_HEADERS,
      ...pool,
    });
    const market =
      opts.operatorMarketUrl === undefined
        ? undefined
        : createJsonClient({
            upstream: "operator-market",
            baseUrl: opts.operatorMarketUrl + paths.operatorIntegration,
            ...pool,
          });
    // ontology-manager's typed searches are POSTs that must say they are GETs, as ontology-query's reads.
    const managerSearch = createJsonClient({
      upstream: "ontology-manager",
      baseUrl: managerUrl,
      headers: METHOD_OVERRIDE_HEADERS,
      ...pool,
    });
    this.clients = [manager, managerSearch, query, ...(market ? [market] : [])];
    this.manager = new OntologyManagerClient(manager);
    this.query = new OntologyQueryClient(query, opts.spelling);
    this.market = new OperatorMarketClient(market);
    this.concepts = new ConceptSearchClient(manager, managerSearch);
    this.actions = new ActionQueryClient(query, queryUrl, opts.spelling);
    this.integration = new OperatorIntegrationClient(market);
    this.networkIds = new NetworkIds(this.manager);
  }

  close(): void {
    for (const c of this.clients) c.close();
  }

  listKnowledgeNetworks(
    ctx: CallContext,
    query: { name_pattern?: string; limit?: number; offset?: number },
  ): Promise<{ entries: KnowledgeNetworkSummary[]; total_count: number }> {
    return this.manager.listKnowledgeNetworks(ctx, query);
  }

  getKnowledgeNetwork(ctx: CallContext, knId: string): Promise<KnowledgeNetwork> {
    return this.manager.getKnowledgeNetwork(ctx, knId);
  }

  async getObjectTypes(ctx: CallContext, knId: string, objectTypeIds: string[]): Promise<ObjectType[]> {
    if (objectTypeIds.length === 0) return [];
    const requested = [...new Set(objectTypeIds)];
    const types = await this.manager.getObjectTypes(ctx, knId, requested).catch(async (err: unknown) => {
      throw isNotFound(err) ? await this.networkIds.unknownObjectTypes(ctx, knId, requested, err) : err;
    });
    const byId = new Map(types.map((t) => [t.id, t]));
    const missing = requested.filter((id) => !byId.has(id));
    if (missing.length > 0) {
      // Some platforms answer 200 without the unknown ones rather than 404.
      const omitted = new ToolError({
        code: "not_found",
        reason: "OBJECT_TYPE_NOT_FOUND",
        message: text(
          `object type ${missing.join(", ")} does not exist in knowledge network ${knId} (ontology-manager did not return it)`,
          `知识网络 ${knId} 中不存在对象类型 ${missing.join(", ")}（ontology-manager 没有返回它）`,
        ),
        metadata: { upstream: "ontology-manager" },
        hint: {
          message: text("Use the object type ids of the network's schema.", "使用这个知识网络schema中的对象类型id。"),
        },
      });
      throw await this.networkIds.unknownObjectTypes(ctx, knId, missing, omitted);
    }
    // The platform answers in its own order; callers get the order they asked for.
    return objectTypeIds.map((id) => byId.get(id)!);
  }

  async queryObjects(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: ObjectQuery,
  ): Promise<ObjectQueryResult> {
    // The platform before 2026 sends no system fields: ask for the properties that build them, and drop them again.
    const shape = this.opts.spelling === "old" ? await this.rowShape(ctx, knId, objectTypeId) : undefined;
    const added = shape && query.properties ? sourcesOf(shape).filter((p) => !query.properties!.includes(p)) : [];
    const answer = await this.query.queryObjects(
      ctx,
      knId,
      objectTypeId,
      added.length > 0 ? { ...query, properties: [...query.properties!, ...added] } : query,
    );
    const datas = await this.toRows(ctx, knId, objectTypeId, answer.datas ?? [], shape);
    for (const row of datas) for (const p of added) delete row[p];
    const result: ObjectQueryResult = { datas };
    // The platform omits total_count when it is 0.
    if (answer.total_count !== undefined && answer.total_count !== null) result.total_count = answer.total_count;
    else if (query.need_total) result.total_count = 0;
    // It also sends search_after with the last page; a page shorter than the limit is the last.
    if (answer.search_after && datas.length >= query.limit) result.search_after = answer.search_after;
    return result;
  }

  querySubgraph(ctx: CallContext, knId: string, query: SubgraphQuery): Promise<SubgraphResult> {
    return this.query.querySubgraph(ctx, knId, query);
  }

  async queryProperties(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: PropertiesQuery,
  ): Promise<PropertiesResult> {
    // Property rows carry the primary keys; before 2026 the display value had to be asked for.
    const shape = this.opts.spelling === "old" ? await this.rowShape(ctx, knId, objectTypeId) : undefined;
    const added = shape
      ? sourcesOf(shape).filter((p) => !query.properties.includes(p) && !shape.primary_keys.includes(p))
      : [];
    const raw = await this.query.queryProperties(ctx, knId, objectTypeId, {
      ...query,
      properties: [...query.properties, ...added],
    });
    const rows = await this.toRows(ctx, knId, objectTypeId, raw, shape);
    for (const row of rows) for (const p of added) delete row[p];
    return alignToIdentities(query.identities, rows);
  }

  getOperator(ctx: CallContext, operatorId: string): Promise<OperatorDetail> {
    return this.market.getOperator(ctx, operatorId);
  }

  listConceptGroups(ctx: CallContext, knId: string): Promise<ConceptGroup[]> {
    return this.concepts.listConceptGroups(ctx, knId);
  }

  searchConcepts<K extends ConceptKind>(
    ctx: CallContext,
    knId: string,
    kind: K,
    query: ConceptSearch,
  ): Promise<ConceptHit<K>[]> {
    return this.concepts.searchConcepts(ctx, knId, kind, query);
  }

  queryActions(
    ctx: CallContext,
    knId: string,
    actionTypeId: string,
    identities: InstanceIdentity[],
  ): Promise<ActionQueryResult> {
    return this.actions.queryActions(ctx, knId, actionTypeId, identities).catch(async (err: unknown) => {
      throw isNotFound(err) ? await this.networkIds.unknownActionType(ctx, knId, actionTypeId, err) : err;
    });
  }

  getToolBoxTool(ctx: CallContext, boxId: string, toolId: string): Promise<ToolBoxTool> {
    return this.integration.getToolBoxTool(ctx, boxId, toolId);
  }

  listMcpTools(ctx: CallContext, mcpId: string): Promise<McpToolDefinition[]> {
    return this.integration.listMcpTools(ctx, mcpId);
  }

  // -------------------------------------------------------------------------

  private async toRows(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    raw: Record<string, Json>[],
    shape: RowShape | undefined,
  ): Promise<Row[]> {
    const needed = shape ?? (raw.every(hasSystemFields) ? undefined : await this.rowShape(ctx, knId, objectTypeId));
    return raw.map((r) => toRow(r, needed));
  }

  private async rowShape(ctx: CallContext, knId: string, objectTypeId: string): Promise<RowShape> {
    const key = `${knId}\u0000${objectTypeId}`;
    const cached = this.shapes.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.shape;
    const [type] = await this.getObjectTypes(ctx, knId, [objectTypeId]);
    const shape: RowShape = { id: type!.id, primary_keys: type!.primary_keys, display_key: type!.display_key };
    this.shapes.set(key, { shape, expiresAt: Date.now() + ROW_SHAPE_TTL_MS });
    return shape;
  }
}

function isNotFound(err: unknown): err is ToolError {
  return err instanceof ToolError && err.code === "not_found";
}

/** The data properties a row's system fields are built from. */
function sourcesOf(shape: RowShape): string[] {
  return [...new Set([...shape.primary_keys, shape.display_key])].filter((p) => p !== "");
}

/**
 * Puts the platform's rows (its own order, one per matched instance) in the
 * order of the requested identities, matching on the primary keys as SQL
 * would (1 and "1" are the same key); identities that matched nothing get a
 * null row and are listed in `unmatched`.
 */
function alignToIdentities(identities: InstanceIdentity[], rows: Row[]): PropertiesResult {
  const keys = rows[0] ? Object.keys(rows[0]._instance_identity).sort() : [];
  const byKey = new Map(rows.map((r) => [identityKey(r._instance_identity, keys), r]));
  const result: PropertiesResult = { rows: [], unmatched: [] };
  for (const identity of identities) {
    const row = byKey.get(identityKey(identity, keys));
    result.rows.push(row ?? null);
    if (!row) result.unmatched.push(identity);
  }
  return result;
}

function identityKey(identity: InstanceIdentity, keys: string[]): string {
  return JSON.stringify(
    keys.map((k) => {
      const v = identity[k];
      if (v === undefined || v === null) return null;
      return typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
    }),
  );
}
