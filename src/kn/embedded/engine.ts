import { z } from "zod";
import type { CallContext } from "../../core/call-context";
import { deepFreeze } from "../../core/freeze";
import { type Json, setAtPath } from "../../core/json";
import { type Text, text } from "../../errors/text";
import { type FieldViolation, ToolError } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import type { ActionQueryResult, McpToolDefinition, ToolBoxTool } from "../actions";
import type { KnowledgeNetworkBackend } from "../backend";
import type { ConceptGroup, ConceptHit, ConceptKind, ConceptSearch } from "../concepts";
import {
  type InstanceIdentity,
  isCanonicalObjectQuery,
  isCanonicalSubgraphQuery,
  type KnowledgeNetwork,
  type KnowledgeNetworkSummary,
  type LogicProperty,
  type ObjectQuery,
  type ObjectQueryResult,
  type ObjectType,
  type OperatorDetail,
  objectQuerySchema,
  type PropertiesQuery,
  type PropertiesResult,
  type Row,
  type SortField,
  type SubgraphEntry,
  type SubgraphObject,
  type SubgraphQuery,
  type SubgraphResult,
  subgraphQuerySchema,
} from "../types";
import { ActionCatalog, ToolRegistry } from "./action-catalog";
import { type Bundle, BundleError, type BundleObjectType, loadBundleFile } from "./bundle";
import { ConceptCatalog } from "./concept-catalog";
import { evaluateCondition } from "./conditions";
import { logicParamCells } from "./logic-params";
import { evaluateMetric } from "./metric-values";
import { compareValues, ObjectStore, valueKey } from "./object-store";
import { builtInOperators, type OperatorCall, type OperatorEnv, type RegisteredOperator } from "./operators";
import { countPaths } from "./path-count";
import { DEFAULT_SCAN_BUDGET, ScanBudget } from "./scan-budget";

interface RelationIndex {
  id: string;
  name: string;
  sourceType: string;
  targetType: string;
  /** Row index in the source store → row indexes in the target store. */
  forward: Map<number, number[]>;
  /** Row index in the target store → row indexes in the source store. */
  backward: Map<number, number[]>;
}

interface Network {
  kn: KnowledgeNetwork;
  bundleTypes: Map<string, BundleObjectType>;
  stores: Map<string, ObjectStore>;
  relations: Map<string, RelationIndex>;
  /** "<ot>.<property>" → primary key value → series. */
  series: Map<string, Map<string, [number, number | null][]>>;
}

export interface EmbeddedOptions {
  /** Time zone of metric calendar buckets. */
  timeZone: string;
  /** Operators by id; default: the built-in ones. */
  operators?: Map<string, RegisteredOperator>;
  /** Row checks one call may make (EMBEDDED_SCAN_BUDGET); default DEFAULT_SCAN_BUDGET. */
  scanBudget?: number;
}

const DEFAULT_PATH_LIMIT = 10;
const DEFAULT_NODE_LIMIT = 10;
const MAX_IDENTITIES = 1000;

/**
 * The embedded knowledge network: every backend call answered in memory from
 * KN bundles, with ontology-query's semantics (see src/upstream/kn-types.ts).
 * It is the default backend and, behind the simulator, the test double of the
 * platform.
 */
export class EmbeddedBackend implements KnowledgeNetworkBackend {
  readonly kind = "embedded";
  private readonly networks = new Map<string, Network>();
  private readonly operators: Map<string, RegisteredOperator>;
  /** The agent tools' view of each network: its concepts and its action types. */
  private readonly catalogs = new Map<string, { concepts: ConceptCatalog; actions: ActionCatalog }>();
  private readonly tools = new ToolRegistry();

  /** `bundles` with where each came from (a file path), for the messages of BundleErrors. */
  constructor(
    bundles: readonly Bundle[] | readonly { bundle: Bundle; source: string }[],
    private readonly options: EmbeddedOptions,
  ) {
    this.operators = options.operators ?? builtInOperators();
    bundles.forEach((item, i) => {
      const { bundle, source } = "bundle" in item ? item : { bundle: item, source: `bundle #${i + 1}` };
      const id = bundle.knowledge_network.id;
      if (this.networks.has(id))
        throw new BundleError(`KN bundle ${source}: knowledge network ${id} is already defined by another bundle`);
      const network = buildNetwork(bundle, source);
      this.networks.set(id, network);
      this.catalogs.set(id, {
        concepts: new ConceptCatalog(network.kn, bundle),
        actions: new ActionCatalog(bundle, network.stores, source),
      });
      this.tools.add(bundle, source);
    });
  }

