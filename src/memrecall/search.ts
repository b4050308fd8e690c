import type { CallContext } from "../core/call-context";
import { lexiconOrNone } from "../core/lexicon";
import { round3 } from "../core/scores";
import { joinText, type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { MemoryFilters, MemoryRecord } from "../store/memories/memory-store";
import { accountKey, sessionKey } from "../store/session-store";
import type { SearchMemoriesInput } from "./inputs";
import { latestWins, type Shown } from "./latest-wins";
import { type LexiconBridge, lexiconBridge } from "./lexicon-bridge";
import type { MemoriesDeps } from "./memories-deps";
import type { Hit, IndexQuery } from "./memory-index";
import { cached, digest, maySeeSensitive, ownerOf, versionOf } from "./owner";
import { expandQuery } from "./query-expansion";
import {
  fixedHybridRelevance,
  fixedSemanticRelevance,
  hybridRelevance,
  keywordRelevance,
  semanticRelevance,
} from "./relevance";
import { type KeywordQuery, keywordQueryOf, keywordShare, lookupTokens, searchTokens } from "./search-text";

/** Spec §6.1: a search's answer is cached for a minute. */
const SEARCH_TTL_MS = 60_000;
/** How long a recall session's search count is kept. */
const SESSION_TTL_MS = 2 * 3600_000;
/** Candidates each ranking contributes before fusion and the threshold. */
const CANDIDATES = 50;
/** Matches read from the store's full-text index while a user's in-process index loads. */
const MAX_COLD_MATCHES = 200_000;
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
  /** Older memories this one replaces: the one it was stored to supersede, and any this search found it replaces. */
  supersedes: string[];
  /** The newer memory that replaces this one ("" when none): this one ranks below it, at half its relevance at most. */
  superseded_by: string;
  /** Stored as sensitive (its content needs the permission to be read). */
  sensitive: boolean;
  /** True when content_preview is withheld from this caller: a sensitive memory, and no permission. */
  redacted: boolean;
  /** ISO 8601: when what it says was stated. */
  stated_at: string;
  /** ISO 8601: when its successor was stated; "" while it holds. */
  valid_until: string;
}

export interface SearchOutput {
  results: SearchResultItem[];
  /** What the search used beyond the query: the agent's keywords and the LLM's expansion, comma-separated. */
  search_query_expanded: string;
  message: string;
  /** True when the LLM's expansion failed: such an answer is not cached, the next search asks again. */
  degraded?: boolean;
}

/**
 * search_memories (spec §2.1). Every mode scores a memory 0..1, 1 only for
 * an exact hit, on one scale: a memory scoring s is relevant about s of the
 * time (measured on both labelled sets, in Chinese and English alike), so
 * min_relevance_score cuts the same way in each:
 *
 * - keyword: the square of the share of the query's word weight (IDF) the
 *   memory holds, a word counting 0.8 when the memory holds only its
 *   glossary equivalent (another language, an abbreviation, a synonym); 1
 *   when it holds every word;
 * - semantic: the cosine of embeddings, 0 at the floor, 0.9 at the ceiling,
 *   1 only for the same text;
 * - hybrid: the keyword relevance's log-odds plus the cosine's evidence
 *   times the embedder's fusion weight (relevance.ts); without a measured
 *   scale, the better of the two raised when both agree.
 *
 * The filters apply before ranking. Equal scores: the most recently written
 * first. Then latest wins (latest-wins.ts): a memory replaced by a newer one
 * on the same subject says so and counts half. Results are cached for a
 * minute per user and search; any write of the user's invalidates them. A
 * sensitive memory's preview is withheld from a caller without the permission,
 * and never cached: a caller with it gets the preview read from the store.
 */
export async function searchMemories(
  deps: MemoriesDeps,
  ctx: CallContext,
  input: SearchMemoriesInput,
  /** `cache: false`: a search run apart from the agent's (RememberConversation's, without the LLM's rewrite), neither read from nor written to the cache. */
  opts: { cache?: boolean } = {},
): Promise<SearchOutput> {
  const owner = ownerOf(ctx.caller);
  if (input.session_id !== "") await countSearch(deps, ctx, owner, input.session_id);
  const version = await versionOf(deps, ctx, owner);
  const { session_id: _session, ...search } = input;
  const started = performance.now();
  const key =
    version === undefined || opts.cache === false
      ? undefined
      : // The answer's message is in the caller's language: one cached answer per language.
        accountKey(owner, `mem:search:${version}:${ctx.language}:${digest(search)}`);
  const out = await cached(
    ctx,
    deps,
    key,
    SEARCH_TTL_MS,
    () => runSearch(deps, ctx, owner, version, search),
    // The cache (Redis, shared by replicas) never holds a sensitive memory's preview in plain text.
    (o) => (o.degraded ? undefined : { ...o, results: o.results.map(withoutPreview) }),
  );
  const ms = Math.round(performance.now() - started);
  ctx.log.info({ mode: input.search_mode, results: out.results.length, ms }, "memories searched");
  // The cache holds what the owner's memories say; each caller sees what its permissions allow.
  return maySeeSensitive(ctx.caller)
    ? withSensitivePreviews(deps, owner, out)
    : { ...out, results: out.results.map(redactedItem) };
}

