import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { MemoryFilters, MemoryStore, MemoryVector } from "../store/memories/memory-store";
import { EQUIVALENT_CREDIT, idfOf, type KeywordQuery, LEXICON_CREDIT } from "./search-text";

/** A loaded index is dropped after this long even without a write (a safety net for missed versions). */
const MAX_AGE_MS = 10 * 60_000;
/** Room left for memories added in place, so most writes do not copy the matrix. */
const GROWTH = 1.25;

export interface Hit {
  memory_key: string;
  /** What the caller's scoring function gave the memory. */
  score: number;
}

/** What a ranking looks at: the keyword query and the tokens that make a memory a candidate, the query's embedding, or both. */
export interface IndexQuery {
  keyword?: { query: KeywordQuery; lookup: string[] };
  vector?: Float32Array;
}

/**
 * A memory's score from its keyword share (0 without a keyword query, or when
 * it holds no lookup token) and its cosine with the query's embedding (0
 * without one, or when it was embedded by another model); a score of 0 or
 * less leaves it out.
 */
export type Scoring = (share: number, cosine: number) => number;

/**
 * One user's memories as search needs them, in this process.
 *
 * Embeddings are column-major: dimension d of memory i is
 * columns[d * capacity + i]. A query costs one pass over n floats per
 * dimension it actually uses (the local embedder's queries use a tenth of
 * theirs), and a memory added in place fills a free slot of every column.
 *
 * Search tokens are an inverted index (token → slots), so keyword relevance
 * — the share of the query's IDF weight a memory holds — is summed over the
 * postings of the query's tokens and their equivalents only, without ranking
 * in SQL.
 */
class UserIndex {
  loadedAt = Date.now();
  keys: string[] = [];
  types: string[] = [];
  created: number[] = [];
  stated: number[] = [];
  updated: number[] = [];
  keywords: Set<string>[] = [];
  /** False for a memory embedded with another size than the rest (another embeddings model): found by words only. */
  private hasVector: boolean[] = [];
  private readonly slots = new Map<string, number>();
  private capacity = 0;
  private columns = new Float32Array(0);
  private readonly tokenIds = new Map<string, number>();
  private readonly postings: number[][] = [];
  private docTokens: number[][] = [];

  constructor(
    public version: number,
    public dims: number,
    rows: MemoryVector[],
  ) {
    this.grow(Math.ceil(rows.length * GROWTH));
    for (const r of rows) this.put(r);
  }

  get size(): number {
    return this.keys.length;
  }

  /** The bytes of the embedding matrix (free slots included). */
  get embeddingBytes(): number {
    return this.columns.byteLength;
  }

  /** Adds the memory, or replaces the one with its key. */
  put(v: MemoryVector): void {
    if (this.size === 0 && v.embedding.length !== this.dims) {
      // The first memory of a user loaded empty sets the size.
      this.dims = v.embedding.length;
      this.capacity = 0;
      this.columns = new Float32Array(0);
    }
    let i = this.slots.get(v.memory_key);
    if (i === undefined) {
      if (this.size === this.capacity) this.grow(Math.max(16, Math.ceil(this.capacity * GROWTH)));
      i = this.size;
      this.slots.set(v.memory_key, i);
      this.keys.push(v.memory_key);
    } else {
      for (const t of this.docTokens[i]!) removeFrom(this.postings[t]!, i);
    }
    this.types[i] = v.memory_type;
    this.created[i] = v.created_at.getTime();
    this.stated[i] = v.stated_at.getTime();
    this.updated[i] = v.updated_at.getTime();
    this.keywords[i] = new Set(v.keywords.map((k) => k.toLowerCase()));
    const fits = v.embedding.length === this.dims;
    this.hasVector[i] = fits;
    for (let d = 0; d < this.dims; d++) this.columns[d * this.capacity + i] = fits ? v.embedding[d]! : 0;
    const tokens = [...new Set(v.search_text.split(" ").filter((t) => t !== ""))].map((t) => this.tokenId(t));
    for (const t of tokens) this.postings[t]!.push(i);
    this.docTokens[i] = tokens;
  }

