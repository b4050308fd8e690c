import { z } from "zod";
import { ToolError } from "../../errors/tool-error";
import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import { MAX_OBJECT_LIMIT, type Condition, type InstanceIdentity, type ObjectQueryResult, type RelationTypePath, type Row, type SubgraphEntry, type SubgraphObject } from "../../kn/types";
import { type Json } from "../../core/json";
import { yaml } from "../schema/compact";
import { comparable } from "../../core/text";
import { keywordConditions, scoreCandidates, type MatchType, type ScoredInstance } from "../matching/keyword-matching";
import { unionOf, type KnowledgeSessions, type RecalledObjectType, type RecalledRelationType } from "../session";

/** Spec §4.2 step 5: at most 10 instances, 10 neighbours per relation type, 50 per instance. */
export const MAX_INSTANCES = 10;
export const MAX_NEIGHBORS_PER_RELATION = 10;
export const MAX_NEIGHBORS_PER_INSTANCE = 50;

const RETRIEVE_SCHEMA_RPC = "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema";

/** Input of knowledge_retrieve in keyword mode. Required fields are checked in the spec's order (see retrieveKeywordContext). */
export const keywordContextInput = z.object({
  query: z.string().trim().max(200, "query must be one keyword (at most 200 characters), not a question").default(""),
  kn_ids: z.array(z.object({ knowledge_network_id: z.string().trim().min(1, "knowledge_network_id is required") })).max(20).default([]),
  session_id: z.string().trim().max(256, "session_id must be at most 256 characters").default(""),
  object_type_id: z.string().trim().max(256, "object_type_id must be at most 256 characters").default(""),
  compact_format: z.boolean().default(true),
  session_type: z.enum(["", "redis", "in_memory"], { error: 'session_type must be "redis" or "in_memory"' }).default(""),
});
export type KeywordContextInput = z.output<typeof keywordContextInput>;

export interface KeywordDeps {
  backend: KnowledgeNetworkBackend;
  sessions: KnowledgeSessions;
  /** Candidates fetched before local scoring. */
  candidateLimit: number;
  /** Neighbour requests in flight at once, and paths per request. */
  concurrency: number;
  pathsPerRequest: number;
}

export interface NeighborContext {
  instance_id: string;
  object_type_id: string;
  instance_name: string;
  relation_type_id: string;
  relation_type_name: string;
  relation_direction: "outgoing" | "incoming";
  properties: Record<string, Json> | undefined;
  already_returned: boolean;
}

export interface InstanceContext {
  instance_id: string;
  object_type_id: string;
  instance_name: string;
  identity: InstanceIdentity;
  properties: Record<string, Json> | undefined;
  match_type: MatchType;
  score: number;
  matched_fields: string[];
  already_returned: boolean;
  neighbors: NeighborContext[];
}

export interface KeywordContextResult {
  session_id: string;
  keyword: string;
  object_type_id: string;
  matched_field: string;
  instances: InstanceContext[];
  statistics: { total_instances: number; total_neighbors: number; matched_fields: string[] };
  warnings: { target: string; reason: string; message: string }[];
  /** YAML of the context, when compact_format. */
  compact: string | undefined;
}

interface PlannedPath {
  instance: number;
  relation: RecalledRelationType;
  direction: "outgoing" | "incoming";
  /** Which node of the path holds the neighbour. */
  neighborNode: 0 | 1;
  path: RelationTypePath;
}

/**
 * Step two of the two-step retrieval (spec keyword-context-recall §4–§5): the
 * instances of one object type behind a keyword, and their one-hop neighbours
 * over the relation types recalled into the session, in two upstream round
 * trips — the instance queries in parallel, then every neighbour path in
 * batches — deduplicated against what the session already returned.
 */
