import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import type { Json } from "../../core/json";
import { type Lexicon, lexiconOrNone } from "../../core/lexicon";
import { round3 } from "../../core/scores";
import { comparable } from "../../core/text";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import type { Row } from "../../kn/types";
import type { Embedder } from "../../upstream/embeddings";
import { LOCAL_EMBEDDER_NAME } from "../../upstream/local-embedder";
import type { CandidateMatch } from "../matching/candidates";
import { lookupFailed, matchInstances } from "../matching/matcher";
import { type Mention, mentionOf } from "../matching/mention";
import { type SearchField, searchFieldsOf } from "../matching/queries";
import { TRANSLATION_WEIGHT, translationsOf } from "../matching/translations";
import type { Vocabulary } from "../matching/vocabulary";
import type { DescriptionCache } from "../relevance/descriptions";
import { semanticRelevance } from "../relevance/semantic";
import type { RecalledObjectType } from "../session";
import type { KnNode, KnWarning } from "./answer";
import type { PropertyFilterConfig, SemanticInstanceConfig } from "./input";

/** Object types searched at once. */
const TYPE_CONCURRENCY = 5;
/** What full-text or vector search alone (no word in common) is worth at most. */
const SEMANTIC_WEIGHT = 0.45;
/** Stage one settles a keyword when its best match is at least this sure; else its pieces are looked up too. */
const CONCLUSIVE = 0.8;

