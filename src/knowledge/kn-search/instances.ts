import { ToolError } from "../../errors/tool-error";
import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import type { Embedder } from "../../upstream/embeddings";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import type { Condition, DataProperty, LeafCondition, ObjectQueryResult, Row } from "../../kn/types";
import type { Json } from "../../core/json";
import { comparable } from "../../core/text";
import { round3 } from "../../core/scores";
import { keywordVariants } from "../matching/keyword-matching";
import type { RecalledObjectType } from "../session";
import type { PropertyFilterConfig, SemanticInstanceConfig } from "./input";
import { fuse, instanceRelevance, keywordOf, type Keyword, type WeightedField } from "../matching/instance-scoring";
import { semanticRelevance } from "../relevance/semantic";
import type { KnNode, KnWarning } from "./answer";

/** Properties whose values are text: only these are searched by keyword. */
const TEXT_TYPES = /char|text|string|keyword/i;
/**
 * Text operations, in the order one is chosen for a (property, word) pair:
 * full-text `match` where the property has a full-text index (it finds the
 * words in any order and scores them), else `like` (contains).
 */
const TEXT_OPERATIONS = ["match", "like"] as const;
/** Object types searched at once (each one query, or two). */
const TYPE_CONCURRENCY = 5;
/** A match outside the instance's name counts this much. */
const OTHER_FIELD_WEIGHT = 0.85;
/** What full-text or vector search alone (no word in common) is worth at most. */
const SEMANTIC_WEIGHT = 0.45;

export interface InstanceDeps {
  backend: KnowledgeNetworkBackend;
  embedder: Embedder;
}

export interface InstanceRecall {
  /** Best first, after every filter. */
  nodes: KnNode[];
  /** The object types that could be searched. */
  searched: string[];
  warnings: KnWarning[];
}

interface Scored {
  ot: RecalledObjectType;
  row: Row;
  direct: number;
  final: number;
}

/**
 * Semantic instance recall over the object types concept recall chose: for
 * each type, the text properties most relevant to the query are searched
 * (semantic_field_keep_ratio of them, within keep_min..keep_max, the display
 * key always), every keyword and its words with the operations each property
 * supports, in at most max_semantic_sub_conditions sub-conditions, for
 * initial_candidate_count candidates — plus an exact lookup of the keywords
 * on the display key, so an exact name is never crowded out. Candidates are
 * scored locally (instance-scoring.ts); those below min_direct_relevance go,
 * per_type_instance_limit stay per type, and with the global filter those
 * below global_final_score_ratio × the best final_score go. The types are
 * searched side by side; a type that cannot be read is a warning, all of
 * them failing an error.
 */
export async function recallInstances(
  deps: InstanceDeps,
  ctx: CallContext,
  types: readonly RecalledObjectType[],
  query: { question: string; keywords: string[] },
  cfg: SemanticInstanceConfig,
  filter: PropertyFilterConfig,
): Promise<InstanceRecall> {
  const keywords = query.keywords.map(keywordOf);
  const plans = await planSearches(deps, ctx, types, query, keywords, cfg);
  const warnings: KnWarning[] = [];
  const results = await settleWithLimit(plans, TYPE_CONCURRENCY, ctx.signal, (plan) => search(deps, ctx, plan, cfg));
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length > 0 && failed.length === results.length) throw (failed[0] as PromiseRejectedResult).reason;

  let scored: Scored[] = [];
  results.forEach((r, i) => {
    const plan = plans[i]!;
    if (r.status === "rejected") {
      if (!(r.reason instanceof ToolError)) throw r.reason;
      warnings.push({ target: `instances:${plan.ot.id}`, reason: r.reason.reason, message: `the instances of ${plan.ot.id} could not be searched: ${r.reason.message}` });
      return;
    }
    scored.push(...score(plan, r.value, keywords, cfg));
  });
  if (cfg.enable_global_final_score_ratio_filter && scored.length > 0) {
    const threshold = Math.max(...scored.map((s) => s.final)) * cfg.global_final_score_ratio;
    scored = scored.filter((s) => s.final >= threshold);
  }
  const order = new Map(types.map((t, i) => [`${t.kn_id}/${t.id}`, i]));
  scored.sort(
    (a, b) =>
      b.final - a.final ||
      order.get(`${a.ot.kn_id}/${a.ot.id}`)! - order.get(`${b.ot.kn_id}/${b.ot.id}`)! ||
      nameOf(a).length - nameOf(b).length ||
      (a.row._instance_id < b.row._instance_id ? -1 : 1),
  );
  return { nodes: scored.map((s) => nodeOf(s, filter)), searched: plans.map((p) => p.ot.id), warnings };
}