export async function retrieveKeywordContext(deps: KeywordDeps, ctx: CallContext, input: KeywordContextInput): Promise<KeywordContextResult> {
  if (input.session_id === "") {
    throw new ToolError({
      code: "invalid_argument",
      reason: "SESSION_ID_REQUIRED",
      message: "session_id参数必须提供，用于存储和检索schema信息",
      violations: [{ field: "session_id", description: "required: the session of the earlier schema recall" }],
      hint: { message: "Pass the session_id that RetrieveSchema returned." },
    });
  }
  if (input.query === "") {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_ARGUMENT",
      message: "query必须是一个关键词，例如：上气道梗阻",
      violations: [{ field: "query", description: "required: one keyword taken from the question" }],
    });
  }
  if (comparable(input.query) === "") {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_ARGUMENT",
      message: "query必须是一个关键词：它只有标点或空白",
      violations: [{ field: "query", description: "has no letters or digits" }],
    });
  }
  const store = deps.sessions.pick(input.session_type);
  const rounds = await deps.sessions.rounds(store, ctx.caller, input.session_id);
  if (rounds.length === 0) {
    throw new ToolError({
      code: "failed_precondition",
      reason: "SCHEMA_NOT_IN_SESSION",
      message: "Schema信息不存在，请先调用enable_keyword_context=False召回schema",
      detail: { message: "请先调用knowledge_network_retrieval工具，设置enable_keyword_context=False召回schema", session_id: input.session_id },
      hint: { message: "Call RetrieveSchema with the full question and this session_id first, then call again.", nextRpc: RETRIEVE_SCHEMA_RPC },
    });
  }
  if (input.object_type_id === "") {
    throw new ToolError({
      code: "invalid_argument",
      reason: "OBJECT_TYPE_ID_REQUIRED",
      message: "object_type_id参数必须提供，用于指定关键词所属的对象类型",
      detail: {
        message: "当enable_keyword_context=True时，object_type_id参数必须提供。因为即使用关键词，但是有很多对象类型，你不知道这个关键词属于哪个对象类型。",
        suggestion: "请提供object_type_id参数，例如：object_type_id='person'",
      },
      violations: [{ field: "object_type_id", description: "required: the object type the keyword belongs to" }],
      hint: { message: "请提供object_type_id参数，例如：object_type_id='person'", validValues: [...new Set(unionOf(rounds).object_types.map((o) => o.id))] },
    });
  }
  const schema = unionOf(rounds);
  const wanted = new Set(input.kn_ids.map((k) => k.knowledge_network_id));
  const foreign = [...wanted].filter((k) => !schema.kn_ids.includes(k));
  if (foreign.length > 0) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "KN_NOT_IN_SESSION",
      message: `kn_ids ${foreign.join(", ")} 不在本会话召回的schema中；本会话的知识网络：${schema.kn_ids.join(", ")}`,
      violations: [{ field: "kn_ids", description: "must be networks of the session's schema" }],
      hint: { message: "Leave kn_ids out, or name networks the session's RetrieveSchema used.", validValues: schema.kn_ids },
    });
  }
  const matches = schema.object_types.filter((o) => o.id === input.object_type_id && (wanted.size === 0 || wanted.has(o.kn_id)));
  if (matches.length !== 1) {
    const valid = [...new Set(schema.object_types.map((o) => o.id))];
    throw new ToolError({
      code: "invalid_argument",
      reason: matches.length === 0 ? "OBJECT_TYPE_NOT_IN_SCHEMA" : "OBJECT_TYPE_AMBIGUOUS",
      message:
        matches.length === 0
          ? `object_type_id '${input.object_type_id}' 不在本会话召回的schema中；可用的对象类型：${valid.join(", ")}`
          : `object_type_id '${input.object_type_id}' 存在于多个知识网络（${matches.map((m) => m.kn_id).join(", ")}）中，请用kn_ids指定`,
      violations: [{ field: matches.length === 0 ? "object_type_id" : "kn_ids", description: matches.length === 0 ? "not in the session's schema" : "name the network" }],
      hint: {
        message:
          matches.length === 0
            ? "Use an object type of the session's schema, or recall the schema again with a question that covers this type."
            : "Pass kn_ids with the one network to search.",
        validValues: matches.length === 0 ? valid : matches.map((m) => m.kn_id),
        ...(matches.length === 0 ? { nextRpc: RETRIEVE_SCHEMA_RPC } : {}),
      },
    });
  }
  const ot = matches[0]!;
  const warnings: KeywordContextResult["warnings"] = [];

  // Round trip 1: exact and fuzzy instance queries side by side.
  const { candidates, total } = await findInstances(deps, ctx, ot, input.query, warnings);
  if (total > candidates.length && candidates.length >= deps.candidateLimit) {
    warnings.push({
      target: "instances",
      reason: "TOO_MANY_CANDIDATES",
      message: `${total} instances match '${input.query}'; the best of the first ${candidates.length} are returned. Use a more specific keyword to be sure of the best matches.`,
    });
  }
  const chosen = scoreCandidates(ot, input.query, candidates).slice(0, MAX_INSTANCES);

  // Round trip 2: every neighbour path, batched.
  const relations = schema.relation_types.filter((r) => r.kn_id === ot.kn_id && (r.source_object_type_id === ot.id || r.target_object_type_id === ot.id));
  const neighbors = chosen.length === 0 ? [] : await findNeighbors(deps, ctx, ot, chosen, relations, warnings);

  // Dedup by the whole identity, not the "_"-joined id: ("a_b","c") and ("a","b_c") differ.
  const instanceKey = (otId: string, identity: InstanceIdentity) => `${ot.kn_id}/${otId}/${identityKey(identity)}`;
  const keys = [
    ...chosen.map((c) => instanceKey(ot.id, c.row._instance_identity)),
    ...neighbors.flat().map((n) => instanceKey(n.object.object_type_id, n.object._instance_identity)),
  ];
  const fresh = keys.length === 0 ? new Set<string>() : await deps.sessions.claimReturned(store, ctx.caller, input.session_id, keys);

  const instances: InstanceContext[] = chosen.map((c, i) => {
    const id = instanceIdOf(c.row._instance_identity, ot.primary_keys);
    const full = fresh.has(instanceKey(ot.id, c.row._instance_identity));
    return {
      instance_id: id,
      object_type_id: ot.id,
      instance_name: displayOf(c.row._display, id),
      identity: c.row._instance_identity,
      properties: full ? propertiesOf(c.row) : undefined,
      match_type: c.match_type,
      score: c.score,
      matched_fields: c.matched_fields,
      already_returned: !full,
      neighbors: (neighbors[i] ?? []).map((n) => {
        const seen = !fresh.has(instanceKey(n.object.object_type_id, n.object._instance_identity));
        return {
          instance_id: n.id,
          object_type_id: n.object.object_type_id,
          instance_name: displayOf(n.object._display, n.id),
          relation_type_id: n.relation.id,
          relation_type_name: n.relation.name,
          relation_direction: n.direction,
          properties: seen ? undefined : n.object.properties,
          already_returned: seen,
        };
      }),
    };
  });
  const matchedFields = [...new Set(chosen.flatMap((c) => c.matched_fields))];
  const result: KeywordContextResult = {
    session_id: input.session_id,
    keyword: input.query,
    object_type_id: ot.id,
    matched_field: chosen[0]?.matched_fields[0] ?? "",
    instances,
    statistics: { total_instances: total, total_neighbors: instances.reduce((n, i) => n + i.neighbors.length, 0), matched_fields: matchedFields },
    warnings,
    compact: undefined,
  };
  if (input.compact_format) result.compact = compactContext(result);
  ctx.log.info(
    { session_id: input.session_id, object_type_id: ot.id, instances: instances.length, match: chosen[0]?.match_type ?? "none", neighbors: result.statistics.total_neighbors, warnings: warnings.length },
    "keyword context recalled",
  );
  return result;
}