  /** Loads the bundle files (KN_BUNDLE); a bad file stops start-up with a BundleError naming it. */
  static fromFiles(paths: readonly string[], options: EmbeddedOptions): EmbeddedBackend {
    return new EmbeddedBackend(
      paths.map((path) => ({ bundle: loadBundleFile(path), source: path })),
      options,
    );
  }

  /** Instances per object type of each network, for logs. */
  stats(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, n] of this.networks) out[id] = [...n.stores.values()].reduce((s, st) => s + st.size, 0);
    return out;
  }

  async listKnowledgeNetworks(
    ctx: CallContext,
    query: { name_pattern?: string; limit?: number; offset?: number },
  ): Promise<{ entries: KnowledgeNetworkSummary[]; total_count: number }> {
    ctx.signal.throwIfAborted();
    const q = parseOr(
      z.object({
        name_pattern: z.string().optional(),
        limit: z.number().int().min(1).max(1000).default(50),
        offset: z.number().int().min(0).default(0),
      }),
      query,
      "INVALID_QUERY",
    );
    const pattern = q.name_pattern?.toLowerCase() ?? "";
    const all = [...this.networks.values()]
      .map((n) => summary(n.kn))
      .filter(
        (kn) => pattern === "" || kn.name.toLowerCase().includes(pattern) || kn.id.toLowerCase().includes(pattern),
      )
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    return { entries: all.slice(q.offset, q.offset + q.limit), total_count: all.length };
  }

  /** The network's definitions themselves, frozen: every call reads the same ones, and copying them cost more than the rest of a schema recall. */
  async getKnowledgeNetwork(ctx: CallContext, knId: string): Promise<KnowledgeNetwork> {
    ctx.signal.throwIfAborted();
    return this.network(knId).kn;
  }

  async getObjectTypes(ctx: CallContext, knId: string, objectTypeIds: string[]): Promise<ObjectType[]> {
    ctx.signal.throwIfAborted();
    const n = this.network(knId);
    const unknown = objectTypeIds.filter((id) => !n.stores.has(id));
    if (unknown.length > 0) throw unknownObjectTypes(knId, unknown, n);
    return objectTypeIds.map((id) => n.kn.object_types.find((t) => t.id === id)!);
  }

  async queryObjects(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: ObjectQuery,
  ): Promise<ObjectQueryResult> {
    ctx.signal.throwIfAborted();
    const store = this.store(knId, objectTypeId);
    const q = isCanonicalObjectQuery(query) ? query : parseOr(objectQuerySchema, query, "INVALID_QUERY");
    const projection = projectionOf(store, q.properties);
    const budget = this.scanBudget(ctx, store);
    const matches = await evaluateCondition(store, q.condition, budget);
    const sortKeys = sortKeysOf(store, q.sort);
    const scored = matches.scores.size > 0;
    const directions = [...sortKeys.map((s) => s.direction), ...store.type.primary_keys.map(() => "asc" as const)];
    // Rows come in primary-key order; only a score or an explicit sort needs a sort.
    let ordered = matches.rows;
    if (scored || q.sort !== undefined) {
      // A sort cannot pause: it is charged whole before it starts (n log n comparisons).
      budget.charge(ordered.length * Math.ceil(Math.log2(ordered.length + 1)));
      const keys = new Map(ordered.map((i) => [i, sortKeyOf(store, sortKeys, matches.scores, i)]));
      ordered = [...ordered].sort((a, b) => compareKeys(keys.get(a)!, keys.get(b)!, directions));
    }
    let from = 0;
    if (q.search_after !== undefined) {
      if (q.search_after.length !== directions.length) {
        throw new ToolError({
          code: "invalid_argument",
          reason: "INVALID_QUERY",
          message: text(
            `search_after must have ${directions.length} values (one per sort key and primary key): pass back the search_after of the previous page`,
            `search_after 必须有 ${directions.length} 个值（每个排序键和主键各一个）：请原样传回上一页的 search_after`,
          ),
          violations: [
            {
              field: "search_after",
              description: text(
                `expected ${directions.length} values, got ${q.search_after.length}`,
                `应有 ${directions.length} 个值，实际有 ${q.search_after.length} 个`,
              ),
            },
          ],
        });
      }
      const after = q.search_after;
      while (
        from < ordered.length &&
        compareKeys(sortKeyOf(store, sortKeys, matches.scores, ordered[from]!), after, directions) <= 0
      )
        from++;
    }
    const page = ordered.slice(from, from + q.limit);
    const datas = page.map((i) => {
      const row = project(store.rows[i]!, projection);
      if (q.include_logic_params) Object.assign(row, logicParamCells(store.type, store.rows[i]!));
      if (scored) row["_score"] = matches.scores.get(i) ?? 0;
      return row;
    });
    const result: ObjectQueryResult = { datas };
    if (q.need_total) result.total_count = matches.rows.length;
    if (from + q.limit < ordered.length && page.length > 0)
      result.search_after = sortKeyOf(store, sortKeys, matches.scores, page[page.length - 1]!);
    return result;
  }

  async querySubgraph(ctx: CallContext, knId: string, query: SubgraphQuery): Promise<SubgraphResult> {
    ctx.signal.throwIfAborted();
    const n = this.network(knId);
    const q = isCanonicalSubgraphQuery(query) ? query : parseOr(subgraphQuerySchema, query, "INVALID_SUBGRAPH_QUERY");
    const entries: SubgraphEntry[] = [];
    for (const [i, path] of q.relation_type_paths.entries()) {
      entries.push(
        await this.walkPath(ctx, n, knId, path, `relation_type_paths[${i}]`, q.include_logic_params === true),
      );
    }
    return { entries };
  }

  async queryProperties(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: PropertiesQuery,
  ): Promise<PropertiesResult> {
    ctx.signal.throwIfAborted();
    const n = this.network(knId);
    const store = this.store(knId, objectTypeId);
    const type = store.type;
    const violations: FieldViolation[] = [];
    if (query.identities.length === 0)
      violations.push({
        field: "_instance_identities",
        description: text("give at least one identity", "至少给出一个实例标识"),
      });
    if (query.identities.length > MAX_IDENTITIES)
      violations.push({
        field: "_instance_identities",
        description: text(`at most ${MAX_IDENTITIES} identities`, `最多 ${MAX_IDENTITIES} 个实例标识`),
      });
    query.identities.forEach((identity, i) => {
      const missing = type.primary_keys.filter((k) => identity[k] === undefined || identity[k] === null);
      if (missing.length > 0)
        violations.push({
          field: `_instance_identities[${i}]`,
          description: text(`missing primary key ${missing.join(", ")}`, `缺少主键 ${missing.join(", ")}`),
        });
    });
    if (query.properties.length === 0)
      violations.push({ field: "properties", description: text("give at least one property", "至少给出一个属性") });
    const logic = new Map(type.logic_properties.map((p) => [p.name, p]));
    query.properties.forEach((p, i) => {
      if (!logic.has(p) && !store.hasProperty(p)) {
        violations.push({
          field: `properties[${i}]`,
          description: text(
            `${p} is not a property of ${type.id}; logic properties: ${[...logic.keys()].join(", ") || "none"}`,
            `${p} 不是 ${type.id} 的属性；逻辑属性：${[...logic.keys()].join(", ") || "无"}`,
          ),
        });
      }
    });
    for (const name of Object.keys(query.dynamic_params ?? {})) {
      if (!logic.has(name) || !query.properties.includes(name)) {
        violations.push({
          field: `dynamic_params.${name}`,
          description: text("must be a logic property that properties asks for", "必须是 properties 中请求的逻辑属性"),
        });
      }
    }
    if (violations.length > 0)
      throw invalid(
        "INVALID_PROPERTIES_QUERY",
        text(`invalid property query on ${type.id}`, `${type.id} 上的属性查询无效`),
        violations,
      );

    const env = this.operatorEnv(n);
    const rows: (Record<string, Json> | null)[] = [];
    const unmatched: InstanceIdentity[] = [];
    for (const identity of query.identities) {
      const index = store.find(identity);
      if (index === undefined) {
        rows.push(null);
        unmatched.push(identity);
        continue;
      }
      const row = store.rows[index]!;
      const out: Record<string, Json> = {
        _instance_id: row._instance_id,
        _instance_identity: row._instance_identity,
        _display: row._display,
      };
      for (const k of type.primary_keys) out[k] = row[k] ?? null;
      for (const name of query.properties) {
        const lp = logic.get(name);
        const params = query.dynamic_params?.[name];
        out[name] = !lp
          ? (row[name] ?? null)
          : lp.type === "metric"
            ? this.metricValue(n, type, lp, row, params)
            : this.operatorValue(type, lp, row, params, env);
      }
      rows.push(out);
    }
    return { rows, unmatched };
  }

  async getOperator(ctx: CallContext, operatorId: string): Promise<OperatorDetail> {
    ctx.signal.throwIfAborted();
    const op = this.operators.get(operatorId);
    if (!op) {
      throw new ToolError({
        code: "not_found",
        reason: "OPERATOR_NOT_FOUND",
        message: text(`operator ${operatorId} is not in the operator market`, `算子市场中没有算子 ${operatorId}`),
        hint: {
          message: text(
            "Use the operator id of a logic property's data_source.",
            "使用逻辑属性 data_source 中的算子id。",
          ),
          validValues: [...this.operators.keys()],
        },
      });
    }
    return structuredClone(op.detail);
  }

  async listConceptGroups(ctx: CallContext, knId: string): Promise<ConceptGroup[]> {
    ctx.signal.throwIfAborted();
    return this.catalog(knId).concepts.listGroups();
  }

  async searchConcepts<K extends ConceptKind>(
    ctx: CallContext,
    knId: string,
    kind: K,
    query: ConceptSearch,
  ): Promise<ConceptHit<K>[]> {
    ctx.signal.throwIfAborted();
    const { concepts } = this.catalog(knId);
    return concepts.search(knId, kind, query, (store) => this.scanBudget(ctx, store));
  }

  async queryActions(
    ctx: CallContext,
    knId: string,
    actionTypeId: string,
    identities: InstanceIdentity[],
  ): Promise<ActionQueryResult> {
    ctx.signal.throwIfAborted();
    return this.catalog(knId).actions.query(knId, actionTypeId, identities);
  }

  async getToolBoxTool(ctx: CallContext, boxId: string, toolId: string): Promise<ToolBoxTool> {
    ctx.signal.throwIfAborted();
    return this.tools.toolBoxTool(boxId, toolId);
  }

  async listMcpTools(ctx: CallContext, mcpId: string): Promise<McpToolDefinition[]> {
    ctx.signal.throwIfAborted();
    return this.tools.mcpTools(mcpId);
  }

  // -------------------------------------------------------------------------

  private catalog(knId: string): { concepts: ConceptCatalog; actions: ActionCatalog } {
    this.network(knId);
    return this.catalogs.get(knId)!;
  }

  private network(knId: string): Network {
    const n = this.networks.get(knId);
    if (!n) {
      throw new ToolError({
        code: "not_found",
        reason: "KNOWLEDGE_NETWORK_NOT_FOUND",
        message: text(`knowledge network ${knId} does not exist`, `知识网络 ${knId} 不存在`),
        hint: {
          message: text("Use one of the knowledge network ids this service has.", "使用本服务已有的知识网络id之一。"),
          validValues: [...this.networks.keys()],
        },
      });
    }
    return n;
  }

  private store(knId: string, objectTypeId: string): ObjectStore {
    const n = this.network(knId);
    const store = n.stores.get(objectTypeId);
    if (!store) throw unknownObjectTypes(knId, [objectTypeId], n);
    return store;
  }

  /** The scan budget of one call on one object type. */
  private scanBudget(ctx: CallContext, store: ObjectStore): ScanBudget {
    return new ScanBudget(this.options.scanBudget ?? DEFAULT_SCAN_BUDGET, ctx, store.type.id);
  }

  private async walkPath(
    ctx: CallContext,
    n: Network,
    knId: string,
    path: z.output<typeof subgraphQuerySchema>["relation_type_paths"][number],
    at: string,
    withLogicParams: boolean,
  ): Promise<SubgraphEntry> {
    const violations: FieldViolation[] = [];
    if (path.relation_types.length !== path.object_types.length - 1) {
      violations.push({
        field: `${at}.relation_types`,
        description: text(
          "a path of n+1 object types needs exactly n relation types",
          "由 n+1 个对象类型组成的路径需要正好 n 个关系类型",
        ),
      });
    }
    const stores = path.object_types.map((node, i) => {
      const s = n.stores.get(node.id);
      if (!s)
        violations.push({
          field: `${at}.object_types[${i}].id`,
          description: text(`${node.id} is not an object type of ${knId}`, `${node.id} 不是 ${knId} 的对象类型`),
        });
      return s;
    });
    const edges = path.relation_types.map((edge, i) => {
      const rel = n.relations.get(edge.relation_type_id);
      const from = path.object_types[i]?.id;
      const to = path.object_types[i + 1]?.id;
      if (!rel) {
        violations.push({
          field: `${at}.relation_types[${i}].relation_type_id`,
          description: text(
            `${edge.relation_type_id} is not a relation type of ${knId}`,
            `${edge.relation_type_id} 不是 ${knId} 的关系类型`,
          ),
        });
        return undefined;
      }
      if (edge.source_object_type_id !== from || edge.target_object_type_id !== to) {
        violations.push({
          field: `${at}.relation_types[${i}]`,
          description: text(
            `edge ${i} must go from object_types[${i}] (${from}) to object_types[${i + 1}] (${to})`,
            `第 ${i} 条边必须从 object_types[${i}]（${from}）到 object_types[${i + 1}]（${to}）`,
          ),
        });
        return undefined;
      }
      // Forward when the walk follows the relation's own direction (always, for a self-relation).
      if (rel.sourceType === from && rel.targetType === to) return { rel, walk: rel.forward, back: rel.backward };
      if (rel.sourceType === to && rel.targetType === from) return { rel, walk: rel.backward, back: rel.forward };
      violations.push({
        field: `${at}.relation_types[${i}].relation_type_id`,
        description: text(
          `${rel.id} links ${rel.sourceType} and ${rel.targetType}, not ${from} and ${to}`,
          `${rel.id} 连接的是 ${rel.sourceType} 和 ${rel.targetType}，不是 ${from} 和 ${to}`,
        ),
      });
      return undefined;
    });
    if (violations.length > 0)
      throw invalid(
        "INVALID_SUBGRAPH_QUERY",
        text("invalid relation_type_paths query", "relation_type_paths 查询无效"),
        violations,
      );

    const ok = stores as ObjectStore[];
    const steps = edges as { rel: RelationIndex; walk: Map<number, number[]>; back: Map<number, number[]> }[];
    // Candidates per node (undefined: every instance), then keep only those on a complete path.
    const candidates: (Set<number> | undefined)[] = [];
    for (const [i, node] of path.object_types.entries()) {
      if (node.condition === undefined) {
        candidates.push(undefined);
        continue;
      }
      const where = `${at}.object_types[${i}].condition`;
      const matches = await evaluateCondition(ok[i]!, node.condition, this.scanBudget(ctx, ok[i]!), where);
      candidates.push(new Set(matches.rows));
    }
    const onPath: (Set<number> | undefined)[] = [];
    onPath[ok.length - 1] = candidates[ok.length - 1];
    for (let i = ok.length - 2; i >= 0; i--) {
      const next = onPath[i + 1];
      const mine = candidates[i];
      const keep = new Set<number>();
      if (next !== undefined) {
        for (const y of next)
          for (const x of steps[i]!.back.get(y) ?? []) if (mine === undefined || mine.has(x)) keep.add(x);
      } else if (mine !== undefined && mine.size < steps[i]!.walk.size) {
        for (const x of mine) if ((steps[i]!.walk.get(x)?.length ?? 0) > 0) keep.add(x);
      } else {
        for (const [x, ys] of steps[i]!.walk) if (ys.length > 0 && (mine === undefined || mine.has(x))) keep.add(x);
      }
      onPath[i] = keep;
    }
    const orderOf = (i: number, rows: Iterable<number>) => sortRows(ok[i]!, [...rows], path.object_types[i]!.sort);

    const objects: Record<string, SubgraphObject> = {};
    const relationPaths: SubgraphEntry["relation_paths"] = [];
    const seen = path.object_types.map(() => new Set<number>());
    const nodeLimits = path.object_types.map((node) => node.limit ?? DEFAULT_NODE_LIMIT);
    const pathLimit = path.limit ?? DEFAULT_PATH_LIMIT;
    const trail: number[] = [];
    const visit = (i: number, row: number): void => {
      if (relationPaths.length >= pathLimit) return;
      if (!seen[i]!.has(row) && seen[i]!.size >= nodeLimits[i]!) return;
      trail[i] = row;
      if (i === ok.length - 1) {
        trail.forEach((r, k) => {
          seen[k]!.add(r);
          const obj = subgraphObject(ok[k]!, r, withLogicParams);
          objects[obj._instance_id] = obj;
        });
        relationPaths.push({
          relations: steps.map((s, k) => ({
            relation_type_id: s.rel.id,
            relation_type_name: s.rel.name,
            source_object_id: ok[k]!.rows[trail[k]!]!._instance_id,
            target_object_id: ok[k + 1]!.rows[trail[k + 1]!]!._instance_id,
          })),
          length: steps.length,
        });
        return;
      }
      const allowed = onPath[i + 1];
      const next = (steps[i]!.walk.get(row) ?? []).filter((y) => allowed === undefined || allowed.has(y));
      for (const y of orderOf(i + 1, next)) visit(i + 1, y);
    };
    for (const start of orderOf(0, onPath[0] ?? ok[0]!.rows.keys())) {
      if (relationPaths.length >= pathLimit) break;
      visit(0, start);
    }
    const total = countPaths(
      onPath,
      steps.map((s) => s.walk),
    );
    return { objects, relation_paths: relationPaths, total_count: total };
  }

  private metricValue(n: Network, type: ObjectType, lp: LogicProperty, row: Row, params: Json | undefined): Json {
    const bundleLp = n.bundleTypes.get(type.id)!.logic_properties.find((p) => p.name === lp.name)!;
    const series = n.series.get(`${type.id}.${lp.name}`)?.get(pkKey(type, row)) ?? [];
    const labels: Record<string, string> = {};
    for (const k of type.primary_keys) labels[k] = String(row[k] ?? "");
    const value = evaluateMetric(
      { property: lp.name, unit_type: bundleLp.unit_type ?? "numUnit", unit: bundleLp.unit ?? "none" },
      series,
      labels,
      params,
      this.options.timeZone,
    );
    return value as unknown as Json;
  }

  private operatorValue(
    type: ObjectType,
    lp: LogicProperty,
    row: Row,
    params: Json | undefined,
    env: OperatorEnv,
  ): Json {
    const op = this.operators.get(lp.data_source.id);
    if (!op) {
      throw new ToolError({
        code: "failed_precondition",
        reason: "OPERATOR_NOT_AVAILABLE",
        message: text(
          `logic property ${lp.name} of ${type.id} uses operator ${lp.data_source.id}, which the embedded engine does not have`,
          `${type.id} 的逻辑属性 ${lp.name} 使用算子 ${lp.data_source.id}，而内置引擎没有这个算子`,
        ),
      });
    }
    const given = params !== null && typeof params === "object" && !Array.isArray(params) ? params : {};
    const call: OperatorCall = { header: {}, query: {}, path: {}, body: {} };
    const missing: string[] = [];
    for (const p of lp.parameters) {
      let value: Json | undefined;
      if (p.value_from === "input") value = given[p.name];
      else if (p.value_from === "property") value = row[String(p.value)] ?? null;
      else value = p.value ?? null;
      if (value === undefined) {
        missing.push(p.name);
        continue;
      }
      setAtPath(call[p.source || "body"], p.name, value);
    }
    if (missing.length > 0) {
      throw invalid(
        "MISSING_OPERATOR_PARAMS",
        text(
          `operator property ${lp.name} needs dynamic_params.${lp.name}.{${missing.join(", ")}}`,
          `算子属性 ${lp.name} 需要 dynamic_params.${lp.name}.{${missing.join(", ")}}`,
        ),
        missing.map((m) => ({
          field: `dynamic_params.${lp.name}.${m}`,
          description: text("required input parameter", "必填的输入参数"),
        })),
      );
    }
    return op.run(call, env);
  }

  private operatorEnv(n: Network): OperatorEnv {
    return {
      related: (relationTypeId, direction, objectTypeId, identity) => {
        const rel = n.relations.get(relationTypeId);
        const from = n.stores.get(objectTypeId);
        const i = from?.find(identity);
        if (!rel || i === undefined) return [];
        const to = n.stores.get(direction === "forward" ? rel.targetType : rel.sourceType)!;
        return ((direction === "forward" ? rel.forward : rel.backward).get(i) ?? []).map((j) => to.rows[j]!);
      },
      series: (objectTypeId, property, identity) => {
        const type = n.stores.get(objectTypeId)?.type;
        if (!type) return [];
        return n.series.get(`${objectTypeId}.${property}`)?.get(pkKey(type, identity)) ?? [];
      },
    };
  }
}

