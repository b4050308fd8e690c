import { ToolError } from "../errors/tool-error";
import type { MemoryFilters, MemoryStore, MemoryVector } from "../store/memory-store";

/** Loaded vectors are dropped after this long even without a write (a safety net for missed versions). */
const MAX_AGE_MS = 10 * 60_000;
/** Room left for memories added in place, so most writes do not copy the matrix. */
const GROWTH = 1.25;

/**
 * One user's embeddings, column-major: dimension d of memory i is
 * columns[d * capacity + i]. A query then costs one pass over n floats per
 * dimension it actually uses (the local embedder's queries use a tenth of
 * theirs), and a memory added in place fills a free slot of every column.
 */
class UserVectors {
  loadedAt = Date.now();
  keys: string[] = [];
  types: string[] = [];
  created: number[] = [];
  keywords: Set<string>[] = [];
  private readonly slots = new Map<string, number>();
  private capacity = 0;
  private columns = new Float32Array(0);

  constructor(
    public version: number,
    readonly dims: number,
    rows: MemoryVector[],
  ) {
    this.grow(Math.ceil(rows.length * GROWTH));
    for (const r of rows) this.put(r);
  }

  get size(): number {
    return this.keys.length;
  }

  /** Adds the memory, or replaces the one with its key; false (and nothing done) for a vector of another size. */
  put(v: MemoryVector): boolean {
    if (v.embedding.length !== this.dims) return false;
    let i = this.slots.get(v.memory_key);
    if (i === undefined) {
      if (this.size === this.capacity) this.grow(Math.max(16, Math.ceil(this.capacity * GROWTH)));
      i = this.size;
      this.slots.set(v.memory_key, i);
      this.keys.push(v.memory_key);
    }
    this.types[i] = v.memory_type;
    this.created[i] = v.created_at.getTime();
    this.keywords[i] = new Set(v.keywords.map((k) => k.toLowerCase()));
    for (let d = 0; d < this.dims; d++) this.columns[d * this.capacity + i] = v.embedding[d]!;
    return true;
  }

  /** Removes a memory: the last one moves into its slot. */
  remove(key: string): void {
    const i = this.slots.get(key);
    if (i === undefined) return;
    const last = this.size - 1;
    if (i !== last) {
      const moved = this.keys[last]!;
      this.keys[i] = moved;
      this.types[i] = this.types[last]!;
      this.created[i] = this.created[last]!;
      this.keywords[i] = this.keywords[last]!;
      for (let d = 0; d < this.dims; d++) this.columns[d * this.capacity + i] = this.columns[d * this.capacity + last]!;
      this.slots.set(moved, i);
    }
    this.slots.delete(key);
    this.keys.pop();
    this.types.pop();
    this.created.pop();
    this.keywords.pop();
  }

  /**
   * Every memory's dot product with the query, over the dimensions the query
   * uses only, four at a time: one pass over the scores per four columns keeps
   * memory traffic down (measured: about twice as fast as one at a time).
   */
  scores(query: Float32Array): Float64Array {
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
      for (let i = 0; i < n; i++) scores[i]! += w0 * cols[b0 + i]! + w1 * cols[b1 + i]! + w2 * cols[b2 + i]! + w3 * cols[b3 + i]!;
    }
    for (; k < used.length; k++) {
      const w = query[used[k]!]!;
      const b = used[k]! * cap;
      for (let i = 0; i < n; i++) scores[i]! += w * cols[b + i]!;
    }
    return scores;
  }

  private grow(capacity: number): void {
    const next = new Float32Array(capacity * this.dims);
    for (let d = 0; d < this.dims; d++) next.set(this.columns.subarray(d * this.capacity, d * this.capacity + this.size), d * capacity);
    this.columns = next;
    this.capacity = capacity;
  }
}

/** A write this process made, to apply to its own index in place. */
export type VectorChange = { put: MemoryVector } | { remove: string };

/**
 * Semantic ranking over one user's memories: their embeddings, loaded from the
 * store into memory and kept while the user's memory version (a counter
 * incremented on every write, shared through the session store by every
 * replica) stays the same. A write made here moves the index to the new
 * version in place when it was the only write since (the counter went up by
 * exactly one); any other change means a reload. Scoring is an exact dot
 * product per memory: nothing relevant is missed.
 */
export class VectorIndex {
  private readonly users = new Map<string, UserVectors>();
  /** Loads in progress by user and version: concurrent searches after a write share one read of the store. */
  private readonly loading = new Map<string, Promise<UserVectors>>();

  constructor(
    private readonly store: MemoryStore,
    private readonly maxUsers: number,
  ) {}

  /** The best `limit` memories by cosine with `query` that pass the filters, best first. */
  async nearest(userId: string, version: number, query: Float32Array, filters: MemoryFilters, limit: number): Promise<{ memory_key: string; cosine: number }[]> {
    const v = await this.load(userId, version);
    if (v.size === 0) return [];
    if (v.dims !== query.length) {
      throw new ToolError({
        code: "failed_precondition",
        reason: "EMBEDDINGS_CHANGED",
        message: `this user's memories were embedded with ${v.dims} dimensions and the query with ${query.length}: the embeddings model changed since they were stored`,
        hint: { message: "Search with search_mode=keyword, or ask the operators to re-embed the memories (store them again) with the current EMBEDDINGS_MODEL." },
      });
    }
    const scores = v.scores(query);
    const types = filters.memory_types && filters.memory_types.length > 0 ? new Set(filters.memory_types) : undefined;
    const since = filters.created_since?.getTime();
    const wanted = filters.keywords && filters.keywords.length > 0 ? filters.keywords.map((k) => k.toLowerCase()) : undefined;
    // The best `limit` in a small sorted list; most memories fall below its last entry at once.
    const best: { index: number; cosine: number }[] = [];
    for (let i = 0; i < scores.length; i++) {
      const cosine = scores[i]!;
      if (best.length === limit && cosine <= best[limit - 1]!.cosine) continue;
      if (types && !types.has(v.types[i]!)) continue;
      if (since !== undefined && v.created[i]! < since) continue;
      if (wanted && !wanted.some((k) => v.keywords[i]!.has(k))) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.cosine < cosine) at--;
      best.splice(at, 0, { index: i, cosine });
      if (best.length > limit) best.pop();
    }
    return best.map((b) => ({ memory_key: v.keys[b.index]!, cosine: b.cosine }));
  }

  /**
   * A write this process made took the user's version to `version`. When the
   * index was at the version just before, no other write came between: apply
   * this one in place. Otherwise leave it; the next search reloads.
   */
  applied(userId: string, version: number, change: VectorChange): void {
    const v = this.users.get(userId);
    if (!v || v.version !== version - 1) return;
    if ("remove" in change) {
      v.remove(change.remove);
    } else if (!v.put(change.put)) {
      // A vector of another size (the first memory of a user loaded empty, say): reload.
      this.users.delete(userId);
      return;
    }
    v.version = version;
  }

  private async load(userId: string, version: number): Promise<UserVectors> {
    const cached = this.users.get(userId);
    if (cached && cached.version === version && Date.now() - cached.loadedAt < MAX_AGE_MS) {
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

  private async read(userId: string, version: number): Promise<UserVectors> {
    const rows = await this.store.vectors(userId);
    const loaded = new UserVectors(version, rows[0]?.embedding.length ?? 0, rows);
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
