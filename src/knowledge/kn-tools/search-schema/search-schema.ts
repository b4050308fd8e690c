import type { CallContext } from "../../../core/call-context";
import { topIndexes } from "../../../core/scores";
import { type Language, text } from "../../../errors/text";
import { type FieldViolation, ToolError } from "../../../errors/tool-error";
import type { ConceptHit, ConceptKind } from "../../../kn/concepts";
import { knIdOf } from "../../../kn/kn-id";
import type { ActionType, KnowledgeNetwork, ObjectType, RelationType } from "../../../kn/types";
import { coarseNetwork } from "../../kn-search/coarse-recall";
import { conceptRetrievalInput } from "../../kn-search/input";
import { type Candidate, type Ranking, rankWithoutLlm } from "../../relevance/rank";
import { objectCandidate, relationCandidate } from "../../schema/retrieve-schema";
import type { SearchSchemaInput } from "./input";
import { type RecalledMetric, recallMetrics } from "./metrics";
import { RELEVANCE_FLOOR, relevanceScores } from "./relevance-floor";
import { textSearchCondition } from "./text-condition";
import type { SchemaWarning, SearchSchemaDeps } from "./types";

export type RankingMethod = "reranker" | "embedding_lexical" | "network_order";

export interface SearchSchemaResult {
  kn_id: string;
  /** Full definitions; the brief form is the encoders' business. */
  object_types: ObjectType[];
  relation_types: RelationType[];
  action_types: (ActionType & { object_type_name: string })[];
  metric_types: RecalledMetric[];
  ranking_method: RankingMethod;
  schema_brief: boolean;
  /** How well the returned relation and object types fit the question: the best relevanceScores of them. */
  relevance: number;
  warnings: SchemaWarning[];
}

/** The platform tool's limits for the typed searches within concept groups. */
const GROUP_LIMITS = { object_types: 2000, relation_types: 300, action_types: 2000 } as const;
/**
 * Coarse recall with kn_search's defaults: a network of at least 5000
 * relation types is narrowed by the question's words to 300 relation types
 * and 2000 object types before the finer ranking sees it.
 */
const COARSE = conceptRetrievalInput.parse({});

/** What recall ranks: candidate types in the network's (or the platform search's) order, and every definition read. */
interface Pool {
  object_types: ObjectType[];
  relation_types: RelationType[];
  action_types: ActionType[];
  /** Every object type read (candidates, relation ends, action types' types), by id. */
  types: Map<string, ObjectType>;
}

/**
 * search_schema: the object, relation, action and metric types relevant to a
 * question, schema only. Recall reads the whole network (narrowed first by
 * coarse recall when it is large) or, with concept groups, the platform's
 * typed searches within them; relation, object and action types are ranked
 * against the question (the reranker when configured, else embeddings and
 * words; a failing reranker is a warning) unless enable_rerank is false. The
 * answer: the max_concepts best relation types; the object types at their
 * ends (never cut), then the best others up to max_concepts; the best action
 * types of those object types; the metrics matching the question or scoped to
 * those object types. search_scope's include flags only choose what is shown.
 * When none of the relation and object types returned fits the question
 * (relevance under RELEVANCE_FLOOR), a NO_RELEVANT_CONCEPT warning says so.
 */
