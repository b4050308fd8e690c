import type { CallContext } from "../core/call-context";
import { round3 } from "../core/scores";
import { ToolError } from "../errors/tool-error";
import type { MemoryFilters, MemoryRecord } from "../store/memories/memory-store";
import { accountKey, sessionKey } from "../store/session-store";
import { equivalentsOf } from "./glossary";
import type { SearchMemoriesInput } from "./inputs";
import type { MemoriesDeps } from "./memories-deps";
import type { KeywordQuery } from "./memory-index";
import { cached, digest, ownerOf, versionOf } from "./owner";
import { expandQuery } from "./query-expansion";
import { coverage, lookupTokens, searchTokens } from "./search-text";

/** Spec §6.1: a search's answer is cached for a minute. */
const SEARCH_TTL_MS = 60_000;
/** How long a recall session's search count is kept. */
const SESSION_TTL_MS = 2 * 3600_000;
/** Candidates each ranking contributes before fusion and the threshold. */
const CANDIDATES = 50;
/** Matches read from the store's full-text index while a user's in-process index loads. */
const MAX_COLD_MATCHES = 200_000;
/** Reciprocal rank fusion constant (issue 6: k = 60). */
const RRF_K = 60;
const PREVIEW_CHARS = 200;

export interface SearchResultItem {
  memory_key: string;
  summary: string;
  content_preview: string;
  memory_type: string;
  relevance_score: number;
  /** ISO 8601. */
  created_at: string;
  keywords: string[];
}

export interface SearchOutput {
  results: SearchResultItem[];
  /** What the search used beyond the query: the agent's keywords and the LLM's expansion, comma-separated. */
  search_query_expanded: string;
  message: string;
  /** True when the LLM's expansion failed: such an answer is not cached, the next search asks again. */
  degraded?: boolean;
}

/** One ranking's candidate: relevance 0..1 as answers show it. */
export interface Ranked {
  memory_key: string;
  relevance: number;
}

/**
 * search_memories (spec §2.1). Keyword ranking: the store's full-text index
 * over jieba search tokens, scored by the share of the query's word weight
 * (jieba IDF) a memory contains. Semantic ranking: cosine of embeddings,
 * mapped linearly from [floor, ceiling] to [0, 1]. Hybrid: the two lists fused
 * by reciprocal rank (k = 60), each memory's relevance the better of its two.
 * So relevance_score means the same in every mode and min_relevance_score cuts
 * the same way. The filters apply before ranking. Results are cached for a
 * minute per user and search; any write of the user's invalidates them.
 */
export async function searchMemories(
  deps: MemoriesDeps,
  ctx: CallContext,
  input: SearchMemoriesInput,
): Promise<SearchOutput> {
  const owner = ownerOf(ctx.caller);
  if (input.session_id !== "") await countSearch(deps, ctx, owner, input.session_id);
  const version = await versionOf(deps, ctx, owner);
  const { session_id: _session, ...search } = input;
  const started = performance.now();
  const key = version === undefined ? undefined : accountKey(owner, `mem:search:${version}:${digest(search)}`);
  const out = await cached(
    ctx,
    deps,
    key,
    SEARCH_TTL_MS,
    () => runSearch(deps, ctx, owner, version, search),
    (o) => !o.degraded,
  );
  const ms = Math.round(performance.now() - started);
  ctx.log.info({ mode: input.search_mode, results: out.results.length, ms }, "memories searched");
  return out;
}

/**
 * Spec §6.2: a recall session may search `maxSearchesPerSession` times, then
 * the agent must hand off. A count the session store cannot keep (Redis down)
 * does not stop the search: the limit guards the agent's budget, the memories
 * are still there.
 */
