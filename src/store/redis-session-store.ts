import type { Cluster, Redis } from "ioredis";
import type { Logger } from "pino";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { checkSentinels, connectRedis, type RedisConnection } from "./redis-connection";
import { fitToSize, REDIS_TTL_MS, type SessionStore } from "./session-store";

export type RedisSessionStoreOptions = RedisConnection & {
  maxValueBytes: number;
  /** Per-command timeout, ms. */
  commandTimeoutMs: number;
  log: Logger;
  defaultTtlMs?: number;
};

/**
 * The session store in Redis (ioredis: single node, Cluster, or behind
 * Sentinel): what lets any replica serve any call of a session. Every write
 * refreshes the entry's TTL. Redis being down is UNAVAILABLE for the call,
 * never an empty session.
 */
export class RedisSessionStore implements SessionStore {
  readonly kind = "redis";
  private readonly redis: Redis | Cluster;

  constructor(private readonly opts: RedisSessionStoreOptions) {
    this.redis = connectRedis(opts, opts.commandTimeoutMs);
    // Connection trouble is reported per call; the client reconnects on its own.
    this.redis.on("error", (err: Error) => opts.log.warn({ err: err.message }, "redis connection error"));
  }

  /**
   * Behind Sentinel, checks that the sentinels name the master (a
   * RedisSentinelError says which setting to fix). Redis itself down at
   * start-up is an outage, not a setting: calls and /readyz report it.
   */
  async start(): Promise<void> {
    if ("sentinel" in this.opts) await checkSentinels(this.opts.sentinel, this.opts.log);
  }

  get defaultTtlMs(): number {
    return this.opts.defaultTtlMs ?? REDIS_TTL_MS;
  }

  async getJson<T>(key: string): Promise<T | undefined> {
    const raw = await this.run(() => this.redis.get(key));
    return raw === null ? undefined : (JSON.parse(raw) as T);
  }

  async setJson(key: string, value: unknown, ttlMs?: number): Promise<void> {
    const { json, truncated } = fitToSize(value, this.opts.maxValueBytes);
    if (truncated)
      this.opts.log.warn(
        { key, max_bytes: this.opts.maxValueBytes },
        "session value over the size limit: kept its first 80% and last 20%",
      );
    await this.run(() => this.redis.set(key, json, "PX", ttlMs ?? this.defaultTtlMs));
  }

  async append(key: string, value: unknown, ttlMs?: number): Promise<number> {
    const { json, truncated } = fitToSize(value, this.opts.maxValueBytes);
    if (truncated)
      this.opts.log.warn(
        { key, max_bytes: this.opts.maxValueBytes },
        "session list item over the size limit: kept its first 80% and last 20%",
      );
    const results = await this.run(() =>
      this.redis
        .multi()
        .rpush(key, json)
        .pexpire(key, ttlMs ?? this.defaultTtlMs)
        .exec(),
    );
    return Number(checked(results)[0]);
  }

  async list<T>(key: string): Promise<T[]> {
    const items = await this.run(() => this.redis.lrange(key, 0, -1));
    return items.map((s) => JSON.parse(s) as T);
  }

  async claim(key: string, members: string[], ttlMs?: number): Promise<string[]> {
    if (members.length === 0) return [];
    // One SADD per member inside MULTI: each reply says whether this call added it.
    const tx = this.redis.multi();
    for (const m of members) tx.sadd(key, m);
    tx.pexpire(key, ttlMs ?? this.defaultTtlMs);
    const results = checked(await this.run(() => tx.exec()));
    return members.filter((_, i) => Number(results[i]) === 1);
  }

  async increment(key: string, ttlMs?: number): Promise<number> {
    const results = await this.run(() =>
      this.redis
        .multi()
        .incr(key)
        .pexpire(key, ttlMs ?? this.defaultTtlMs)
        .exec(),
    );
    return Number(checked(results)[0]);
  }

  async counter(key: string): Promise<number> {
    const raw = await this.run(() => this.redis.get(key));
    return raw === null ? 0 : Number(raw);
  }

  async delete(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    // Keys of different sessions may sit in different Cluster slots: delete one by one.
    await this.run(() => Promise.all(keys.map((k) => this.redis.del(k))));
  }

  async touch(keys: string[], ttlMs?: number): Promise<void> {
    if (keys.length === 0) return;
    await this.run(() => Promise.all(keys.map((k) => this.redis.pexpire(k, ttlMs ?? this.defaultTtlMs))));
  }

  async ping(): Promise<void> {
    await this.run(() => this.redis.ping());
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  /**
   * Runs a command, every failure UNAVAILABLE. While the client knows the
   * connection is lost (reconnecting), it fails at once instead of waiting
   * REDIS_COMMAND_TIMEOUT_MS in the offline queue: every call in flight would
   * otherwise hold its slot that long per command, for as long as Redis is
   * away. Before the first connection commands do wait, so a call arriving
   * just after start-up is not refused.
   */
  private async run<T>(op: () => Promise<T>): Promise<T> {
    try {
      if (LOST.has(this.redis.status)) throw new Error(`not connected (${this.redis.status})`);
      return await op();
    } catch (err) {
      throw new ToolError({
        code: "unavailable",
        reason: "SESSION_STORE_UNAVAILABLE",
        message: text(
          "the session store (Redis) did not answer; retry shortly",
          "会话存储（Redis）没有响应；请稍后重试",
        ),
        metadata: { store: "redis" },
        // Redis's own words can name its host and port: logged under the trace id, never answered.
        privateDetail: (err as Error).message,
        hint: {
          message: text(
            "Retry the same call in a few seconds. If the session's schema is gone once the session store is back, call RetrieveSchema again in that session.",
            "几秒后原样重试。若会话存储恢复后该会话的 schema 已不在，请在该会话中重新调用 RetrieveSchema。",
          ),
        },
        cause: err,
      });
    }
  }
}

/** Client states in which the connection is known to be gone (ioredis `status`). */
const LOST = new Set(["close", "reconnecting", "end"]);

function checked(results: [Error | null, unknown][] | null): unknown[] {
  if (results === null) throw new Error("redis transaction was discarded");
  return results.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
