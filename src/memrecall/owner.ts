import { createHash } from "node:crypto";
import type { CallContext, Caller } from "../core/call-context";
import { type Text, text } from "../errors/text";
import { type ErrorCode, ToolError } from "../errors/tool-error";
import { accountKey } from "../store/session-store";
import type { MemoriesDeps } from "./memories-deps";
import type { IndexChange } from "./memory-index";

/** The version outlives every cache keyed by it. */
const VERSION_TTL_MS = 30 * 86_400_000;

/**
 * The callers who own no memories, by the reason they are refused: every
 * MemRecall call needs an account (spec §7: all tools require user_id), and an
 * anonymous one has no memories.
 */
const REFUSALS = {
  ACCOUNT_REQUIRED: {
    code: "unauthenticated",
    message: text(
      "MemRecall needs the caller's account: send the x-account-id header (and x-account-type user or app)",
      "MemRecall 需要调用方的账户：请发送 x-account-id 请求头（以及 x-account-type user 或 app）",
    ),
    hint: text(
      "Call again with the x-account-id header of the user whose memories these are.",
      "带上这些记忆所属用户的 x-account-id 请求头重新调用。",
    ),
  },
  ANONYMOUS_NOT_ALLOWED: {
    code: "permission_denied",
    message: text(
      "anonymous accounts have no memories: MemRecall serves user and app accounts only",
      "匿名账户没有记忆：MemRecall 只服务 user 和 app 账户",
    ),
    hint: text(
      "Call with x-account-type user (or app) and that account's x-account-id.",
      "使用 x-account-type user（或 app）及该账户的 x-account-id 调用。",
    ),
  },
} as const satisfies Record<string, { code: ErrorCode; message: Text; hint: Text }>;

/**
 * The memory owner for the caller, or the refusal of a caller who has none.
 * The type is part of the id, so an app and a user with the same id are two owners.
 */
export function ownerOf(caller: Caller): string {
  const refused =
    caller.accountId === ""
      ? "ACCOUNT_REQUIRED"
      : caller.accountType === "anonymous"
        ? "ANONYMOUS_NOT_ALLOWED"
        : undefined;
  if (refused === undefined) return `${caller.accountType}:${caller.accountId}`;
  const { code, message, hint } = REFUSALS[refused];
  throw new ToolError({ code, reason: refused, message, hint: { message: hint } });
}

/**
 * The scope (`x-account-scopes`, granted by the gateway) that lets a caller
 * read the content of the memories stored as sensitive (spec §7: 敏感记忆内容需要额外权限验证).
 */
export const SENSITIVE_SCOPE = "memories:sensitive";

/** True when the caller may read sensitive memories' content; without it they are shown redacted. */
export function maySeeSensitive(caller: Caller): boolean {
  return caller.scopes?.includes(SENSITIVE_SCOPE) === true;
}

/**
 * How long this process keeps trying to record a write's version change the
 * session store refused: past the longest cache TTL keyed by a version (hot
 * memories, 10 minutes), no cache made before the write can still answer.
 */
const RECORD_RETRY_FOR_MS = 10 * 60_000;
const RECORD_RETRY_FIRST_MS = 200;
const RECORD_RETRY_MAX_MS = 10_000;

/**
 * The owner's memory version: a counter every write increments, so every
 * cache keyed by it is invalid at once. Undefined when it cannot be trusted:
 * the session store does not answer (Redis down), or a write made here is not
 * recorded in it yet. Callers then use no cache and no kept index and read
 * the store itself: memories stay served, only slower, while Redis is away.
 */
export async function versionOf(deps: MemoriesDeps, ctx: CallContext, owner: string): Promise<number | undefined> {
  if (deps.index.hasUnrecorded(owner)) return undefined;
  try {
    return await deps.sessions.counter(accountKey(owner, "mem:version"));
  } catch (err) {
    ctx.log.warn({ err }, "memory version unreadable (session store down): reading the memory store without caches");
    return undefined;
  }
}

/**
 * After a committed write: the new version, and this process's index updated
 * in place when it can be. Call it inside `index.serially`: writes of one
 * owner in this process then run one after another, so versions move in
 * commit order here.
 *
 * When the session store cannot record the change (Redis down), the write
 * stands (it is committed) and the change is recorded later: this process
 * reads the owner's memories from the store until then (versionOf), and
 * retries in the background, so caches keyed by the old version stop
 * answering as soon as the session store is back.
 */
export async function bumpVersion(
  deps: MemoriesDeps,
  ctx: CallContext,
  owner: string,
  change: IndexChange,
): Promise<void> {
  let version: number;
  try {
    version = await deps.sessions.increment(accountKey(owner, "mem:version"), VERSION_TTL_MS);
  } catch (err) {
    ctx.log.warn({ err }, "memory version not recorded (session store down): the write stands, recording it later");
    recordLater(deps, ctx, owner);
    return;
  }
  deps.index.applied(owner, version, change);
}

/** Retries recording an owner's version change, with backoff, for RECORD_RETRY_FOR_MS. */
function recordLater(deps: MemoriesDeps, ctx: CallContext, owner: string): void {
  deps.index.unrecorded(owner);
  const giveUpAt = Date.now() + RECORD_RETRY_FOR_MS;
  const attempt = (delayMs: number) => {
    const timer = setTimeout(() => {
      deps.sessions.increment(accountKey(owner, "mem:version"), VERSION_TTL_MS).then(
        () => {
          deps.index.recorded(owner);
          ctx.log.info("memory version recorded: caches of the earlier version no longer answer");
        },
        () => {
          if (Date.now() < giveUpAt) attempt(Math.min(delayMs * 2, RECORD_RETRY_MAX_MS));
          else {
            // Every cache keyed by the old version has expired by now: nothing stale can answer.
            deps.index.recorded(owner);
            ctx.log.warn("memory version never recorded; the caches it would have invalidated have expired");
          }
        },
      );
    }, delayMs);
    timer.unref();
  };
  attempt(RECORD_RETRY_FIRST_MS);
}

/**
 * `compute()`, through the session store's cache under `key` (none: computed). Cache reads and
 * writes never fail a call: the store is the truth, the cache only saves time.
 * What is cached is `toCache(value)` (the value itself by default); undefined caches nothing.
 */
export async function cached<T>(
  ctx: CallContext,
  deps: MemoriesDeps,
  key: string | undefined,
  ttlMs: number,
  compute: () => Promise<T>,
  toCache: (value: T) => T | undefined = (value) => value,
): Promise<T> {
  // No key: the version is unknown (versionOf), and no cache can be trusted.
  if (key === undefined) return compute();
  try {
    const hit = await deps.sessions.getJson<T>(key);
    if (hit !== undefined) return hit;
  } catch (err) {
    ctx.log.warn({ err, key }, "cache read failed; computing");
  }
  const value = await compute();
  const kept = toCache(value);
  if (kept !== undefined)
    deps.sessions.setJson(key, kept, ttlMs).catch((err: unknown) => ctx.log.warn({ err, key }, "cache write failed"));
  return value;
}

/** A short, key-safe digest of any JSON value: how a request becomes part of a cache key. */
export const digest = (value: unknown): string =>
  createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 32);