async function findInstances(
  deps: KeywordDeps,
  ctx: CallContext,
  ot: RecalledObjectType,
  keyword: string,
  warnings: KeywordContextResult["warnings"],
): Promise<{ candidates: Row[]; total: number }> {
  const { exact, fuzzy } = keywordConditions(ot, keyword, deps.candidateLimit);
  if (!exact && !fuzzy) {
    throw new ToolError({
      code: "failed_precondition",
      reason: "OBJECT_TYPE_NOT_SEARCHABLE",
      message: `no property of object type ${ot.id} supports a text condition (==, like, match or knn), so a keyword cannot be looked up in it`,
      hint: { message: "Search another object type of the session's schema." },
    });
  }
  const ask = (condition: Condition | undefined, limit: number): Promise<ObjectQueryResult | undefined> =>
    condition ? deps.backend.queryObjects(ctx, ot.kn_id, ot.id, { condition, limit, need_total: true }) : Promise.resolve(undefined);
  const [exactResult, fuzzyResult] = await Promise.allSettled([ask(exact, MAX_INSTANCES), ask(fuzzy, deps.candidateLimit)]);
  const failed = (r: PromiseSettledResult<unknown>, what: string) => {
    if (r.status === "fulfilled") return false;
    if (!(r.reason instanceof ToolError)) throw r.reason;
    warnings.push({ target: `instances:${what}`, reason: r.reason.reason, message: `the ${what} lookup of ${ot.id} failed: ${r.reason.message}` });
    return true;
  };
  const exactFailed = failed(exactResult, "exact");
  const fuzzyFailed = failed(fuzzyResult, "fuzzy");
  const exactRows = exactResult.status === "fulfilled" ? exactResult.value : undefined;
  // Exact matches win; only when there are none do the fuzzy ones count (spec §1.3).
  if (exactRows && exactRows.datas.length > 0) return { candidates: exactRows.datas, total: exactRows.total_count ?? exactRows.datas.length };
  if (fuzzyResult.status === "fulfilled" && fuzzyResult.value) {
    return { candidates: fuzzyResult.value.datas, total: fuzzyResult.value.total_count ?? fuzzyResult.value.datas.length };
  }
  // Nothing answered that could tell "no match" from "could not look": that is an error, not an empty result.
  if (exactFailed || fuzzyFailed) {
    throw ((fuzzyFailed ? fuzzyResult : exactResult) as PromiseRejectedResult).reason;
  }
  return { candidates: [], total: 0 };
}

