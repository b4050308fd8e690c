import type { Logger } from "pino";

/** The languages the service answers in (src/errors/text.ts writes every caller-facing text in both). */
export type Language = "en" | "zh";

/** Account types the platform knows (`x-account-type`). */
export type AccountType = "user" | "app" | "anonymous";

/**
 * Who is calling, as the authentication step established it (AUTH_MODE): the
 * `x-account-id` / `x-account-type` / `x-account-scopes` request headers in
 * `headers` mode and from a verified client certificate in `mtls` mode, a
 * verified token's claims in `jwt` and `introspection` modes. Sessions and
 * memories belong to this caller.
 */
export interface Caller {
  /** "" when the caller sent no x-account-id. */
  accountId: string;
  accountType: AccountType;
  /**
   * What the gateway or the token lets this caller do beyond its own data
   * (`x-account-scopes` or the scopes claim, e.g. "memories:sensitive"); absent or empty: nothing more.
   */
  scopes?: readonly string[];
}

/**
 * What every domain function and upstream call receives about the call it
 * serves: who is calling (forwarded upstream), the trace id, a logger bound to
 * both, the abort signal (client cancel, deadline, shutdown) and the remaining
 * time budget. It holds no transport types.
 */
export interface CallContext {
  caller: Caller;
  /**
   * The knowledge network the `x-kn-id` request header names (MCP_KN_ID over
   * stdio), when the caller sent one: the knowledge tools use it when their
   * kn_id argument is empty (one rule for every tool).
   */
  headerKnId?: string;
  traceId: string;
  /** The caller's language (Accept-Language, the `language` header, else DEFAULT_LANGUAGE): what words put in an answer use. */
  language: Language;
  log: Logger;
  signal: AbortSignal;
  /** Milliseconds left before the caller's deadline, or undefined when it set none. */
  remainingMs(): number | undefined;
}

/** The caller as a key prefix ("user:u-1"): an app and a user with the same id are two callers. */
export function callerKey(caller: Caller): string {
  return `${caller.accountType}:${caller.accountId}`;
}
