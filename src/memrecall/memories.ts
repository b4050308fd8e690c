import { createHash } from "node:crypto";
import { round3 } from "../core/scores";
import { ToolError } from "../errors/tool-error";
import type { MemoryFilters, MemoryRecord, MemoryStore } from "../store/memories/memory-store";
import { accountKey, sessionKey, type SessionStore } from "../store/session-store";
import type { CallContext, Caller } from "../core/call-context";
import type { Embedder } from "../upstream/embeddings";
import type { LlmClient } from "../upstream/llm-client";
import { equivalentsOf } from "./glossary";
import { extractKeywords, extractLocally } from "./keyword-extraction";
import { coverage, lookupTokens, searchTextOf, searchTokens } from "./search-text";
import { MAX_CONTENT_BYTES, type SearchMemoriesInput, type StoreMemoryInput } from "./inputs";
import type { IndexChange, KeywordQuery, MemoryIndex } from "./memory-index";

export interface MemoriesDeps {
  store: MemoryStore;
  /** Caches, the per-user memory version and the per-session search counts. */
  sessions: SessionStore;
  embedder: Embedder;
  llm: LlmClient | undefined;
  /** The in-process search index of each user's memories. */
  index: MemoryIndex;
  /** Searches allowed per recall session (spec §6.2: 3). */
  maxSearchesPerSession: number;
  /** Cosines mapped to relevance 0 and 1 for the configured embedder. */
  semanticFloor: number;
  semanticCeiling: number;
}

/** Spec §6.1 cache lifetimes. */
const EXPANSION_TTL_MS = 5 * 60_000;
const SEARCH_TTL_MS = 60_000;
const DETAIL_TTL_MS = 10 * 60_000;
/** The version outlives every cache keyed by it. */
const VERSION_TTL_MS = 30 * 86_400_000;
const SESSION_TTL_MS = 2 * 3600_000;
/** Candidates each ranking contributes before fusion and the threshold. */
const CANDIDATES = 50;
/** Matches read from the store's full-text index while a user's in-process index loads. */
const MAX_COLD_MATCHES = 200_000;
/** Reciprocal rank fusion constant (issue 6: k = 60). */
const RRF_K = 60;
const PREVIEW_CHARS = 200;
/** Keywords extracted for a memory stored without any. */
const STORED_KEYWORDS = 8;
/** Characters of a memory that go into its embedding (endpoints limit input size). */
const EMBED_CHARS = 8000;

/**
 * The memory owner for the caller: every MemRecall call needs an account
 * (spec §7: all tools require user_id), and an anonymous one has no memories.
 * The type is part of the id, so an app and a user with the same id are two owners.
 */
export function ownerOf(caller: Caller): string {
  if (caller.accountId === "") {
    throw new ToolError({
      code: "unauthenticated",
      reason: "ACCOUNT_REQUIRED",
      message: "MemRecall needs the caller's account: send the x-account-id header (and x-account-type user or app)",
      hint: { message: "Call again with the x-account-id header of the user whose memories these are." },
    });
  }
  if (caller.accountType === "anonymous") {
    throw new ToolError({
      code: "permission_denied",
      reason: "ANONYMOUS_NOT_ALLOWED",
      message: "anonymous accounts have no memories: MemRecall serves user and app accounts only",
      hint: { message: "Call with x-account-type user (or app) and that account's x-account-id." },
    });
  }
  return `${caller.accountType}:${caller.accountId}`;
}

/** The owner's memory version: a counter every write increments, so every cache keyed by it is invalid at once. */
async function versionOf(deps: MemoriesDeps, owner: string): Promise<number> {
  return deps.sessions.counter(accountKey(owner, "mem:version"));
}

/**
 * After a committed write: the new version, and this process's index updated
 * in place when it can be. Writes of one owner in this process run one after
 * another (`index.serially`), so versions move in commit order here.
 */
async function bumpVersion(deps: MemoriesDeps, owner: string, change: IndexChange): Promise<void> {
  let version: number;
  try {
    version = await deps.sessions.increment(accountKey(owner, "mem:version"), VERSION_TTL_MS);
  } catch (err) {
    // The write is committed but caches keyed by the old version (searches 1 min, memories 10 min) would
    // still answer: say so rather than acknowledge a write the next search may not see.
    deps.index.forget(owner);
    throw new ToolError({
      code: "unavailable",
      reason: "CACHE_NOT_INVALIDATED",
      message: `the memory was stored, but the session store could not record the change (${(err as Error).message}), so searches may not show it for up to 10 minutes`,
      hint: { message: "Retry the same call once the session store (Redis) is back: storing the same memory again is harmless." },
      cause: err,
    });
  }
  deps.index.applied(owner, version, change);
}