function buildNetwork(bundle: Bundle, origin: string): Network {
  const objectTypes: ObjectType[] = bundle.object_types.map((t) => ({
    id: t.id,
    name: t.name,
    comment: t.comment,
    tags: t.tags,
    primary_keys: t.primary_keys,
    display_key: t.display_key,
    data_properties: t.data_properties.map((p) => ({
      name: p.name,
      display_name: p.display_name,
      type: p.type,
      comment: p.comment,
      condition_operations: p.condition_operations ?? [],
    })),
    logic_properties: t.logic_properties.map((lp) => ({
      name: lp.name,
      display_name: lp.display_name,
      type: lp.type,
      comment: lp.comment,
      data_source: lp.data_source,
      parameters: lp.parameters.map((p) => ({ ...p, source: p.source ?? "" })),
    })),
  }));
  const stores = new Map(objectTypes.map((t) => [t.id, new ObjectStore(t, bundle.objects[t.id] ?? [])]));
  // Report the operations each property really allows (a declared list, or its type's defaults).
  for (const t of objectTypes) {
    for (const p of t.data_properties) p.condition_operations = [...stores.get(t.id)!.operationsOf(p.name)];
  }
  const relations = new Map<string, RelationIndex>();
  for (const r of bundle.relation_types) {
    const source = stores.get(r.source_object_type_id)!;
    const target = stores.get(r.target_object_type_id)!;
    const index: RelationIndex = {
      id: r.id,
      name: r.name,
      sourceType: source.type.id,
      targetType: target.type.id,
      forward: new Map(),
      backward: new Map(),
    };
    const link = (s: number, t: number) => {
      const out = index.forward.get(s) ?? [];
      if (!out.includes(t)) {
        out.push(t);
        index.forward.set(s, out);
        const back = index.backward.get(t) ?? [];
        back.push(s);
        index.backward.set(t, back);
      }
    };
    for (const [sk, tk] of bundle.relations[r.id] ?? []) {
      const s = source.findByKey(sk as Json);
      const t = target.findByKey(tk as Json);
      if (s === undefined || t === undefined) {
        throw new BundleError(
          `KN bundle ${origin}: relation ${r.id}: pair ${JSON.stringify([sk, tk])} names an instance that does not exist`,
        );
      }
      link(s, t);
    }
    if (r.mapping) {
      const { source_property, target_property } = r.mapping;
      source.rows.forEach((row, s) => {
        const v = row[source_property];
        if (v !== undefined && v !== null) for (const t of target.equalTo(target_property, v)) link(s, t);
      });
    }
    for (const list of [...index.forward.values(), ...index.backward.values()]) list.sort((a, b) => a - b);
    relations.set(r.id, index);
  }
  const series = new Map<string, Map<string, [number, number | null][]>>();
  for (const [key, byInstance] of Object.entries(bundle.metrics)) {
    series.set(
      key,
      new Map(Object.entries(byInstance).map(([pk, points]) => [pk, [...points].sort((a, b) => a[0] - b[0])])),
    );
  }
  const kn: KnowledgeNetwork = {
    id: bundle.knowledge_network.id,
    name: bundle.knowledge_network.name,
    comment: bundle.knowledge_network.comment,
    tags: bundle.knowledge_network.tags,
    object_types: objectTypes,
    relation_types: bundle.relation_types.map((r) => ({
      id: r.id,
      name: r.name,
      comment: r.comment,
      source_object_type_id: r.source_object_type_id,
      target_object_type_id: r.target_object_type_id,
    })),
    action_types: bundle.action_types.map((a) => ({
      id: a.id,
      name: a.name,
      action_type: a.action_type,
      object_type_id: a.object_type_id,
      comment: a.comment,
      tags: a.tags,
    })),
  };
  return {
    kn: deepFreeze(kn),
    bundleTypes: new Map(bundle.object_types.map((t) => [t.id, t])),
    stores,
    relations,
    series,
  };
}