interface FoundNeighbor {
  id: string;
  object: SubgraphObject;
  relation: RecalledRelationType;
  direction: "outgoing" | "incoming";
}

async function findNeighbors(
  deps: KeywordDeps,
  ctx: CallContext,
  ot: RecalledObjectType,
  chosen: readonly ScoredInstance[],
  relations: readonly RecalledRelationType[],
  warnings: KeywordContextResult["warnings"],
): Promise<FoundNeighbor[][]> {
  const plans: PlannedPath[] = [];
  chosen.forEach((c, instance) => {
    const self: PlannedPath["path"]["object_types"][number] = { id: ot.id, condition: identityCondition(c.row._instance_identity), limit: 1 };
    for (const r of relations) {
      const edge = (from: string, to: string) => [{ relation_type_id: r.id, source_object_type_id: from, target_object_type_id: to }];
      if (r.source_object_type_id === ot.id) {
        plans.push({
          instance, relation: r, direction: "outgoing", neighborNode: 1,
          path: { object_types: [self, { id: r.target_object_type_id, limit: MAX_NEIGHBORS_PER_RELATION }], relation_types: edge(ot.id, r.target_object_type_id), limit: MAX_NEIGHBORS_PER_RELATION },
        });
      }
      if (r.target_object_type_id === ot.id) {
        // Start at the matched instance and walk the edge backward; a self-relation
        // cannot say "backward", so its incoming side puts the instance at the end.
        const path: RelationTypePath =
          r.source_object_type_id === ot.id
            ? // No limit of 10 on the first node: a platform applying it before the path filter would keep 10 unrelated objects.
              { object_types: [{ id: ot.id, limit: MAX_OBJECT_LIMIT }, self], relation_types: edge(ot.id, ot.id), limit: MAX_NEIGHBORS_PER_RELATION }
            : { object_types: [self, { id: r.source_object_type_id, limit: MAX_NEIGHBORS_PER_RELATION }], relation_types: edge(ot.id, r.source_object_type_id), limit: MAX_NEIGHBORS_PER_RELATION };
        plans.push({ instance, relation: r, direction: "incoming", neighborNode: r.source_object_type_id === ot.id ? 0 : 1, path });
      }
    }
  });
  const batches: PlannedPath[][] = [];
  for (let i = 0; i < plans.length; i += deps.pathsPerRequest) batches.push(plans.slice(i, i + deps.pathsPerRequest));
  const results = await settleWithLimit(batches, deps.concurrency, ctx.signal, (batch) =>
    deps.backend.querySubgraph(ctx, ot.kn_id, { relation_type_paths: batch.map((p) => p.path) }),
  );
  const found: FoundNeighbor[][] = chosen.map(() => []);
  const failedBatches = results.filter((r) => r.status === "rejected");
  if (failedBatches.length === batches.length && batches.length > 0) {
    const reason = (failedBatches[0] as PromiseRejectedResult).reason;
    if (!(reason instanceof ToolError)) throw reason;
    warnings.push({ target: "neighbors", reason: reason.reason, message: `no neighbour could be read: ${reason.message}` });
  }
  results.forEach((r, b) => {
    const batch = batches[b]!;
    if (r.status === "rejected") {
      if (!(r.reason instanceof ToolError)) throw r.reason;
      if (failedBatches.length < batches.length) {
        const what = [...new Set(batch.map((p) => `${p.relation.id} (${p.direction})`))].join(", ");
        warnings.push({ target: `neighbors:${what}`, reason: r.reason.reason, message: `neighbours over ${what} of ${new Set(batch.map((p) => p.instance)).size} instance(s) could not be read: ${r.reason.message}` });
      }
      return;
    }
    batch.forEach((plan, k) => {
      const entry: SubgraphEntry | undefined = r.value.entries[k];
      const list = found[plan.instance]!;
      const self = chosen[plan.instance]!.row._instance_id;
      for (const p of entry?.relation_paths ?? []) {
        if (list.length >= MAX_NEIGHBORS_PER_INSTANCE) break;
        const rel = p.relations[0];
        if (!rel) continue;
        const [mine, theirs] = plan.neighborNode === 1 ? [rel.source_object_id, rel.target_object_id] : [rel.target_object_id, rel.source_object_id];
        const object = entry!.objects[theirs];
        if (mine !== self || !object) continue;
        const id = instanceIdOf(object._instance_identity, Object.keys(object._instance_identity));
        if (list.some((n) => n.id === id && n.object.object_type_id === object.object_type_id && n.relation.id === plan.relation.id && n.direction === plan.direction)) continue;
        list.push({ id, object, relation: plan.relation, direction: plan.direction });
      }
    });
  });
  return found;
}

