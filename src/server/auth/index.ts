import { isIP } from "node:net";
import type { Logger } from "pino";
import type { Caller } from "../../core/call-context";
import { type Language, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import { sendJson } from "../http-routes";
import { requestLanguage } from "../language";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "../node-types";
import { challengeHeaders, publicRouteNeedsToken } from "./errors";
import { headersAuthenticator } from "./headers";
import { introspectionAuthenticator } from "./introspection";
import { jwtAuthenticator } from "./jwt";
import { mtlsAuthenticator } from "./mtls";
import type { Authenticator, AuthResult } from "./result";
import type { AuthSettings } from "./settings";

export { challengeHeaders } from "./errors";
export type { Authenticator, AuthResult } from "./result";
export type { AuthSettings } from "./settings";

/** The authenticator of the configured AUTH_MODE. */
export function createAuthenticator(settings: AuthSettings, deps: { log: Logger }): Authenticator {
  switch (settings.mode) {
    case "headers":
      return headersAuthenticator();
    case "mtls":
      return mtlsAuthenticator();
    case "jwt":
      return jwtAuthenticator(settings, deps.log);
    case "introspection":
      return introspectionAuthenticator(settings, deps.log);
  }
}

/**
 * Each request's result, set by withAuthentication before the request is
 * routed: a symbol-keyed property of the request (a WeakMap entry per request
 * cost more, in the map and in every garbage collection).
 */
const kResult = Symbol("authentication result");
type WithResult = NodeServerRequest & { [kResult]?: AuthResult };

/** The platform's public routes: token holders only (see publicRouteNeedsToken). */
export const PUBLIC_PREFIX = "/api/agent-retrieval/v1/";

/** Probes answer whoever asks: an orchestrator has no token. */
const EXEMPT_PATHS = new Set(["/healthz", "/readyz"]);
const HEALTH_RPC_PREFIX = "/grpc.health.v1.Health/";
const METRICS_PATH = "/metrics";
/** Who an exempt request is: nobody in particular. */
const NOBODY: AuthResult = { ok: true, caller: { accountId: "", accountType: "anonymous" } };

/**
 * Wraps the request handler with the one authentication step: it runs on the
 * raw request, before routing and before any body is read, and leaves its
 * result for the places that build a call's context (the RPC interceptor, the
 * JSON routes, MCP), which answer a refusal in their own protocol. Health,
 * readiness (and /metrics with METRICS_AUTH=none) are not authenticated;
 * /metrics with METRICS_AUTH=same is refused here, having no context of its own.
 */
export function withAuthentication(
  authenticator: Authenticator,
  opts: { settings: AuthSettings; log: Logger; defaultLanguage: Language },
  handler: NodeHandler,
): NodeHandler {
  const { settings, log, defaultLanguage } = opts;
  return (req, res) => {
    const path = pathOf(req.url);
    if (
      EXEMPT_PATHS.has(path) ||
      path.startsWith(HEALTH_RPC_PREFIX) ||
      (path === METRICS_PATH && settings.metricsAuth === "none")
    ) {
      (req as WithResult)[kResult] = NOBODY;
      handler(req, res);
      return;
    }
    if (settings.mode === "headers" && path.startsWith(PUBLIC_PREFIX)) {
      proceed(req, res, path, { ok: false, error: publicRouteNeedsToken(path) });
      return;
    }
    const result = authenticator.authenticate(req);
    if (result instanceof Promise) {
      result.then(
        (r) => proceed(req, res, path, r),
        (err: unknown) => {
          log.error({ err }, "authentication failed with an unexpected error");
          proceed(req, res, path, {
            ok: false,
            error: new ToolError({
              code: "internal",
              reason: "INTERNAL",
              message: text("internal error", "内部错误"),
            }),
          });
        },
      );
    } else proceed(req, res, path, result);
  };

  // Made once, not per request: the request's own values are its arguments.
  function proceed(req: NodeServerRequest, res: NodeServerResponse, path: string, result: AuthResult): void {
    if (path === METRICS_PATH && !result.ok) {
      const { error } = result;
      const status = error.code === "unavailable" ? 503 : error.code === "unauthenticated" ? 401 : 400;
      sendJson(
        res,
        status,
        { error: error.text[requestLanguage(req.headers, defaultLanguage)], reason: error.reason },
        challengeHeaders(error),
      );
      return;
    }
    (req as WithResult)[kResult] = result;
    handler(req, res);
  }
}

/**
 * Who a request says it comes from, before anything is verified: the
 * account header, or in the token modes the token itself; undefined when it
 * says nothing. Cheap enough for every request, so the listener can let
 * callers take turns before authentication runs (src/server/ingress.ts). A
 * false claim only changes whose turn a request waits in: it is still
 * authenticated before it is served.
 */
export function claimedCaller(settings: AuthSettings): (req: NodeServerRequest) => string | undefined {
  const header = settings.mode === "jwt" || settings.mode === "introspection" ? "authorization" : "x-account-id";
  return (req) => {
    const value = req.headers[header];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
}

/** The path of a request URL without its query; "/" when absent. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return "/";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/**
 * The authentication result of a request. A request that did not pass
 * withAuthentication is refused: identity is never taken on trust by accident.
 */
export function authResultOf(req: NodeServerRequest): AuthResult {
  return (req as WithResult)[kResult] ?? NOT_AUTHENTICATED;
}

/** The verified caller of a request, or the ToolError (UNAUTHENTICATED, UNAVAILABLE, INVALID_ARGUMENT) that refuses it. */
export function authenticatedCaller(req: NodeServerRequest): Caller {
  const result = authResultOf(req);
  if (!result.ok) throw result.error;
  return result.caller;
}

const NOT_AUTHENTICATED: AuthResult = {
  ok: false,
  error: new ToolError({
    code: "unauthenticated",
    reason: "AUTH_REQUIRED",
    message: text("the request was not authenticated", "请求未经认证"),
  }),
};

/**
 * Logs the authentication mode at start-up, and warns when the port is open
 * beyond this machine while identity headers are trusted from anyone.
 */
export function logAuthentication(log: Logger, settings: AuthSettings, host: string): void {
  if (settings.mode === "headers" && !isLoopback(host)) {
    log.warn(
      { auth_mode: settings.mode, host },
      "AUTH_MODE=headers on a non-loopback address: x-account-id, x-account-type and x-account-scopes are trusted from anyone who reaches the port; set AUTH_MODE=mtls, jwt or introspection, or bind HOST=127.0.0.1",
    );
    return;
  }
  log.info({ auth_mode: settings.mode, metrics_auth: settings.metricsAuth }, "caller authentication");
}

/** True when `host` only accepts connections from this machine. */
function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "");
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || /^::ffff:127\./.test(h);
  return false;
}