export async function searchSchema(
  deps: SearchSchemaDeps,
  ctx: CallContext,
  input: SearchSchemaInput,
): Promise<SearchSchemaResult> {
  const knId = knIdOf(input.kn_id, ctx);
  const scope = input.search_scope;
  const max = input.max_concepts;
  const groups = scope.concept_groups;
  const pool =
    groups.length > 0
      ? await groupPool(deps, ctx, knId, input.query, groups)
      : await networkPool(deps, ctx, knId, input.query);
  const named: KnowledgeNetwork = {
    id: knId,
    name: "",
    comment: "",
    tags: [],
    object_types: [...pool.types.values()],
    relation_types: pool.relation_types,
    action_types: pool.action_types,
  };
  const rank = (candidates: Candidate[]): Promise<Ranking | undefined> =>
    input.enable_rerank && candidates.length > 0
      ? rankWithoutLlm(ctx, input.query, candidates, deps)
      : Promise.resolve(undefined);
  const [relations, objects, actions] = await Promise.all([
    rank(pool.relation_types.map((r) => relationCandidate(named, r))),
    rank(pool.object_types.map(objectCandidate)),
    rank(pool.action_types.map((a) => actionCandidate(a, pool.types.get(a.object_type_id)))),
  ]);
  const order = (n: number, ranking: Ranking | undefined) =>
    ranking ? topIndexes(ranking.scores, n) : Array.from({ length: n }, (_, i) => i);

  // Relation types, then the object types at their ends (all of them), then the best others up to max.
  const keptRelations = order(pool.relation_types.length, relations)
    .slice(0, max)
    .map((i) => pool.relation_types[i]!);
  const selected = new Set<string>();
  for (const r of keptRelations)
    for (const end of [r.source_object_type_id, r.target_object_type_id]) selected.add(end);
  for (const i of order(pool.object_types.length, objects)) {
    if (selected.size >= max) break;
    selected.add(pool.object_types[i]!.id);
  }
  // Without relation types in the answer, no end has to be kept for completeness.
  const objectIds = scope.include_relation_types ? [...selected] : [...selected].slice(0, max);
  const keptActions = order(pool.action_types.length, actions)
    .map((i) => pool.action_types[i]!)
    .filter((a) => selected.has(a.object_type_id))
    .slice(0, max);

  const warnings = rankingWarnings(pool, { relations, objects, actions });
  // Ranking always puts something first; whether anything fits is judged on its own scale.
  const fit = await relevanceScores(ctx, input.query, [
    ...keptRelations.map((r) => relationCandidate(named, r)),
    ...objectIds.map((id) => objectCandidate(pool.types.get(id)!)),
  ]);
  const relevance = Math.max(0, ...fit);
  if (relevance < RELEVANCE_FLOOR) warnings.push(nothingFits(knId, relevance, ctx.language));
  let metricTypes: RecalledMetric[] = [];
  if (scope.include_metric_types) {
    const recalled = await recallMetrics(deps, ctx, {
      query: input.query,
      knId,
      conceptGroups: groups,
      max,
      objectTypeIds: objectIds,
      types: pool.types,
      rank: input.enable_rerank,
    });
    metricTypes = recalled.metrics;
    warnings.push(...recalled.warnings);
  }
  const primary = pool.relation_types.length > 0 ? relations : objects;
  return {
    kn_id: knId,
    object_types: scope.include_object_types ? objectIds.map((id) => pool.types.get(id)!) : [],
    relation_types: scope.include_relation_types ? keptRelations : [],
    action_types: scope.include_action_types
      ? keptActions.map((a) => ({ ...a, object_type_name: pool.types.get(a.object_type_id)?.name ?? "" }))
      : [],
    metric_types: metricTypes,
    ranking_method: !input.enable_rerank
      ? "network_order"
      : ((primary?.method as RankingMethod | undefined) ?? (deps.reranker ? "reranker" : "embedding_lexical")),
    schema_brief: input.schema_brief,
    relevance,
    warnings: dedupe(warnings),
  };
}

/** The whole network, narrowed by coarse recall when it has many relation types. */
async function networkPool(deps: SearchSchemaDeps, ctx: CallContext, knId: string, query: string): Promise<Pool> {
  const full = await deps.backend.getKnowledgeNetwork(ctx, knId);
  const kn = coarseNetwork(full, query, COARSE, deps.descriptions);
  if (kn !== full) {
    ctx.log.info(
      {
        kn_id: knId,
        relation_types: [full.relation_types.length, kn.relation_types.length],
        object_types: [full.object_types.length, kn.object_types.length],
      },
      "coarse recall narrowed the network",
    );
  }
  return {
    object_types: kn.object_types,
    relation_types: kn.relation_types,
    action_types: kn.action_types,
    types: new Map(full.object_types.map((t) => [t.id, t])),
  };
}

/**
 * Within concept groups: the groups checked against the network's (an unknown
 * one is NOT_FOUND naming those that exist), then the platform's typed
 * searches for the question in them, and the definitions of relation ends and
 * action types' object types the object search did not return.
 */
