import type { Logger } from "pino";
import { fitToSize, IN_PROCESS_TTL_MS, type SessionStore } from "./session-store";

type Entry =
  | { kind: "json"; json: string; expiresAt: number }
  | { kind: "list"; items: string[]; expiresAt: number }
  | { kind: "set"; members: Set<string>; expiresAt: number }
  | { kind: "counter"; value: number; expiresAt: number };

const SWEEP_EVERY_MS = 60_000;

/**
 * The session store in this process's memory: for one replica, and for
 * development. Entries expire after their TTL; past `maxEntries` the least
 * recently used go first, so memory stays bounded.
 */
export class InProcessSessionStore implements SessionStore {
  readonly kind = "in_memory";
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly opts: { maxValueBytes: number; maxEntries: number; log: Logger; defaultTtlMs?: number },
  ) {
    this.sweeper = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  get defaultTtlMs(): number {
    return this.opts.defaultTtlMs ?? IN_PROCESS_TTL_MS;
  }

  async getJson<T>(key: string): Promise<T | undefined> {
    const e = this.live(key, "json");
    return e ? (JSON.parse(e.json) as T) : undefined;
  }

  async setJson(key: string, value: unknown, ttlMs?: number): Promise<void> {
    const { json, truncated } = fitToSize(value, this.opts.maxValueBytes);
    if (truncated)
      this.opts.log.warn(
        { key, max_bytes: this.opts.maxValueBytes },
        "session value over the size limit: kept its first 80% and last 20%",
      );
    this.put(key, { kind: "json", json, expiresAt: this.expiry(ttlMs) });
  }

  async append(key: string, value: unknown, ttlMs?: number): Promise<number> {
    const { json, truncated } = fitToSize(value, this.opts.maxValueBytes);
    if (truncated)
      this.opts.log.warn(
        { key, max_bytes: this.opts.maxValueBytes },
        "session list item over the size limit: kept its first 80% and last 20%",
      );
    const e = this.live(key, "list") ?? { kind: "list" as const, items: [], expiresAt: 0 };
    e.items.push(json);
    e.expiresAt = this.expiry(ttlMs);
    this.put(key, e);
    return e.items.length;
  }

  async list<T>(key: string): Promise<T[]> {
    return (this.live(key, "list")?.items ?? []).map((s) => JSON.parse(s) as T);
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
    for (const k of keys) this.entries.delete(k);
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
  }

  private expiry(ttlMs: number | undefined): number {
    return Date.now() + (ttlMs ?? this.defaultTtlMs);
  }

  private live<K extends Entry["kind"]>(key: string, kind: K): Extract<Entry, { kind: K }> | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= Date.now()) {
      this.entries.delete(key);
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
    while (this.entries.size > this.opts.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
  }
}