function summary(kn: KnowledgeNetwork): KnowledgeNetworkSummary {
  return { id: kn.id, name: kn.name, comment: kn.comment, tags: kn.tags };
}

/** The key of an instance's series: its primary key value (composite keys joined as in `_instance_id`). */
function pkKey(type: ObjectType, row: Record<string, Json>): string {
  return type.primary_keys.map((k) => valueKey(row[k] ?? null)).join("_");
}

/*
 * Module functions rather than closures made per query: tsx keeps function
 * names, a defineProperty per closure, and kn_search sends a hundred queries.
 */

/** A row's sort key: its value of each sort field (`_score` from the scores), then its primary keys. */
function sortKeyOf(store: ObjectStore, sortKeys: SortField[], scores: Map<number, number>, i: number): Json[] {
  const row = store.rows[i]!;
  return [
    ...sortKeys.map((s) => (s.field === "_score" ? (scores.get(i) ?? 0) : (row[s.field] ?? null))),
    ...store.type.primary_keys.map((k) => row[k] ?? null),
  ];
}

function compareKeys(a: Json[], b: Json[], directions: readonly ("asc" | "desc")[]): number {
  for (let k = 0; k < a.length; k++) {
    const c = compareValues(a[k], b[k]);
    if (c !== 0) return directions[k] === "desc" ? -c : c;
  }
  return 0;
}

