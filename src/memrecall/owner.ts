import { createHash } from "node:crypto";
import type { CallContext, Caller } from "../core/call-context";
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
    message: "MemRecall needs the caller's account: send the x-account-id header (and x-account-type user or app)",
    hint: "Call again with the x-account-id header of the user whose memories these are.",
  },
  ANONYMOUS_NOT_ALLOWED: {
    code: "permission_denied",
    message: "anonymous accounts have no memories: MemRecall serves user and app accounts only",
    hint: "Call with x-account-type user (or app) and that account's x-account-id.",
  },
} as const satisfies Record<string, { code: ErrorCode; message: string; hint: string }>;

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

/** The owner's memory version: a counter every write increments, so every cache keyed by it is invalid at once. */
export async function versionOf(deps: MemoriesDeps, owner: string): Promise<number> {
  return deps.sessions.counter(accountKey(owner, "mem:version"));
}

/**
 * After a committed write: the new version, and this process's index updated
 * in place when it can be. Call it inside `index.serially`: writes of one
 * owner in this process then run one after another, so versions move in
 * commit order here.
 */
export async function bumpVersion(deps: MemoriesDeps, owner: string, change: IndexChange): Promise<void> {
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
      message:
        `the memory was stored, but the session store could not record the change (${(err as Error).message}), ` +
        "so searches may not show it for up to 10 minutes",
      hint: {
        message:
          "Retry the same call once the session store (Redis) is back: storing the same memory again is harmless.",
      },
      cause: err,
    });
  }
  deps.index.applied(owner, version, change);
}

/**
 * `compute()`, through the session store's cache under `key`. Cache reads and
 * writes never fail a call: the store is the truth, the cache only saves time.
 * A value `keep` refuses is returned but not cached.
 */
export async function cached<T>(
  ctx: CallContext,
  deps: MemoriesDeps,
  key: string,
  ttlMs: number,
  compute: () => Promise<T>,
  keep: (value: T) => boolean = () => true,
): Promise<T> {
  try {
    const hit = await deps.sessions.getJson<T>(key);
    if (hit !== undefined) return hit;
  } catch (err) {
    ctx.log.warn({ err, key }, "cache read failed; computing");
  }
  const value = await compute();
  if (keep(value))
    deps.sessions.setJson(key, value, ttlMs).catch((err: unknown) => ctx.log.warn({ err, key }, "cache write failed"));
  return value;
}

/** A short, key-safe digest of any JSON value: how a request becomes part of a cache key. */
export const digest = (value: unknown): string =>
  createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 32);