/** Cache reads and writes never fail a call: the store is the truth, the cache only saves time. */
async function cached<T>(ctx: CallContext, deps: MemoriesDeps, key: string, ttlMs: number, compute: () => Promise<T>, keep: (value: T) => boolean = () => true): Promise<T> {
  try {
    const hit = await deps.sessions.getJson<T>(key);
    if (hit !== undefined) return hit;
  } catch (err) {
    ctx.log.warn({ err, key }, "cache read failed; computing");
  }
  const value = await compute();
  if (keep(value)) deps.sessions.setJson(key, value, ttlMs).catch((err: unknown) => ctx.log.warn({ err, key }, "cache write failed"));
  return value;
}

const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 32);

export interface StoredMemory {
  record: MemoryRecord;
  created: boolean;
}

/**
 * StoreMemory: creates the memory or replaces the caller's memory with that
 * key. Content over 100 KB (spec §6.2) is cut at a character boundary and
 * flagged; keywords not given are extracted (jieba TF-IDF). Acknowledged only
 * after the store committed it; the caller's caches are invalidated so the
 * next search finds it.
 */
export async function storeMemory(deps: MemoriesDeps, ctx: CallContext, input: StoreMemoryInput): Promise<StoredMemory> {
  const owner = ownerOf(ctx.caller);
  const { text: content, truncated } = capBytes(input.content, MAX_CONTENT_BYTES);
  const keywords =
    input.keywords.length > 0
      ? input.keywords
      : extractLocally(`${input.summary}\n${content.slice(0, 20_000)}`, "", STORED_KEYWORDS).map(({ keyword, weight }) => ({ keyword, weight }));
  const [embedding] = await deps.embedder.embed(ctx, [`${input.summary}\n${content}`.slice(0, EMBED_CHARS)]);
  const searchText = searchTextOf([input.summary, content, keywords.map((k) => k.keyword).join(" ")]);
  const result = await deps.index.serially(owner, async () => {
    const written = await deps.store.upsert(owner, {
      memory_key: input.memory_key,
      memory_type: input.memory_type,
      summary: input.summary,
      content,
      content_truncated: truncated,
      keywords,
      metadata: input.metadata,
      search_text: searchText,
      embedding: embedding!,
    });
    await bumpVersion(deps, owner, {
      put: {
        memory_key: written.record.memory_key,
        embedding: embedding!,
        search_text: searchText,
        memory_type: written.record.memory_type,
        created_at: written.record.created_at,
        keywords: written.record.keywords.map((k) => k.keyword),
      },
    });
    return written;
  });
  ctx.log.info({ memory_key: input.memory_key, created: result.created, truncated, bytes: Buffer.byteLength(content) }, "memory stored");
  return result;
}