  /** Removes a memory: the last one moves into its slot. */
  remove(key: string): void {
    const i = this.slots.get(key);
    if (i === undefined) return;
    for (const t of this.docTokens[i]!) removeFrom(this.postings[t]!, i);
    const last = this.size - 1;
    if (i !== last) {
      const moved = this.keys[last]!;
      this.keys[i] = moved;
      this.types[i] = this.types[last]!;
      this.created[i] = this.created[last]!;
      this.stated[i] = this.stated[last]!;
      this.updated[i] = this.updated[last]!;
      this.keywords[i] = this.keywords[last]!;
      this.docTokens[i] = this.docTokens[last]!;
      this.hasVector[i] = this.hasVector[last]!;
      for (let d = 0; d < this.dims; d++) this.columns[d * this.capacity + i] = this.columns[d * this.capacity + last]!;
      // The moved memory was added last, so its slot sits near the end of each list.
      for (const t of this.docTokens[i]!) {
        const list = this.postings[t]!;
        list[list.lastIndexOf(last)] = i;
      }
      this.slots.set(moved, i);
    }
    this.slots.delete(key);
    for (const list of [
      this.keys,
      this.types,
      this.created,
      this.stated,
      this.updated,
      this.keywords,
      this.docTokens,
      this.hasVector,
    ])
      list.pop();
  }

  /**
   * Every memory's dot product with the query, over the dimensions the query
   * uses only, four at a time: one pass over the scores per four columns keeps
   * memory traffic down (measured: about twice as fast as one at a time).
   */
  cosines(query: Float32Array): Float64Array {
    const n = this.size;
    const cap = this.capacity;
    const cols = this.columns;
    const scores = new Float64Array(n);
    const used: number[] = [];
    for (let d = 0; d < query.length; d++) if (query[d] !== 0) used.push(d);
    let k = 0;
    for (; k + 4 <= used.length; k += 4) {
      const [d0, d1, d2, d3] = [used[k]!, used[k + 1]!, used[k + 2]!, used[k + 3]!];
      const [w0, w1, w2, w3] = [query[d0]!, query[d1]!, query[d2]!, query[d3]!];
      const [b0, b1, b2, b3] = [d0 * cap, d1 * cap, d2 * cap, d3 * cap];
      for (let i = 0; i < n; i++)
        scores[i]! += w0 * cols[b0 + i]! + w1 * cols[b1 + i]! + w2 * cols[b2 + i]! + w3 * cols[b3 + i]!;
    }
    for (; k < used.length; k++) {
      const w = query[used[k]!]!;
      const b = used[k]! * cap;
      for (let i = 0; i < n; i++) scores[i]! += w * cols[b + i]!;
    }
    for (let i = 0; i < n; i++) if (!this.hasVector[i]) scores[i] = -Infinity;
    return scores;
  }

  /**
   * The keyword share (search-text.ts `keywordShare`) of every memory
   * holding a lookup token; the others score 0. It is that function turned
   * inside out: each query word adds its share to the memories on its posting
   * list, and EQUIVALENT_CREDIT of it to those on its equivalents' lists that
   * do not hold it, so a search touches only those memories, not every one.
   */
  /** The slots holding every token of one of the phrases. */
  private phraseSlots(phrases: readonly string[][]): Set<number> {
    const out = new Set<number>();
    for (const p of phrases) {
      const lists = p.map((t) => this.postingsOf(t)).sort((a, b) => a.length - b.length);
      if (lists[0]!.length === 0) continue;
      const others = lists.slice(1).map((l) => new Set(l));
      for (const slot of lists[0]!) if (others.every((o) => o.has(slot))) out.add(slot);
    }
    return out;
  }