async function countSearch(deps: MemoriesDeps, ctx: CallContext, owner: string, sessionId: string): Promise<void> {
  let count: number;
  try {
    count = await deps.sessions.increment(sessionKey(owner, sessionId, "memrecall:searches"), SESSION_TTL_MS);
  } catch (err) {
    ctx.log.warn({ err }, "search not counted (session store down): the per-session limit is not applied");
    return;
  }
  if (count <= deps.maxSearchesPerSession) return;
  throw new ToolError({
    code: "failed_precondition",
    reason: "SEARCH_LIMIT_REACHED",
    message: `本次召回会话已连续搜索 ${deps.maxSearchesPerSession} 次（上限），不能继续搜索`,
    metadata: { session_id: sessionId, max_searches: String(deps.maxSearchesPerSession) },
    hint: {
      message:
        "调用 handoff 结束任务：用已有结果总结，或设置 needs_more_info=true 并提出 follow_up_question 向用户询问更多细节。",
      nextRpc: "contextloader.memrecall.v1.MemRecallService/Handoff",
    },
  });
}

async function runSearch(
  deps: MemoriesDeps,
  ctx: CallContext,
  owner: string,
  version: number | undefined,
  input: Omit<SearchMemoriesInput, "session_id">,
): Promise<SearchOutput> {
  const filters: MemoryFilters = {
    ...(input.memory_types.length > 0 ? { memory_types: input.memory_types } : {}),
    ...(input.keywords.length > 0 ? { keywords: input.keywords } : {}),
    ...(input.time_range_days !== undefined
      ? { created_since: new Date(Date.now() - input.time_range_days * 86_400_000) }
      : {}),
  };
  const notes: string[] = [];
  // Keyword search is literal. Semantic and hybrid search look for meaning: the
  // LLM's expansion (when one is configured) joins the query everywhere; the
  // glossary's equivalents across languages join hybrid search's word side only
  // (in an embedding, a list of synonyms drowns the query: measured on the eval set).
  const llmTerms =
    input.search_mode === "keyword" ? [] : await expandQuery(deps, ctx, input.query, input.keywords, notes);
  const expansionFailed = notes.length > 0;
  const glossaryTerms = input.search_mode === "hybrid" ? equivalentsOf([input.query, ...input.keywords].join(" ")) : [];
  const expansion = [...new Set([...glossaryTerms, ...llmTerms])];
  const queryTokens = searchTokens(input.query);
  const extraTokens = searchTokens([...input.keywords, ...expansion].join(" ")).filter((t) => !queryTokens.includes(t));

  const lists: Ranked[][] = [];
  if (input.search_mode !== "semantic") {
    lists.push(await keywordRanking(deps, ctx, owner, version, { tokens: queryTokens, extra: extraTokens }, filters));
  }
  if (input.search_mode !== "keyword") {
    const [vector] = await deps.embedder.embed(ctx, [[input.query, ...input.keywords, ...llmTerms].join(" ")]);
    const nearest = await deps.index.nearest(owner, version, vector!, filters, CANDIDATES);
    // Below the floor a cosine is what unrelated texts share: such a memory is no semantic candidate at all.
    lists.push(
      nearest
        .filter((n) => n.score > deps.semanticFloor)
        .map((n) => ({
          memory_key: n.memory_key,
          relevance: calibrate(n.score, deps.semanticFloor, deps.semanticCeiling),
        })),
    );
  }
  // Fusion decides which memories make the cut; they are shown by relevance (spec §2.1: 按相关性分数排序),
  // the fused order breaking ties.
  const chosen = rrf(lists)
    .filter((r) => r.relevance >= input.min_relevance_score)
    .slice(0, input.limit)
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => b.relevance - a.relevance || a.i - b.i);
  const records = new Map(
    (
      await deps.store.getMany(
        owner,
        chosen.map((c) => c.memory_key),
      )
    ).map((r) => [r.memory_key, r]),
  );
  const results: SearchResultItem[] = chosen.flatMap((c) => {
    const m = records.get(c.memory_key);
    return m ? [resultItem(m, c.relevance)] : [];
  });
  if (results.length === 0) {
    notes.push(
      input.min_relevance_score > 0.3
        ? `没有相关性不低于 ${input.min_relevance_score} 的记忆：可降低 min_relevance_score（如 0.3）、换用 semantic 模式或放宽过滤条件`
        : "没有找到相关记忆：可换个说法、放宽过滤条件，或调用 handoff 向用户询问更多细节",
    );
  }
  return {
    results,
    search_query_expanded: [...new Set([...input.keywords, ...expansion])].join(", "),
    message: notes.join("；"),
    ...(expansionFailed ? { degraded: true } : {}),
  };
}