/** DeleteMemory: true when the caller had a memory with that key. */
export async function deleteMemory(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<boolean> {
  const owner = ownerOf(ctx.caller);
  return deps.index.serially(owner, async () => {
    const deleted = await deps.store.delete(owner, memoryKey);
    if (deleted) await bumpVersion(deps, owner, { remove: memoryKey });
    return deleted;
  });
}

/** A record as cached (JSON has no Date). */
type CachedRecord = Omit<MemoryRecord, "created_at" | "updated_at"> & { created_at: string; updated_at: string };

/**
 * get_memory_detail (spec §2.2): the caller's memory, from the hot-memory
 * cache (10 minutes, spec §6.1) or the store. A key the caller does not have
 * — absent, or another user's — is the same NOT_FOUND with the spec's text.
 */
export async function getMemoryDetail(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<MemoryRecord> {
  const owner = ownerOf(ctx.caller);
  const version = await versionOf(deps, owner);
  const hit = await cached<CachedRecord | null>(ctx, deps, accountKey(owner, `mem:detail:${version}:${digest(memoryKey)}`), DETAIL_TTL_MS, async () => {
    const record = await deps.store.get(owner, memoryKey);
    return record ? { ...record, created_at: record.created_at.toISOString(), updated_at: record.updated_at.toISOString() } : null;
  });
  if (!hit) {
    throw new ToolError({
      code: "not_found",
      reason: "MEMORY_NOT_FOUND",
      message: `未找到记忆: ${memoryKey}`,
      metadata: { memory_key: memoryKey },
      hint: {
        message: "memory_key 必须来自本用户 search_memories 的结果；尝试换个说法或 semantic 模式重新搜索，或向用户询问更多信息。",
        nextRpc: "contextloader.memrecall.v1.MemRecallService/SearchMemories",
      },
    });
  }
  return { ...hit, created_at: new Date(hit.created_at), updated_at: new Date(hit.updated_at) };
}

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
export async function searchMemories(deps: MemoriesDeps, ctx: CallContext, input: SearchMemoriesInput): Promise<SearchOutput> {
  const owner = ownerOf(ctx.caller);
  if (input.session_id !== "") await countSearch(deps, owner, input.session_id);
  const version = await versionOf(deps, owner);
  const { session_id: _session, ...search } = input;
  const started = performance.now();
  const out = await cached(
    ctx,
    deps,
    accountKey(owner, `mem:search:${version}:${digest(search)}`),
    SEARCH_TTL_MS,
    () => runSearch(deps, ctx, owner, version, search),
    (o) => !o.degraded,
  );
  ctx.log.info({ mode: input.search_mode, results: out.results.length, ms: Math.round(performance.now() - started) }, "memories searched");
  return out;
}

async function countSearch(deps: MemoriesDeps, owner: string, sessionId: string): Promise<void> {
  const count = await deps.sessions.increment(sessionKey(owner, sessionId, "memrecall:searches"), SESSION_TTL_MS);
  if (count <= deps.maxSearchesPerSession) return;
  throw new ToolError({
    code: "failed_precondition",
    reason: "SEARCH_LIMIT_REACHED",
    message: `本次召回会话已连续搜索 ${deps.maxSearchesPerSession} 次（上限），不能继续搜索`,
    metadata: { session_id: sessionId, max_searches: String(deps.maxSearchesPerSession) },
    hint: {
      message: "调用 handoff 结束任务：用已有结果总结，或设置 needs_more_info=true 并提出 follow_up_question 向用户询问更多细节。",
      nextRpc: "contextloader.memrecall.v1.MemRecallService/Handoff",
    },
  });
}

interface Ranked {
  memory_key: string;
  relevance: number;
}

async function runSearch(deps: MemoriesDeps, ctx: CallContext, owner: string, version: number, input: Omit<SearchMemoriesInput, "session_id">): Promise<SearchOutput> {
  const filters: MemoryFilters = {
    ...(input.memory_types.length > 0 ? { memory_types: input.memory_types } : {}),
    ...(input.keywords.length > 0 ? { keywords: input.keywords } : {}),
    ...(input.time_range_days !== undefined ? { created_since: new Date(Date.now() - input.time_range_days * 86_400_000) } : {}),
  };
  const notes: string[] = [];
  // Keyword search is literal. Semantic and hybrid search look for meaning: the
  // LLM's expansion (when one is configured) joins the query everywhere; the
  // glossary's equivalents across languages join hybrid search's word side only
  // (in an embedding, a list of synonyms drowns the query: measured on the eval set).
  const llmTerms = input.search_mode === "keyword" ? [] : await expand(deps, ctx, input.query, input.keywords, notes);
  const expansionFailed = notes.length > 0;
  const glossaryTerms = input.search_mode === "hybrid" ? equivalentsOf([input.query, ...input.keywords].join(" ")) : [];
  const expansion = [...new Set([...glossaryTerms, ...llmTerms])];
  const queryTokens = searchTokens(input.query);
  const extraTokens = searchTokens([...input.keywords, ...expansion].join(" ")).filter((t) => !queryTokens.includes(t));

  const lists: Ranked[][] = [];
  if (input.search_mode !== "semantic") lists.push(await keywordRanking(deps, ctx, owner, version, { tokens: queryTokens, extra: extraTokens }, filters));
  if (input.search_mode !== "keyword") {
    const [vector] = await deps.embedder.embed(ctx, [[input.query, ...input.keywords, ...llmTerms].join(" ")]);
    const nearest = await deps.index.nearest(owner, version, vector!, filters, CANDIDATES);
    // Below the floor a cosine is what unrelated texts share: such a memory is no semantic candidate at all.
    lists.push(
      nearest.filter((n) => n.score > deps.semanticFloor).map((n) => ({ memory_key: n.memory_key, relevance: calibrate(n.score, deps.semanticFloor, deps.semanticCeiling) })),
    );
  }
  // Fusion decides which memories make the cut; they are shown by relevance (spec §2.1: 按相关性分数排序),
  // the fused order breaking ties.
  const chosen = fuse(lists)
    .filter((r) => r.relevance >= input.min_relevance_score)
    .slice(0, input.limit)
    .map((r, i) => ({ ...r, i }))
    .sort((a, b) => b.relevance - a.relevance || a.i - b.i);
  const records = new Map((await deps.store.getMany(owner, chosen.map((c) => c.memory_key))).map((r) => [r.memory_key, r]));
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
async function keywordRanking(deps: MemoriesDeps, ctx: CallContext, owner: string, version: number, query: KeywordQuery, filters: MemoryFilters): Promise<Ranked[]> {
  const lookup = lookupTokens(query.tokens, query.extra);
  if (deps.index.has(owner, version)) {
    const hits = await deps.index.keywordTop(owner, version, query, lookup, filters, CANDIDATES);
    return hits.map((h) => ({ memory_key: h.memory_key, relevance: round3(h.score) }));
  }
  // Every match, not the store's best few by its own rank (bm25 counts other users' rows): the
  // same candidates and order as the index gives, so a search says the same before and after it loads.
  const hits = await deps.store.keywordSearch(owner, lookup, filters, MAX_COLD_MATCHES);
  deps.index.warm(owner, version, (err) => ctx.log.warn({ err }, "memory index not loaded; searches use the store's full-text index"));
  return hits
    .map((h) => ({
      memory_key: h.memory_key,
      relevance: Math.max(coverage(query.tokens, h.search_text), query.extra.length > 0 ? 0.9 * coverage(query.extra, h.search_text) : 0),
      tokens: h.search_text.split(" ").length,
    }))
    .sort((a, b) => b.relevance - a.relevance || a.tokens - b.tokens || (a.memory_key < b.memory_key ? -1 : a.memory_key > b.memory_key ? 1 : 0))
    .slice(0, CANDIDATES)
    .map(({ memory_key, relevance }) => ({ memory_key, relevance: round3(relevance) }));
}

const calibrate = (cosine: number, floor: number, ceiling: number) => round3(Math.min(1, Math.max(0, (cosine - floor) / (ceiling - floor))));

/** One list as it is; several fused by reciprocal rank, relevance the best a memory got. */
function fuse(lists: Ranked[][]): Ranked[] {
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
  return [...merged.entries()].sort((a, b) => b[1].rrf - a[1].rrf || b[1].relevance - a[1].relevance).map(([memory_key, m]) => ({ memory_key, relevance: m.relevance }));
}

/**
 * The LLM's keywords and restated query for a semantic or hybrid search,
 * cached 5 minutes (spec §6.1). No LLM: none. A failing LLM does not fail the
 * search: it runs on the query, and the message says so.
 */
async function expand(deps: MemoriesDeps, ctx: CallContext, query: string, keywords: string[], notes: string[]): Promise<string[]> {
  if (!deps.llm) return [];
  const key = `cl:memrecall:expand:${digest({ query, keywords })}`;
  const hit = await deps.sessions.getJson<string[]>(key).catch(() => undefined);
  if (hit) return hit;
  const extraction = await extractKeywords(deps.llm, ctx, [query, ...keywords].join(" "), "", 5);
  if (extraction.method !== "llm") {
    // Neither the expansion nor the search is cached: the next search asks the LLM again.
    notes.push(`查询扩展不可用（${extraction.note ?? "LLM 无结果"}），已按原查询搜索`);
    return [];
  }
  const terms = [...extraction.keywords.map((k) => k.keyword), ...(extraction.expanded_query ? [extraction.expanded_query] : [])];
  deps.sessions.setJson(key, terms, EXPANSION_TTL_MS).catch((err: unknown) => ctx.log.warn({ err }, "cache write failed"));
  return terms;
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

/** `text` cut to at most `maxBytes` of UTF-8 without splitting a character. */
function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return { text: text.slice(0, end), truncated: true };
}
