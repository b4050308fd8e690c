import type { Logger } from "pino";
import { deepFreeze } from "../core/freeze";
import { fitToSize, IN_PROCESS_TTL_MS, type SessionStore } from "./session-store";

/** A stored JSON value, parsed once when written (and frozen, since every reader shares it), with its JSON size. */
interface Value {
  value: unknown;
  bytes: number;
}

type Entry =
  | { kind: "json"; json: Value; expiresAt: number }
  | { kind: "list"; items: Value[]; expiresAt: number }
  | { kind: "set"; members: Set<string>; expiresAt: number }
  | { kind: "counter"; value: number; expiresAt: number };

const SWEEP_EVERY_MS = 60_000;
/** What an entry costs beyond its values (key, Map slot, entry object), counted against maxBytes. */
const ENTRY_OVERHEAD_BYTES = 200;

/**
 * The session store in this process's memory: for one replica, and for
 * development. Entries expire after their TTL; past `maxEntries` entries or
 * `maxBytes` of values (their JSON size) the least recently used go first, so
 * memory stays bounded whatever the entries hold.
 *
 * Values are parsed when written, not on every read: a session's schema
 * rounds are read by every call of the session, and parsing them again each
 * time was a tenth of RetrieveSchema's and KnSearch's CPU. Readers get the
 * stored value itself, deeply frozen, never a copy they could change.
 */
export class InProcessSessionStore implements SessionStore {
  readonly kind = "in_memory";
  private readonly entries = new Map<string, Entry>();
  /** The sizes counted against maxBytes, by key. */
  private readonly sizes = new Map<string, number>();
  private bytes = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly opts: {
      maxValueBytes: number;
      maxEntries: number;
      /** Values kept at most, counted as their JSON size; unbounded when absent. */
      maxBytes?: number;
      log: Logger;
      defaultTtlMs?: number;
    },
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** The entries held, and the bytes counted against maxBytes: what /metrics shows. */
  get usage(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  get defaultTtlMs(): number {
    return this.opts.defaultTtlMs ?? IN_PROCESS_TTL_MS;
  }

  async getJson<T>(key: string): Promise<T | undefined> {
    return this.live(key, "json")?.json.value as T | undefined;
  }

  async setJson(key: string, value: unknown, ttlMs?: number): Promise<void> {
    this.put(key, { kind: "json", json: this.stored(key, value, "value"), expiresAt: this.expiry(ttlMs) });
  }

  async append(key: string, value: unknown, ttlMs?: number): Promise<number> {
    const item = this.stored(key, value, "list item");
    const e = this.live(key, "list") ?? { kind: "list" as const, items: [], expiresAt: 0 };
    e.items.push(item);
    e.expiresAt = this.expiry(ttlMs);
    this.put(key, e);
    return e.items.length;
  }

  async list<T>(key: string): Promise<T[]> {
    return (this.live(key, "list")?.items ?? []).map((item) => item.value as T);
  }

  async claim(key: string, members: string[], ttlMs?: number): Promise<string[]> {
    const e = this.live(key, "set") ?? { kind: "set" as const, members: new Set<string>(), expiresAt: 0 };
    const fresh: string[] = [];
    for (const m of members) {
      if (!e.members.has(m)) {
        e.members.add(m);
        fresh.push(m);
      }
    }
    e.expiresAt = this.expiry(ttlMs);
    this.put(key, e);
    return fresh;
  }

  async increment(key: string, ttlMs?: number): Promise<number> {
    const e = this.live(key, "counter") ?? { kind: "counter" as const, value: 0, expiresAt: 0 };
    e.value += 1;
    e.expiresAt = this.expiry(ttlMs);
    this.put(key, e);
    return e.value;
  }

  async counter(key: string): Promise<number> {
    return this.live(key, "counter")?.value ?? 0;
  }

  async delete(keys: string[]): Promise<void> {
    for (const k of keys) this.remove(k);
  }

  async touch(keys: string[], ttlMs?: number): Promise<void> {
    const now = Date.now();
    for (const k of keys) {
      const e = this.entries.get(k);
      if (e && e.expiresAt > now) e.expiresAt = this.expiry(ttlMs);
    }
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.entries.clear();
    this.sizes.clear();
    this.bytes = 0;
  }

  /** The value as a reader will see it: through JSON (cut to maxValueBytes), parsed, frozen. */
  private stored(key: string, value: unknown, what: string): Value {
    const { json, truncated } = fitToSize(value, this.opts.maxValueBytes);
    if (truncated)
      this.opts.log.warn(
        { key, max_bytes: this.opts.maxValueBytes },
        `session ${what} over the size limit: kept its first 80% and last 20%`,
      );
    return { value: deepFreeze(json === undefined ? undefined : JSON.parse(json)), bytes: json?.length ?? 0 };
  }

  private expiry(ttlMs: number | undefined): number {
    return Date.now() + (ttlMs ?? this.defaultTtlMs);
  }

  private live<K extends Entry["kind"]>(key: string, kind: K): Extract<Entry, { kind: K }> | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) {
      this.remove(key);
      return undefined;
    }
    if (e.kind !== kind) throw new Error(`session key ${key} holds a ${e.kind}, not a ${kind}`);
    // Re-insert so the Map's order is least recently used first.
    this.entries.delete(key);
    this.entries.set(key, e);
    return e as Extract<Entry, { kind: K }>;
  }

  private put(key: string, e: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, e);
    const size = sizeOf(key, e);
    this.bytes += size - (this.sizes.get(key) ?? 0);
    this.sizes.set(key, size);
    const maxBytes = this.opts.maxBytes ?? Infinity;
    while (this.entries.size > this.opts.maxEntries || (this.bytes > maxBytes && this.entries.size > 1)) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.remove(oldest);
    }
  }

  private remove(key: string): void {
    this.entries.delete(key);
    this.bytes -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.remove(k);
  }
}

/** What an entry is counted as against maxBytes: its values' JSON, its key, and a fixed overhead. */
function sizeOf(key: string, e: Entry): number {
  let values = 0;
  if (e.kind === "json") values = e.json.bytes;
  else if (e.kind === "list") for (const item of e.items) values += item.bytes;
  else if (e.kind === "set") for (const m of e.members) values += m.length + 8;
  return ENTRY_OVERHEAD_BYTES + key.length + values;
}
