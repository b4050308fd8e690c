/**
 * The session store: short-lived state shared by the calls of one agent
 * session (the schema recalled in step one, what was already returned, the
 * rounds so far) and small caches. Two implementations pass one contract suite:
 * in-process memory (entries live 24 h) and Redis (2 h), so any number of
 * replicas can serve one session. Values are JSON; a value over the size limit
 * keeps its first 80 % and its last 20 % (spec data-retrieval-tools §2.8), and
 * stays valid JSON.
 */
export interface SessionStore {
  readonly kind: "in_memory" | "redis";
  /** How long entries live unless a call says otherwise, ms. */
  readonly defaultTtlMs: number;

  getJson<T>(key: string): Promise<T | undefined>;
  setJson(key: string, value: unknown, ttlMs?: number): Promise<void>;
  /** Appends to a list and returns its new length. */
  append(key: string, value: unknown, ttlMs?: number): Promise<number>;
  /** The list's items, oldest first. */
  list<T>(key: string): Promise<T[]>;
  /**
   * Adds members to a set and returns those that were not in it yet. Atomic per
   * member: when concurrent calls claim the same member, exactly one gets it.
   */
  claim(key: string, members: string[], ttlMs?: number): Promise<string[]>;
  /** Increments a counter and returns the new value (1 for a new counter). */
  increment(key: string, ttlMs?: number): Promise<number>;
  /** A counter's value (0 when it does not exist). */
  counter(key: string): Promise<number>;
  delete(keys: string[]): Promise<void>;
  /** Restarts the time to live of these keys (those that exist). */
  touch(keys: string[], ttlMs?: number): Promise<void>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Entries of the in-memory store live 24 hours; Redis entries 2 hours (spec §2.5). */
export const IN_PROCESS_TTL_MS = 24 * 3600_000;
export const REDIS_TTL_MS = 2 * 3600_000;

/**
 * A key of one account's session: every part is escaped, so neither the
 * account nor the session id can reach into another's keys, and the braces
 * keep a session's keys in one Redis Cluster slot.
 */
export function sessionKey(accountId: string, sessionId: string, name: string): string {
  return `cl:s:{${encodeURIComponent(accountId)}:${encodeURIComponent(sessionId)}}:${name}`;
}

/** A key of one account's caches (not tied to a session). */
export function accountKey(accountId: string, name: string): string {
  return `cl:a:{${encodeURIComponent(accountId)}}:${name}`;
}

/**
 * Serialises `value`, shrinking it when it is over `maxBytes`: a list keeps its
 * first items up to 80 % of the budget and its last up to 20 %; a string keeps
 * its first 80 % and last 20 % around "…"; an object shrinks its largest field.
 * Returns the JSON and whether anything was cut.
 */
export function fitToSize(value: unknown, maxBytes: number): { json: string; truncated: boolean } {
  let json = JSON.stringify(value);
  // A UTF-16 unit is at most 3 bytes of UTF-8: most values are far below the limit and need no byte count.
  if (json === undefined || json.length * 3 <= maxBytes || Buffer.byteLength(json) <= maxBytes)
    return { json, truncated: false };
  const shrunk = shrink(value, maxBytes);
  json = JSON.stringify(shrunk);
  return { json, truncated: true };
}

/** The bytes of the "…" a cut string gets. */
const ELLIPSIS_BYTES = 3;

function size(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? "");
}

function shrink(value: unknown, budget: number): unknown {
  if (typeof value === "string") {
    const chars = [...value];
    // What each character costs as JSON (3 bytes for most Chinese, 4 for an emoji, 6 for an escaped control character).
    const cost = chars.map((c) => Buffer.byteLength(JSON.stringify(c)) - 2);
    const room = budget - 2 - ELLIPSIS_BYTES;
    if (cost.reduce((s, c) => s + c, 0) <= budget - 2) return value;
    let head = 0;
    let used = 0;
    while (head < chars.length && used + cost[head]! <= room * 0.8) used += cost[head++]!;
    let tail = chars.length;
    while (tail > head && used + cost[tail - 1]! <= room) used += cost[--tail]!;
    return `${chars.slice(0, head).join("")}…${chars.slice(tail).join("")}`;
  }
  if (Array.isArray(value)) {
    const head: unknown[] = [];
    let used = 2;
    for (const item of value) {
      const s = size(item) + 1;
      if (used + s > budget * 0.8) break;
      head.push(item);
      used += s;
    }
    const tail: unknown[] = [];
    for (let i = value.length - 1; i >= head.length; i--) {
      const s = size(value[i]) + 1;
      if (used + s > budget) break;
      tail.unshift(value[i]);
      used += s;
    }
    return [...head, ...tail];
  }
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    // Each round brings one more field within what the others leave: at most one round a field.
    for (let round = 0; round <= Object.keys(out).length && size(out) > budget; round++) {
      const [largest] = Object.keys(out).sort((a, b) => size(out[b]) - size(out[a]));
      if (largest === undefined) break;
      const others = size(out) - size(out[largest]);
      out[largest] = shrink(out[largest], Math.max(16, budget - others));
    }
    return out;
  }
  return value;
}