interface SearchPlan {
  ot: RecalledObjectType;
  fields: WeightedField[];
  fuzzy: Condition | undefined;
  exact: Condition | undefined;
}

/** Chooses each type's properties to search (one relevance pass for all types) and builds its conditions. */
async function planSearches(
  deps: InstanceDeps,
  ctx: CallContext,
  types: readonly RecalledObjectType[],
  query: { question: string },
  keywords: readonly Keyword[],
  cfg: SemanticInstanceConfig,
): Promise<SearchPlan[]> {
  const searchable = types.map((ot) =>
    ot.data_properties.filter((p) => TEXT_TYPES.test(p.type) && p.condition_operations.some((op) => op === "like" || op === "match" || op === "knn" || op === "==")),
  );
  const descriptions = searchable.flatMap((props) => props.map((p) => `${p.name} ${p.display_name} ${p.comment}`));
  const relevance = await semanticRelevance(ctx, deps.embedder, query.question, descriptions, cfg.semantic_field_rerank_batch_size);
  let offset = 0;
  const plans: SearchPlan[] = [];
  types.forEach((ot, t) => {
    const props = searchable[t]!;
    const scores = relevance.slice(offset, offset + props.length);
    offset += props.length;
    if (props.length === 0) return;
    const keep = Math.min(props.length, Math.max(cfg.semantic_field_keep_min, Math.min(cfg.semantic_field_keep_max, Math.ceil(cfg.semantic_field_keep_ratio * props.length))));
    // The display key (the instance's name) first, then the most relevant; ties keep the schema's order.
    const ranked = props
      .map((p, i) => ({ p, s: p.name === ot.display_key ? Infinity : scores[i]!, i }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .slice(0, keep)
      .map(({ p }) => p);
    plans.push({
      ot,
      fields: ranked.map((p) => ({ name: p.name, weight: p.name === ot.display_key ? 1 : OTHER_FIELD_WEIGHT })),
      fuzzy: fuzzyCondition(ranked, keywords, cfg.max_semantic_sub_conditions, cfg.initial_candidate_count),
      exact: exactCondition(ot, keywords),
    });
  });
  return plans;
}

/**
 * The candidates' query: every (property, term) pair, the terms being each
 * keyword and then its words, pairs nearest the top of both lists first (the
 * name with the whole keyword first of all), until max_semantic_sub_conditions.
 * Each pair uses `match` (full text) or else `like` (contains), whichever the
 * property supports; a property with `knn` is also asked by meaning for each
 * whole keyword (its k nearest, k being the candidates wanted); one with only
 * `==` is asked for the whole keyword.
 */
function fuzzyCondition(fields: readonly DataProperty[], keywords: readonly Keyword[], max: number, candidates: number): Condition | undefined {
  const terms = [...new Set([...keywords.map((k) => k.text), ...keywords.flatMap((k) => k.tokens)])];
  const whole = new Set(keywords.map((k) => k.text));
  const pairs: { leaf: LeafCondition; rank: number; field: number }[] = [];
  fields.forEach((p, i) => {
    const ops = new Set(p.condition_operations);
    const textOp = TEXT_OPERATIONS.find((op) => ops.has(op));
    terms.forEach((term, j) => {
      if (textOp) pairs.push({ leaf: { field: p.name, operation: textOp, value: term, value_from: "const" }, rank: i + j, field: i });
      else if (ops.has("==") && whole.has(term)) pairs.push({ leaf: { field: p.name, operation: "==", value: term, value_from: "const" }, rank: i + j, field: i });
      if (ops.has("knn") && whole.has(term)) pairs.push({ leaf: { field: p.name, operation: "knn", value: term, limit_key: "k", limit_value: candidates, value_from: "const" }, rank: i + j, field: i });
    });
  });
  const leaves = pairs
    .sort((a, b) => a.rank - b.rank || a.field - b.field)
    .slice(0, max)
    .map((p) => p.leaf);
  if (leaves.length === 0) return undefined;
  return leaves.length === 1 ? leaves[0]! : { operation: "or", sub_conditions: leaves };
}

/** The display key equal to a keyword, in the forms it may be stored in (as typed, half-width, full-width). */
function exactCondition(ot: RecalledObjectType, keywords: readonly Keyword[]): Condition | undefined {
  const display = ot.data_properties.find((p) => p.name === ot.display_key);
  if (!display || !TEXT_TYPES.test(display.type) || !display.condition_operations.includes("==")) return undefined;
  const values = [...new Set(keywords.flatMap((k) => keywordVariants(k.text)))];
  const leaves: LeafCondition[] = values.map((v) => ({ field: display.name, operation: "==", value: v, value_from: "const" }));
  return leaves.length === 1 ? leaves[0]! : { operation: "or", sub_conditions: leaves };
}

/** The type's candidates: the fuzzy and the exact query side by side, merged. */
async function search(deps: InstanceDeps, ctx: CallContext, plan: SearchPlan, cfg: SemanticInstanceConfig): Promise<Row[]> {
  const ask = (condition: Condition | undefined, limit: number): Promise<ObjectQueryResult | undefined> =>
    condition ? deps.backend.queryObjects(ctx, plan.ot.kn_id, plan.ot.id, { condition, limit }) : Promise.resolve(undefined);
  const [fuzzy, exact] = await Promise.all([ask(plan.fuzzy, cfg.initial_candidate_count), ask(plan.exact, cfg.per_type_instance_limit)]);
  const rows = new Map<string, Row>();
  for (const r of [...(exact?.datas ?? []), ...(fuzzy?.datas ?? [])]) if (!rows.has(r._instance_id)) rows.set(r._instance_id, r);
  return [...rows.values()];
}

/** Scores one type's candidates and keeps its best per_type_instance_limit above min_direct_relevance. */
function score(plan: SearchPlan, rows: readonly Row[], keywords: readonly Keyword[], cfg: SemanticInstanceConfig): Scored[] {
  // Full-text and vector hits carry the engine's _score; the best of the type counts fully.
  const maxScore = Math.max(0, ...rows.map((r) => Number(r["_score"] ?? 0)));
  const keys = new Set(keywords.map((k) => k.key));
  return rows
    .map((row): Scored => {
      const semantic = maxScore > 0 ? (SEMANTIC_WEIGHT * Number(row["_score"] ?? 0)) / maxScore : 0;
      const name = typeof row._display === "string" ? comparable(row._display) : "";
      // The engine's _score is relative to the type's best hit, so it is no evidence of relevance on
      // its own: min_direct_relevance is checked against the words an instance holds, and the
      // engine's score only lifts the final score of an instance that holds some.
      const { direct } = fuse(keywords.map((k) => instanceRelevance(k, row, plan.fields, 0)), keys.has(name), cfg.exact_name_match_score);
      const { final } = fuse(keywords.map((k) => instanceRelevance(k, row, plan.fields, semantic)), keys.has(name), cfg.exact_name_match_score);
      return { ot: plan.ot, row, direct: round3(direct), final: round3(final) };
    })
    .filter((s) => s.direct > 0 && s.direct >= cfg.min_direct_relevance)
    .sort((a, b) => b.final - a.final || nameOf(a).length - nameOf(b).length || (a.row._instance_id < b.row._instance_id ? -1 : 1))
    .slice(0, cfg.per_type_instance_limit);
}

function nameOf(s: Scored): string {
  const d = s.row._display;
  return d === null || d === undefined || d === "" ? Object.values(s.row._instance_identity).map(String).join("_") : String(d);
}

/**
 * A node as the spec shapes it. data_properties: the display key first, then
 * the type's properties in schema order; primary keys left out (they are the
 * unique_identities) unless one is the display key. With the property filter,
 * at most max_properties_per_instance of them, text cut to
 * max_property_value_length characters (the last one "…" when cut).
 */
function nodeOf(s: Scored, filter: PropertyFilterConfig): KnNode {
  const { ot, row } = s;
  const order = [ot.display_key, ...ot.data_properties.map((p) => p.name), ...Object.keys(row)];
  const names = [...new Set(order)].filter((k) => k in row && !k.startsWith("_") && (k === ot.display_key || !ot.primary_keys.includes(k)));
  // Filtered, empty values go first: they say nothing and would push real ones past max_properties_per_instance.
  const kept = filter.enable_property_filter ? names.filter((k) => row[k] !== null && row[k] !== "").slice(0, filter.max_properties_per_instance) : names;
  const data: Record<string, Json> = {};
  for (const k of kept) data[k] = filter.enable_property_filter ? cut(row[k]!, filter.max_property_value_length) : row[k]!;
  return {
    kn_id: ot.kn_id,
    object_type_id: ot.id,
    object_type_name: ot.name,
    instance_name: nameOf(s),
    unique_identities: row._instance_identity,
    final_score: s.final,
    data_properties: data,
  };
}

function cut(value: Json, max: number): Json {
  if (typeof value !== "string") return value;
  const chars = [...value];
  return chars.length <= max ? value : `${chars.slice(0, max - 1).join("")}…`;
}