/**
 * Keyword relevance: the share of the query's IDF weight a memory's tokens
 * hold; the agent's keywords and the expansion count, a little less, when
 * they hold more. Candidates are the memories holding a token worth looking
 * up (not only stop words), in both paths. With the user's index in this process it is summed over its
 * postings. Otherwise (the first searches after a start, or after another
 * replica's write) the store's full-text index finds the candidates, they are
 * scored the same way from their search text, and the index loads in the
 * background for the next searches.
 */
async function keywordRanking(
  deps: MemoriesDeps,
  ctx: CallContext,
  owner: string,
  version: number | undefined,
  query: KeywordQuery,
  filters: MemoryFilters,
): Promise<Ranked[]> {
  const lookup = lookupTokens(query.tokens, query.extra);
  if (deps.index.has(owner, version)) {
    const hits = await deps.index.keywordTop(owner, version, query, lookup, filters, CANDIDATES);
    return hits.map((h) => ({ memory_key: h.memory_key, relevance: round3(h.score) }));
  }
  // Every match, not the store's best few by its own rank (bm25 counts other users' rows): the
  // same candidates and order as the index gives, so a search says the same before and after it loads.
  const hits = await deps.store.keywordSearch(owner, lookup, filters, MAX_COLD_MATCHES);
  deps.index.warm(owner, version, (err) =>
    ctx.log.warn({ err }, "memory index not loaded; searches use the store's full-text index"),
  );
  return hits
    .map((h) => ({
      memory_key: h.memory_key,
      relevance: Math.max(
        coverage(query.tokens, h.search_text),
        query.extra.length > 0 ? 0.9 * coverage(query.extra, h.search_text) : 0,
      ),
      tokens: h.search_text.split(" ").length,
    }))
    .sort((a, b) => b.relevance - a.relevance || a.tokens - b.tokens || byKey(a.memory_key, b.memory_key))
    .slice(0, CANDIDATES)
    .map(({ memory_key, relevance }) => ({ memory_key, relevance: round3(relevance) }));
}

/** Code-unit order of memory keys, as the index breaks its last ties. */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Semantic relevance: a cosine mapped linearly from [floor, ceiling] to [0, 1], clamped, three decimals. */
export const calibrate = (cosine: number, floor: number, ceiling: number): number =>
  round3(Math.min(1, Math.max(0, (cosine - floor) / (ceiling - floor))));

/**
 * Reciprocal rank fusion (k = 60): one list as it is; several merged, ordered
 * by the sum of 1 / (k + rank), rank counted from 1, over the lists a memory
 * is in (ties: the higher relevance first), its relevance the best it got in
 * any list.
 */
export function rrf(lists: Ranked[][]): Ranked[] {
  if (lists.length === 1) return lists[0]!;
  const merged = new Map<string, { rrf: number; relevance: number }>();
  for (const list of lists) {
    list.forEach((r, rank) => {
      const m = merged.get(r.memory_key) ?? { rrf: 0, relevance: 0 };
      m.rrf += 1 / (RRF_K + rank + 1);
      m.relevance = Math.max(m.relevance, r.relevance);
      merged.set(r.memory_key, m);
    });
  }
  return [...merged.entries()]
    .sort((a, b) => b[1].rrf - a[1].rrf || b[1].relevance - a[1].relevance)
    .map(([memory_key, m]) => ({ memory_key, relevance: m.relevance }));
}

function resultItem(m: MemoryRecord, relevance: number): SearchResultItem {
  const chars = [...m.content];
  return {
    memory_key: m.memory_key,
    summary: m.summary,
    // The spec's preview: the first 200 characters, "..." when there is more.
    content_preview: chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS).join("")}...` : m.content,
    memory_type: m.memory_type,
    relevance_score: relevance,
    created_at: m.created_at.toISOString(),
    keywords: m.keywords.map((k) => k.keyword),
  };
}