/** An identity as a stable string: its keys sorted, values JSON-encoded. */
function identityKey(identity: InstanceIdentity): string {
  return JSON.stringify(Object.keys(identity).sort().map((k) => [k, identity[k]]));
}

/** A condition selecting exactly this instance: every primary key equal. */
function identityCondition(identity: InstanceIdentity): Condition {
  const leaves: Condition[] = Object.entries(identity).map(([field, value]) => ({ field, operation: "==", value, value_from: "const" }));
  return leaves.length === 1 ? leaves[0]! : { operation: "and", sub_conditions: leaves };
}

/** The instance id the spec uses: the primary key value (composite keys joined by "_"). */
function instanceIdOf(identity: InstanceIdentity, primaryKeys: readonly string[]): string {
  const keys = primaryKeys.length > 0 ? primaryKeys : Object.keys(identity);
  return keys.map((k) => String(identity[k] ?? "")).join("_");
}

function displayOf(display: Json, fallback: string): string {
  return display === null || display === undefined || display === "" ? fallback : String(display);
}

function propertiesOf(row: Row): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(row)) if (!k.startsWith("_")) out[k] = v;
  return out;
}

/** The context as YAML: instances with their properties, neighbours grouped by relation and direction (with their properties the first time). */
function compactContext(r: KeywordContextResult): string {
  return yaml({
    keyword: r.keyword,
    object_type_id: r.object_type_id,
    matched_field: r.matched_field,
    instances: r.instances.map((i) => {
      const groups: Record<string, unknown[]> = {};
      for (const n of i.neighbors) {
        const label = `${n.relation_type_id} ${n.relation_type_name} (${n.relation_direction})`;
        const line = `${n.instance_name} [${n.object_type_id}:${n.instance_id}]`;
        // Properties beyond the id and the name are worth their tokens; the rest is in the line.
        const extra = Object.entries(n.properties ?? {}).filter(([, v]) => v !== null && v !== "" && v !== n.instance_id && v !== n.instance_name);
        (groups[label] ??= []).push(n.already_returned ? `${line} (already returned)` : extra.length > 0 ? { [line]: Object.fromEntries(extra) } : line);
      }
      return {
        instance_id: i.instance_id,
        instance_name: i.instance_name,
        match: `${i.match_type} ${i.score} ${i.matched_fields.join(",")}`.trim(),
        ...(i.already_returned ? { already_returned: true } : { properties: i.properties }),
        ...(Object.keys(groups).length > 0 ? { neighbors: groups } : {}),
      };
    }),
    statistics: r.statistics,
    ...(r.warnings.length > 0 ? { warnings: r.warnings.map((w) => w.message) } : {}),
  });
}