export interface InstanceDeps {
  backend: KnowledgeNetworkBackend;
  embedder: Embedder;
  descriptions: DescriptionCache;
  vocabulary: Vocabulary;
  /** CC-CEDICT and WordNet (core/lexicon.ts): a keyword not found as written is looked up translated. */
  lexicon?: () => Promise<Lexicon>;
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
 * key always) by the mention matcher (matching/matcher.ts): the keywords'
 * exact forms; each keyword and its words with the operations each property
 * supports, in at most max_semantic_sub_conditions sub-conditions, for
 * initial_candidate_count candidates; the aliases; and, for a keyword left
 * without a convincing match, its pieces. Candidates are scored by the
 * matcher; those below min_direct_relevance go,
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
  let mentions = query.keywords.map(mentionOf);
  const plans = await planSearches(deps, ctx, types, query, cfg);
  const warnings: KnWarning[] = [];
  const searchAll = (ms: readonly Mention[]) =>
    settleWithLimit(plans, TYPE_CONCURRENCY, ctx.signal, (plan) =>
      search(
        deps,
        ctx,
        plan,
        ms.map((m) => withAlternatesOf(deps.vocabulary.expand(plan.ot.kn_id, plan.ot.id, m), m)),
        cfg,
      ),
    );
  let results = await searchAll(mentions);
  // Keywords no type names for sure as written are searched again with their translations (one more pass).
  const translated = await translatedKeywords(deps, ctx, mentions, results);
  if (translated) {
    mentions = translated;
    results = await searchAll(mentions);
  }
  const failed = results.filter((r) => r.status === "rejected");
  if (failed.length > 0 && failed.length === results.length) throw (failed[0] as PromiseRejectedResult).reason;

  let scored: Scored[] = [];
  results.forEach((r, i) => {
    const plan = plans[i]!;
    if (r.status === "rejected") {
      if (!(r.reason instanceof ToolError)) throw r.reason;
      warnings.push({
        target: `instances:${plan.ot.id}`,
        reason: r.reason.reason,
        message: text(
          `the instances of ${plan.ot.id} could not be searched: ${r.reason.text.en}`,
          `无法搜索 ${plan.ot.id} 的实例：${r.reason.text.zh}`,
        )[ctx.language],
      });
      return;
    }
    for (const f of r.value.failures) {
      warnings.push({
        target: `instances:${plan.ot.id}`,
        reason: f.error.reason,
        message: lookupFailed(f, plan.ot.id, ctx.language),
      });
    }
    scored.push(...score(plan, r.value.candidates, mentions, cfg));
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

/**
 * The keywords with their CC-CEDICT translations as alternates (weighed 0.9,
 * matches through them count as alias matches) when some keyword found
 * nothing at least CONCLUSIVE in any type and the dictionary translates it;
 * undefined when no keyword needs it (matching/translations.ts).
 */
async function translatedKeywords(
  deps: InstanceDeps,
  ctx: CallContext,
  mentions: readonly Mention[],
  results: readonly PromiseSettledResult<Awaited<ReturnType<typeof matchInstances>>>[],
): Promise<Mention[] | undefined> {
  if (!deps.lexicon) return undefined;
  const best = mentions.map((_, k) =>
    Math.max(
      0,
      ...results.flatMap((r) =>
        r.status === "fulfilled" ? r.value.candidates.map((c) => c.mentions[k]?.confidence ?? 0) : [],
      ),
    ),
  );
  const lexicon = await lexiconOrNone(deps.lexicon, ctx.log, "keywords are not translated");
  if (!lexicon) return undefined;
  let any = false;
  const out = mentions.map((m, k) => {
    if (best[k]! >= CONCLUSIVE) return m;
    const translations = translationsOf(m, lexicon);
    if (translations.length === 0) return m;
    any = true;
    return {
      ...m,
      alternates: [
        ...m.alternates,
        ...translations.map((t) => ({ mention: t, via: "dictionary" as const, weight: TRANSLATION_WEIGHT })),
      ],
    };
  });
  return any ? out : undefined;
}

/** The vocabulary's expansion of a keyword, keeping the alternates it already had (its translations). */
function withAlternatesOf(expanded: Mention, original: Mention): Mention {
  if (original.alternates.length === 0) return expanded;
  const known = new Set(expanded.alternates.map((a) => a.mention.key));
  const kept = original.alternates.filter((a) => !known.has(a.mention.key));
  return kept.length === 0 ? expanded : { ...expanded, alternates: [...expanded.alternates, ...kept] };
}

interface SearchPlan {
  ot: RecalledObjectType;
  fields: SearchField[];
}

/** Chooses each type's properties to search (one relevance pass for all types). */
async function planSearches(
  deps: InstanceDeps,
  ctx: CallContext,
  types: readonly RecalledObjectType[],
  query: { question: string },
  cfg: SemanticInstanceConfig,
): Promise<SearchPlan[]> {
  const searchable = types.map((ot) => searchFieldsOf(ot.data_properties, ot.display_key).filter((f) => f.text));
  const descriptions = types.flatMap((ot, t) =>
    searchable[t]!.map((f) => {
      const p = ot.data_properties.find((d) => d.name === f.name)!;
      return `${p.name} ${p.display_name} ${p.comment}`;
    }),
  );
  const relevance = await semanticRelevance(
    ctx,
    deps.descriptions,
    query.question,
    descriptions,
    cfg.semantic_field_rerank_batch_size,
  );
  let offset = 0;
  const plans: SearchPlan[] = [];
  types.forEach((ot, t) => {
    const fields = searchable[t]!;
    const scores = relevance.slice(offset, offset + fields.length);
    offset += fields.length;
    if (fields.length === 0) return;
    const keep = Math.min(
      fields.length,
      Math.max(
        cfg.semantic_field_keep_min,
        Math.min(cfg.semantic_field_keep_max, Math.ceil(cfg.semantic_field_keep_ratio * fields.length)),
      ),
    );
    // The display key (the instance's name) first, then the most relevant; ties keep the schema's order.
    const ranked = fields
      .map((f, i) => ({ f, s: f.name === ot.display_key ? Infinity : scores[i]!, i }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .slice(0, keep)
      .map(({ f }) => f);
    plans.push({ ot, fields: ranked });
  });
  return plans;
}

/** The type's candidates for every keyword: the matcher's lookups, within kn_search's settings. */
function search(
  deps: InstanceDeps,
  ctx: CallContext,
  plan: SearchPlan,
  keywords: readonly Mention[],
  cfg: SemanticInstanceConfig,
) {
  return matchInstances(
    deps.backend,
    ctx,
    { kn_id: plan.ot.kn_id, object_type_id: plan.ot.id, alias_links: plan.ot.alias_links ?? [] },
    keywords,
    {
      fields: plan.fields,
      candidateLimit: cfg.initial_candidate_count,
      exactLimit: cfg.per_type_instance_limit,
      words: "or",
      budget: cfg.max_semantic_sub_conditions,
      conclusive: CONCLUSIVE,
      ...(deps.embedder.name !== LOCAL_EMBEDDER_NAME ? { embedder: deps.embedder } : {}),
      // The service's one load of the dictionaries, logged once, for telling near names from typos.
      ...(deps.lexicon ? { lexicon: deps.lexicon } : {}),
    },
  );
}

/**
 * Scores one type's candidates and keeps its best per_type_instance_limit
 * above min_direct_relevance. An instance's relevance to a keyword is its
 * best match (matching/score.ts, the property's weight applied) — or what
 * full-text or vector search found, which lifts the final score but is no
 * evidence on its own: min_direct_relevance is checked against the matches.
 */
function score(
  plan: SearchPlan,
  candidates: readonly CandidateMatch[],
  keywords: readonly Mention[],
  cfg: SemanticInstanceConfig,
): Scored[] {
  const keys = new Set(keywords.map((k) => k.key));
  return candidates
    .map((c): Scored => {
      const semantic = SEMANTIC_WEIGHT * c.engine;
      const name = typeof c.row._display === "string" ? comparable(c.row._display) : "";
      const direct = keywords.map((_, k) => c.mentions[k]?.confidence ?? 0);
      return {
        ot: plan.ot,
        row: c.row,
        direct: round3(combineKeywords(direct, keys.has(name), cfg.exact_name_match_score).direct),
        final: round3(
          combineKeywords(
            direct.map((d) => Math.max(d, semantic)),
            keys.has(name),
            cfg.exact_name_match_score,
          ).final,
        ),
      };
    })
    .filter((s) => s.direct > 0 && s.direct >= cfg.min_direct_relevance)
    .sort(
      (a, b) =>
        b.final - a.final || nameOf(a).length - nameOf(b).length || (a.row._instance_id < b.row._instance_id ? -1 : 1),
    )
    .slice(0, cfg.per_type_instance_limit);
}

/**
 * One instance's scores over the query's keywords. `direct`, what
 * min_direct_relevance filters, is its relevance to its best keyword; the
 * final score is that for a one-keyword query, and for several keywords the
 * share of the whole query the instance answers (their mean) — so an
 * instance named exactly as one keyword is lifted to exact_name_match_score
 * rather than sinking below instances that half-match two.
 */
export function combineKeywords(
  perKeyword: readonly number[],
  nameIsAKeyword: boolean,
  exactNameMatchScore: number,
): { direct: number; final: number } {
  const direct = Math.max(0, ...perKeyword);
  if (perKeyword.length <= 1) return { direct, final: direct };
  const mean = perKeyword.reduce((s, x) => s + x, 0) / perKeyword.length;
  return { direct, final: nameIsAKeyword ? Math.max(mean, exactNameMatchScore) : mean };
}

function nameOf(s: Scored): string {
  const d = s.row._display;
  return d === null || d === undefined || d === ""
    ? Object.values(s.row._instance_identity).map(String).join("_")
    : String(d);
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
  const names = [...new Set(order)].filter(
    (k) => k in row && !k.startsWith("_") && (k === ot.display_key || !ot.primary_keys.includes(k)),
  );
  // Filtered, empty values go first: they say nothing and would push real ones past max_properties_per_instance.
  const kept = filter.enable_property_filter
    ? names.filter((k) => row[k] !== null && row[k] !== "").slice(0, filter.max_properties_per_instance)
    : names;
  const data: Record<string, Json> = {};
  for (const k of kept)
    data[k] = filter.enable_property_filter ? cut(row[k]!, filter.max_property_value_length) : row[k]!;
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