  shares(q: KeywordQuery, lookup: string[]): Float64Array {
    const n = this.size;
    const scores = new Float64Array(n);
    // Only memories holding a lookup token are candidates (the store's full-text search finds the same ones).
    const candidate = new Uint8Array(n);
    for (const t of lookup) for (const slot of this.postingsOf(t)) candidate[slot] = 1;
    const total = q.tokens.reduce((sum, t) => sum + idfOf(t), 0);
    if (total > 0) {
      // The query word a slot was last credited for: a word counts once, whole or as an equivalent.
      const creditedFor = new Int32Array(n).fill(-1);
      q.tokens.forEach((t, i) => {
        const w = idfOf(t) / total;
        for (const slot of this.postingsOf(t)) {
          scores[slot]! += w;
          creditedFor[slot] = i;
        }
        for (const e of q.equivalents[i]!) {
          for (const slot of this.postingsOf(e)) {
            if (creditedFor[slot] === i) continue;
            scores[slot]! += EQUIVALENT_CREDIT * w;
            creditedFor[slot] = i;
          }
        }
        for (const slot of this.phraseSlots(q.phrases[i]!)) {
          if (creditedFor[slot] === i) continue;
          scores[slot]! += LEXICON_CREDIT * w;
          creditedFor[slot] = i;
        }
      });
    }
    const extraTotal = q.extra.reduce((sum, t) => sum + idfOf(t), 0);
    if (extraTotal > 0) {
      const extra = new Float64Array(n);
      for (const t of q.extra) {
        const w = (EQUIVALENT_CREDIT * idfOf(t)) / extraTotal;
        for (const slot of this.postingsOf(t)) extra[slot]! += w;
      }
      for (let i = 0; i < n; i++) if (extra[i]! > scores[i]!) scores[i] = extra[i]!;
    }
    for (let i = 0; i < n; i++) if (candidate[i] === 0) scores[i] = 0;
    return scores;
  }

  private postingsOf(token: string): readonly number[] {
    const id = this.tokenIds.get(token);
    return id === undefined ? [] : this.postings[id]!;
  }

  private tokenId(token: string): number {
    let id = this.tokenIds.get(token);
    if (id === undefined) {
      id = this.postings.length;
      this.tokenIds.set(token, id);
      this.postings.push([]);
    }
    return id;
  }

  private grow(capacity: number): void {
    const next = new Float32Array(capacity * this.dims);
    for (let d = 0; d < this.dims; d++)
      next.set(this.columns.subarray(d * this.capacity, d * this.capacity + this.size), d * capacity);
    this.columns = next;
    this.capacity = capacity;
  }
}

/** The embedding size most memories have (after a model change, the minority is found by words only). */
function commonestLength(rows: MemoryVector[]): number {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(r.embedding.length, (counts.get(r.embedding.length) ?? 0) + 1);
  let best = 0;
  for (const [len, n] of counts) if (n > (counts.get(best) ?? 0)) best = len;
  return best;
}

function removeFrom(list: number[], slot: number): void {
  const at = list.lastIndexOf(slot);
  if (at === -1) return;
  list[at] = list[list.length - 1]!;
  list.pop();
}

/** A write this process made, to apply to its own index in place. */
export type IndexChange = { put: MemoryVector } | { remove: string };

/**
 * The in-process search index of each user's memories (embeddings and search
 * tokens), read from the store and kept while the user's memory version (a
 * counter incremented on every write, shared through the session store by
 * every replica) stays the same. A write made here moves the index to the new
 * version in place when it was the only write since (the counter went up by
 * exactly one); any other change means a reload. Scores are exact: nothing
 * relevant is missed for an approximation.
 */
export class MemoryIndex {
  private readonly users = new Map<string, UserIndex>();
  /** Loads in progress by user and version: concurrent searches after a write share one read of the store. */
  private readonly loading = new Map<string, Promise<UserIndex>>();