function sortKeysOf(store: ObjectStore, sort: SortField[] | undefined): SortField[] {
  const keys = sort ?? [{ field: "_score", direction: "desc" }];
  const bad = keys.filter((s) => s.field !== "_score" && !store.hasProperty(s.field));
  if (bad.length > 0) {
    throw invalid(
      "INVALID_QUERY",
      text("invalid sort", "排序无效"),
      bad.map((s) => ({
        field: "sort",
        description: text(
          `${s.field} is not a data property of ${store.type.id} (or _score)`,
          `${s.field} 不是 ${store.type.id} 的数据属性（也不是 _score）`,
        ),
      })),
    );
  }
  return keys;
}

function sortRows(store: ObjectStore, rows: number[], sort: SortField[] | undefined): number[] {
  if (sort === undefined || sort.length === 0) return rows.sort((a, b) => a - b);
  const keys = sortKeysOf(store, sort).filter((s) => s.field !== "_score");
  return rows.sort((a, b) => {
    for (const s of keys) {
      const c = compareValues(store.rows[a]![s.field], store.rows[b]![s.field]);
      if (c !== 0) return s.direction === "desc" ? -c : c;
    }
    return a - b;
  });
}

function projectionOf(store: ObjectStore, properties: string[] | undefined): string[] {
  if (properties === undefined) return store.type.data_properties.map((p) => p.name);
  const bad = properties.filter((p) => !store.hasProperty(p));
  if (bad.length > 0) {
    throw invalid(
      "INVALID_QUERY",
      text("invalid properties", "属性无效"),
      bad.map((p) => ({
        field: "properties",
        description: text(`${p} is not a data property of ${store.type.id}`, `${p} 不是 ${store.type.id} 的数据属性`),
      })),
    );
  }
  return properties;
}