/** A sensitive memory's result without its content, for a caller without the permission (spec §7). */
function redactedItem(r: SearchResultItem): SearchResultItem {
  return r.sensitive === true ? { ...withoutPreview(r), redacted: true } : r;
}

/** A sensitive memory's result without its preview; any other as it is. */
function withoutPreview(r: SearchResultItem): SearchResultItem {
  // `sensitive` may be missing from results cached before the flag existed: those are not sensitive.
  return r.sensitive === true ? { ...r, content_preview: "" } : r;
}

/**
 * The output with the previews of its sensitive memories, which the cache
 * does not hold: read again from the store by key (a search computed just now
 * still has them). A memory deleted since the search was cached is left out.
 */
async function withSensitivePreviews(deps: MemoriesDeps, owner: string, out: SearchOutput): Promise<SearchOutput> {
  const missing = out.results.filter((r) => r.sensitive === true && r.content_preview === "").map((r) => r.memory_key);
  if (missing.length === 0) return out;
  const records = new Map((await deps.store.getMany(owner, missing)).map((m) => [m.memory_key, m]));
  const results = out.results.flatMap((r) => {
    if (!missing.includes(r.memory_key)) return [r];
    const record = records.get(r.memory_key);
    return record ? [{ ...r, content_preview: previewOf(record.content) }] : [];
  });
  return { ...out, results };
}