  constructor(
    private readonly store: MemoryStore,
    private readonly maxUsers: number,
  ) {}

  /** Writes of one user in this process, one after another: their versions then move in commit order. */
  private readonly writing = new Map<string, Promise<unknown>>();
  /** Users with writes committed here whose version change the session store could not record yet, and how many. */
  private readonly unrecordedWrites = new Map<string, number>();

  async serially<T>(userId: string, write: () => Promise<T>): Promise<T> {
    const before = this.writing.get(userId) ?? Promise.resolve();
    const mine = before.then(write, write);
    const tail = mine.catch(() => undefined);
    this.writing.set(userId, tail);
    try {
      return await mine;
    } finally {
      if (this.writing.get(userId) === tail) this.writing.delete(userId);
    }
  }

  /** What the index holds now, for /metrics: users loaded, their memories, the bytes of their embeddings. */
  usage(): { users: number; memories: number; embeddingBytes: number } {
    let memories = 0;
    let embeddingBytes = 0;
    for (const u of this.users.values()) {
      memories += u.size;
      embeddingBytes += u.embeddingBytes;
    }
    return { users: this.users.size, memories, embeddingBytes };
  }

  /**
   * A committed write of the user's could not move the version in the
   * session store (Redis down): until `recorded`, no version read for the
   * user can be trusted here, so searches read the store (see versionOf).
   */
  unrecorded(userId: string): void {
    this.unrecordedWrites.set(userId, (this.unrecordedWrites.get(userId) ?? 0) + 1);
    this.users.delete(userId);
  }

  /** The version change of one of the user's unrecorded writes is recorded now (or needs no recording any more). */
  recorded(userId: string): void {
    const left = (this.unrecordedWrites.get(userId) ?? 1) - 1;
    if (left > 0) this.unrecordedWrites.set(userId, left);
    else this.unrecordedWrites.delete(userId);
  }

  /** True while a write of the user's made here waits for its version change to be recorded. */
  hasUnrecorded(userId: string): boolean {
    return this.unrecordedWrites.has(userId);
  }

  /** Drops the user's index: the next search reads the store. */
  forget(userId: string): void {
    this.users.delete(userId);
  }

  /** True when the user's index at this version is in memory (a search then needs no store read). */
  has(userId: string, version: number | undefined): boolean {
    const u = this.users.get(userId);
    return u !== undefined && u.version === version && Date.now() - u.loadedAt < MAX_AGE_MS;
  }

  /**
   * Starts loading the user's index without waiting; a failure only means the
   * next search loads it. An unknown version loads nothing: it could not be kept.
   */
  warm(userId: string, version: number | undefined, onError: (err: unknown) => void): void {
    if (version !== undefined) this.load(userId, version).catch(onError);
  }

  /**
   * The best `limit` memories that pass the filters by `score` of their
   * keyword share and cosine (whichever the query asks for), best first;
   * equal scores: the most recently written first, then by key.
   */
  async rank(
    userId: string,
    version: number | undefined,
    query: IndexQuery,
    filters: MemoryFilters,
    limit: number,
    score: Scoring,
  ): Promise<Hit[]> {
    const u = await this.load(userId, version);
    if (u.size === 0) return [];
    if (query.vector && u.dims !== query.vector.length) {
      throw new ToolError({
        code: "failed_precondition",
        reason: "EMBEDDINGS_CHANGED",
        message: text(
          `this user's memories were embedded with ${u.dims} dimensions and the query with ${query.vector.length}: the embeddings model changed since they were stored`,
          `该用户的记忆以 ${u.dims} 维向量化，而查询是 ${query.vector.length} 维：记忆保存之后向量化模型已更换`,
        ),
        hint: {
          message: text(
            "Search with search_mode=keyword, or ask the operators to re-embed the memories (store them again) with the current EMBEDDINGS_MODEL.",
            "用 search_mode=keyword 搜索，或请运维人员用当前的 EMBEDDINGS_MODEL 重新向量化这些记忆（重新保存它们）。",
          ),
        },
      });
    }
    const shares = query.keyword ? u.shares(query.keyword.query, query.keyword.lookup) : undefined;
    const cosines = query.vector ? u.cosines(query.vector) : undefined;
    const scores = new Float64Array(u.size);
    for (let i = 0; i < scores.length; i++) {
      const cosine = cosines?.[i] ?? 0;
      // A memory embedded by another model has no cosine: found by its words only.
      scores[i] = score(shares?.[i] ?? 0, cosine === -Infinity ? 0 : cosine);
    }
    return top(u, scores, filters, limit);
  }