function project(row: Row, properties: string[]): Row {
  const out: Record<string, Json> = {};
  for (const p of properties) out[p] = row[p] ?? null;
  return { ...out, _instance_id: row._instance_id, _instance_identity: row._instance_identity, _display: row._display };
}

function subgraphObject(store: ObjectStore, i: number, withLogicParams: boolean): SubgraphObject {
  const row = store.rows[i]!;
  const properties: Record<string, Json> = {};
  for (const p of store.type.data_properties) properties[p.name] = row[p.name] ?? null;
  if (withLogicParams) Object.assign(properties, logicParamCells(store.type, row));
  return {
    _instance_id: row._instance_id,
    _instance_identity: row._instance_identity,
    _display: row._display,
    object_type_id: store.type.id,
    object_type_name: store.type.name,
    properties,
  };
}

function unknownObjectTypes(knId: string, ids: string[], n: Network): ToolError {
  return new ToolError({
    code: "not_found",
    reason: "OBJECT_TYPE_NOT_FOUND",
    message: text(
      `object type ${ids.join(", ")} does not exist in knowledge network ${knId}`,
      `知识网络 ${knId} 中不存在对象类型 ${ids.join(", ")}`,
    ),
    hint: {
      message: text("Use an object type id of this network.", "使用这个知识网络的对象类型id。"),
      validValues: [...n.stores.keys()],
    },
  });
}

function invalid(reason: string, what: Text, violations: FieldViolation[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason,
    message: text(
      `${what.en}: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
      `${what.zh}：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
    ),
    violations,
  });
}

function parseOr<S extends z.ZodType>(schema: S, value: unknown, reason: string): z.output<S> {
  const parsed = safeParseBoth(schema, value);
  if (parsed.success) return parsed.data;
  throw invalid(reason, text("invalid request", "请求无效"), violationsOf(parsed.error));
}