async function groupPool(
  deps: SearchSchemaDeps,
  ctx: CallContext,
  knId: string,
  query: string,
  groups: string[],
): Promise<Pool> {
  const known = await deps.backend.listConceptGroups(ctx, knId);
  const ids = new Set(known.map((g) => g.id));
  const violations: FieldViolation[] = groups.flatMap((g, i) =>
    ids.has(g)
      ? []
      : [
          {
            field: `search_scope.concept_groups[${i}]`,
            description: text(`${g} is not a concept group of ${knId}`, `${g} 不是 ${knId} 的概念分组`),
          },
        ],
  );
  if (violations.length > 0) {
    const list = known.map((g) => `${g.id} (${g.name})`).join(", ");
    throw new ToolError({
      code: "not_found",
      reason: "CONCEPT_GROUP_NOT_FOUND",
      message: text(
        `concept group ${groups.filter((g) => !ids.has(g)).join(", ")} does not exist in knowledge network ${knId}; ${known.length > 0 ? `its concept groups are: ${list}` : "it has no concept groups"}`,
        `知识网络 ${knId} 中不存在概念分组 ${groups.filter((g) => !ids.has(g)).join(", ")}；${known.length > 0 ? `它的概念分组有：${list}` : "它没有概念分组"}`,
      ),
      violations,
      hint: {
        message:
          known.length > 0
            ? text(
                "Use concept group ids from valid_values, or leave search_scope.concept_groups empty to search the whole network.",
                "使用 valid_values 中的概念分组id，或让 search_scope.concept_groups 为空以搜索整个知识网络。",
              )
            : text(
                "Leave search_scope.concept_groups empty: this network has no concept groups.",
                "让 search_scope.concept_groups 为空：这个知识网络没有概念分组。",
              ),
        validValues: known.map((g) => g.id),
      },
    });
  }
  const search = <K extends ConceptKind>(kind: K, limit: number): Promise<ConceptHit<K>[]> =>
    deps.backend.searchConcepts(ctx, knId, kind, {
      condition: textSearchCondition(query, limit),
      concept_groups: groups,
      limit,
    });
  const [objects, relations, actions] = await Promise.all([
    search("object_types", GROUP_LIMITS.object_types),
    search("relation_types", GROUP_LIMITS.relation_types),
    search("action_types", GROUP_LIMITS.action_types),
  ]);
  const types = new Map<string, ObjectType>(objects.map((o) => [o.id, withoutScore(o)]));
  const missing = [
    ...new Set([
      ...relations.flatMap((r) => [r.source_object_type_id, r.target_object_type_id]),
      ...actions.map((a) => a.object_type_id),
    ]),
  ].filter((id) => !types.has(id));
  for (const t of missing.length > 0 ? await deps.backend.getObjectTypes(ctx, knId, missing) : []) types.set(t.id, t);
  return {
    object_types: objects.map(withoutScore),
    relation_types: relations.map(withoutScore),
    action_types: actions.map(withoutScore),
    types,
  };
}

function actionCandidate(a: ActionType, type: ObjectType | undefined): Candidate {
  return {
    text: `${a.name} ${a.comment} ${a.tags.join(" ")} ${type?.name ?? a.object_type_id}`,
    names: [a.name, a.id],
  };
}

/**
 * The rankings' warnings: a failing reranker (once), and "nothing told the
 * candidates apart" for the ranking the answer leans on (relation types, or
 * object types in a network without relations).
 */
function rankingWarnings(
  pool: Pool,
  r: { relations: Ranking | undefined; objects: Ranking | undefined; actions: Ranking | undefined },
): SchemaWarning[] {
  const primary = pool.relation_types.length > 0 ? "relations" : "objects";
  return (["relations", "objects", "actions"] as const).flatMap((kind) =>
    (r[kind]?.warnings ?? [])
      .filter((w) => w.reason !== "NO_RELEVANCE_SIGNAL" || kind === primary)
      .map((w) =>
        w.target === "ranking" ? { ...w, target: kind === "relations" ? "relation_types" : "object_types" } : w,
      ),
  );
}

/**
 * The answer's types are the network's closest to the question, but none
 * fits it: most likely a question about another domain. The four buckets
 * stay as the contract has them (a fitting question worded unlike the
 * schema scores low too); the warning tells the agent not to build on them.
 */
function nothingFits(knId: string, relevance: number, language: Language): SchemaWarning {
  return {
    target: "query",
    reason: "NO_RELEVANT_CONCEPT",
    message: text(
      `nothing in knowledge network ${knId} fits this question: the best of the types returned scores ${relevance} for relevance, below the ${RELEVANCE_FLOOR} that questions about this network reach, so they are its closest types but probably unrelated. If the question is about another domain, it needs a knowledge network of that domain (kn_id); if it is about this one, rephrase it with the names of its entities and relations.`,
      `知识网络 ${knId} 中没有适合这个问题的内容：返回的类型中最好的相关度为 ${relevance}，低于关于这个知识网络的问题能达到的 ${RELEVANCE_FLOOR}，所以它们只是这个网络中最接近的类型，但很可能不相关。如果问题属于另一个领域，需要那个领域的知识网络（kn_id）；如果属于这个领域，请用它的实体和关系的名称重新表述问题。`,
    )[language],
  };
}

function dedupe(warnings: SchemaWarning[]): SchemaWarning[] {
  const seen = new Set<string>();
  return warnings.filter((w) => {
    const key = `${w.target}\u0000${w.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function withoutScore<T extends object>(hit: T & { _score?: number }): T {
  const { _score, ...rest } = hit;
  return rest as T;
}