  /**
   * A write this process made took the user's version to `version`. When the
   * index was at the version just before, no other write came between: apply
   * this one in place. Otherwise leave it; the next search reloads.
   */
  applied(userId: string, version: number, change: IndexChange): void {
    const u = this.users.get(userId);
    if (!u || u.version !== version - 1) return;
    if ("remove" in change) u.remove(change.remove);
    else u.put(change.put);
    u.version = version;
  }

  /** The user's index at `version`, kept for the next searches; at an unknown version, read for this search only. */
  private async load(userId: string, version: number | undefined): Promise<UserIndex> {
    if (version === undefined) {
      const rows = await this.store.vectors(userId);
      return new UserIndex(-1, commonestLength(rows), rows);
    }
    const cached = this.users.get(userId);
    if (cached && this.has(userId, version)) {
      this.users.delete(userId);
      this.users.set(userId, cached);
      return cached;
    }
    const key = `${userId}\u0000${version}`;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.read(userId, version).finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }

  private async read(userId: string, version: number): Promise<UserIndex> {
    const rows = await this.store.vectors(userId);
    const loaded = new UserIndex(version, commonestLength(rows), rows);
    this.users.delete(userId);
    this.users.set(userId, loaded);
    while (this.users.size > this.maxUsers) {
      const oldest = this.users.keys().next().value;
      if (oldest === undefined) break;
      this.users.delete(oldest);
    }
    return loaded;
  }
}

/**
 * The best `limit` slots with a score above 0 that pass the filters (ties: the
 * most recently written first, then by memory key), in a small sorted list.
 */
function top(u: UserIndex, scores: Float64Array, filters: MemoryFilters, limit: number): Hit[] {
  const types = filters.memory_types && filters.memory_types.length > 0 ? new Set(filters.memory_types) : undefined;
  const since = filters.created_since?.getTime();
  const statedBy = filters.stated_by?.getTime();
  const wanted =
    filters.keywords && filters.keywords.length > 0 ? filters.keywords.map((k) => k.toLowerCase()) : undefined;
  type Entry = { score: number; updated: number; key: string };
  const best: Entry[] = [];
  const before = (a: Entry, b: Entry) =>
    a.score > b.score || (a.score === b.score && (a.updated > b.updated || (a.updated === b.updated && a.key < b.key)));
  for (let i = 0; i < scores.length; i++) {
    const score = scores[i]!;
    if (!(score > 0)) continue;
    const worst = best[limit - 1];
    if (worst && score < worst.score) continue;
    if (types && !types.has(u.types[i]!)) continue;
    if (since !== undefined && u.created[i]! < since) continue;
    if (statedBy !== undefined && u.stated[i]! > statedBy) continue;
    if (wanted && !wanted.some((k) => u.keywords[i]!.has(k))) continue;
    const entry = { score, updated: u.updated[i]!, key: u.keys[i]! };
    if (worst && !before(entry, worst)) continue;
    let at = best.length;
    while (at > 0 && before(entry, best[at - 1]!)) at--;
    best.splice(at, 0, entry);
    if (best.length > limit) best.pop();
  }
  return best.map((b) => ({ memory_key: b.key, score: b.score }));
}