/** The spec's preview: the first 200 characters, "..." when there is more. */
function previewOf(content: string): string {
  const chars = [...content];
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS).join("")}...` : content;
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
    message: text(
      `this recall session has searched ${deps.maxSearchesPerSession} times in a row (the limit) and cannot search again`,
      `本次召回会话已连续搜索 ${deps.maxSearchesPerSession} 次（上限），不能继续搜索`,
    ),
    metadata: { session_id: sessionId, max_searches: String(deps.maxSearchesPerSession) },
    hint: {
      message: text(
        "Call Handoff to end the task: summarise what was found, or set needs_more_info=true and ask the user for more in follow_up_question.",
        "调用 Handoff 结束任务：用已有结果总结，或设置 needs_more_info=true 并提出 follow_up_question 向用户询问更多细节。",
      ),
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
    ...(input.as_of !== undefined ? { stated_by: new Date(input.as_of) } : {}),
  };
  const notes: Text[] = [];
  // Semantic and hybrid search look for meaning: the LLM's expansion (when one is configured) joins the query.
  const llmTerms =
    input.search_mode === "keyword" ? [] : await expandQuery(deps, ctx, input.query, input.keywords, notes);
  const { query: keywordQuery, expansion } = keywordQueryOf(
    input.query,
    [...input.keywords, ...llmTerms].join(" "),
    deps.glossary,
    await bridgeOf(deps, ctx, notes),
  );
  // A search the LLM or the dictionaries could not help is not cached: the next one tries again.
  const degraded = notes.length > 0;
  const ranked = await rank(deps, ctx, owner, version, input, keywordQuery, llmTerms, filters);
  const window = ranked.slice(0, 2 * input.limit + 5);
  const records = new Map(
    (
      await deps.store.getMany(
        owner,
        window.map((c) => c.memory_key),
      )
    ).map((r) => [r.memory_key, r]),
  );
  if (input.as_of !== undefined) await asOf(deps, owner, records, new Date(input.as_of));
  const found = window.flatMap((c) => {
    const record = records.get(c.memory_key);
    return record ? [{ record, relevance: c.score }] : [];
  });
  const results = latestWins(found, deps.glossary)
    .filter((r) => r.relevance >= input.min_relevance_score)
    .slice(0, input.limit)
    .map(resultItem);
  if (results.length === 0) {
    notes.push(
      input.min_relevance_score > 0.3
        ? text(
            `no memory is relevant at ${input.min_relevance_score} or more: lower min_relevance_score (to 0.3, say), switch to semantic mode or loosen the filters`,
            `没有相关性不低于 ${input.min_relevance_score} 的记忆：可降低 min_relevance_score（如 0.3）、换用 semantic 模式或放宽过滤条件`,
          )
        : text(
            "no relevant memory found: try other words, loosen the filters, or call Handoff to ask the user for more",
            "没有找到相关记忆：可换个说法、放宽过滤条件，或调用 Handoff 向用户询问更多细节",
          ),
    );
  }
  return {
    results,
    search_query_expanded: [...new Set([...input.keywords, ...expansion, ...llmTerms])].join(", "),
    message: joinText(notes, text("; ", "；"))[ctx.language],
    ...(degraded ? { degraded: true } : {}),
  };
}

/**
 * The records as they stood at `at`: replaced only by a successor stated by
 * then, valid until that one was stated; a later successor did not exist yet.
 */
async function asOf(deps: MemoriesDeps, owner: string, records: Map<string, MemoryRecord>, at: Date): Promise<void> {
  const successors = new Map(
    (await deps.store.successorsAsOf(owner, [...records.keys()], at)).map((s) => [s.supersedes, s]),
  );
  for (const [key, record] of records) {
    const { valid_until: _later, ...rest } = record;
    const successor = successors.get(key);
    records.set(
      key,
      successor
        ? { ...rest, superseded_by: successor.memory_key, valid_until: successor.stated_at }
        : { ...rest, superseded_by: "" },
    );
  }
}

/** The dictionaries' bridge, once they are loaded; a load that fails leaves the search to the user's words and says so. */
async function bridgeOf(deps: MemoriesDeps, ctx: CallContext, notes: Text[]): Promise<LexiconBridge | undefined> {
  if (!deps.lexicon) return undefined;
  const lexicon = await lexiconOrNone(deps.lexicon, ctx.log, "searching without translations and synonyms");
  if (lexicon) return lexiconBridge(lexicon, searchTokens);
  notes.push(
    text(
      "the dictionaries did not load: this search matched no translations or synonyms",
      "词典未能加载，本次搜索未做跨语言和同义词匹配",
    ),
  );
  return undefined;
}

/** The candidates of the search's mode, best first, with their relevance (three decimals). */
async function rank(
  deps: MemoriesDeps,
  ctx: CallContext,
  owner: string,
  version: number | undefined,
  input: Omit<SearchMemoriesInput, "session_id">,
  keywordQuery: KeywordQuery,
  llmTerms: string[],
  filters: MemoryFilters,
): Promise<Hit[]> {
  const keyword = { query: keywordQuery, lookup: lookupTokens(keywordQuery) };
  if (input.search_mode === "keyword") return keywordRanking(deps, ctx, owner, version, keyword, filters);
  const [vector] = await deps.embedder.embed(ctx, [[input.query, ...input.keywords, ...llmTerms].join(" ")]);
  const query: IndexQuery = input.search_mode === "semantic" ? { vector: vector! } : { keyword, vector: vector! };
  return deps.index.rank(owner, version, query, filters, CANDIDATES, scoringOf(deps, input.search_mode));
}

/** How a semantic or hybrid search scores a memory: on the measured model's scale, else on the fixed range (relevance.ts). */
function scoringOf(deps: MemoriesDeps, mode: "semantic" | "hybrid"): (share: number, cosine: number) => number {
  const scale = deps.semanticScale;
  if (scale !== undefined)
    return mode === "semantic"
      ? (_, cosine) => round3(semanticRelevance(cosine, scale))
      : (share, cosine) => round3(hybridRelevance(share, cosine, scale));
  const semantic = (cosine: number) => fixedSemanticRelevance(cosine, deps.semanticFloor, deps.semanticCeiling);
  return mode === "semantic"
    ? (_, cosine) => round3(semantic(cosine))
    : (share, cosine) => round3(fixedHybridRelevance(keywordRelevance(share), semantic(cosine)));
}

/**
 * Keyword ranking (search-text.ts `keywordShare`, squared). Candidates are the
 * memories holding a token worth looking up (not only stop words), in both
 * paths. With the user's index in this process it is summed over its
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
  keyword: NonNullable<IndexQuery["keyword"]>,
  filters: MemoryFilters,
): Promise<Hit[]> {
  if (deps.index.has(owner, version))
    return deps.index.rank(owner, version, { keyword }, filters, CANDIDATES, (share) =>
      round3(keywordRelevance(share)),
    );
  // Every match, not the store's best few by its own rank (bm25 counts other users' rows): the
  // same candidates and order as the index gives, so a search says the same before and after it loads.
  const hits = await deps.store.keywordSearch(owner, keyword.lookup, filters, MAX_COLD_MATCHES);
  deps.index.warm(owner, version, (err) =>
    ctx.log.warn({ err }, "memory index not loaded; searches use the store's full-text index"),
  );
  return hits
    .map((h) => {
      const held = new Set(h.search_text.split(" "));
      return {
        memory_key: h.memory_key,
        score: round3(keywordRelevance(keywordShare(keyword.query, (t) => held.has(t)))),
        updated: h.updated_at.getTime(),
      };
    })
    .filter((h) => h.score > 0)
    .sort((a, b) => b.score - a.score || b.updated - a.updated || byKey(a.memory_key, b.memory_key))
    .slice(0, CANDIDATES)
    .map(({ memory_key, score }) => ({ memory_key, score }));
}

/** Code-unit order of memory keys, as the index breaks its last ties. */
const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function resultItem({ record: m, relevance, supersedes, superseded_by }: Shown): SearchResultItem {
  return {
    memory_key: m.memory_key,
    summary: m.summary,
    content_preview: previewOf(m.content),
    memory_type: m.memory_type,
    relevance_score: relevance,
    created_at: m.created_at.toISOString(),
    keywords: m.keywords.map((k) => k.keyword),
    supersedes,
    superseded_by,
    sensitive: m.sensitive,
    redacted: false,
    stated_at: m.stated_at.toISOString(),
    valid_until: m.valid_until?.toISOString() ?? "",
  };
}
