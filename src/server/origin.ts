import { Code } from "@connectrpc/connect";
import type { Logger } from "pino";
import { type Language, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { type HttpRoute, headersOf, sendJson } from "./http-routes";
import { requestLanguage } from "./language";
import type { Metrics } from "./metrics";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";
import { malformedHost } from "./request-body";
import { answerGrpcTrailersOnly, pathOf } from "./rpc-handler";
import { traceIdFromHeaders } from "./trace";

/** The status of a request to a host name the service does not answer to (RFC 9110 §15.5.20). */
const MISDIRECTED = 421;
const FORBIDDEN = 403;
/** Allowed Host values remembered as sent. */
const HOSTS_REMEMBERED = 64;
/** Attacker-chosen values are logged this long at most. */
const LOGGED_CHARS = 200;

/**
 * Refuses what a DNS-rebinding page can send, before authentication and
 * before any body is read (the MCP specification's Streamable HTTP "Security
 * Warning"): a page on evil.example whose name now resolves to this service
 * sends `Host: evil.example` and, being same-origin with it, can read the
 * answers. So:
 * - a Host (HTTP/1.1) or :authority (HTTP/2) whose name, any port, is not in
 *   `allowedHosts` is 421 (undefined: any host). A malformed one is left to
 *   the routes' 400, which says what is wrong with it; one that is absent
 *   (HTTP/1.0) is no browser's.
 * - an `Origin` that is neither in `allowedOrigins` ("*": any) nor the
 *   request's own (scheme://Host) is 403; `null` (a sandboxed page, a file) is
 *   never the request's own. Requests without Origin (SDKs, curl, grpcurl) pass.
 * Each protocol gets the refusal in its own error shape: gRPC as a status
 * (for a bare 421, grpc-js and connect-es show only UNKNOWN and the HTTP
 * status), a route with its own shape (MCP's JSON-RPC error, the specs' REST
 * bodies) in that, anything else as a Connect error body. Counted in
 * /metrics under route host_not_allowed or origin_not_allowed.
 * Returns true when it answered (refused) the request.
 */
export function createOriginCheck(opts: {
  allowedHosts: readonly string[] | undefined;
  allowedOrigins: readonly string[];
  /** The plain routes, for their refusal shapes. */
  routes: readonly HttpRoute[];
  metrics: Metrics;
  log: Logger;
  /** The language of refusals for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
}) {
  const hosts = opts.allowedHosts === undefined ? undefined : new Set(opts.allowedHosts);
  // Host values as sent (name, port, the client's spelling) found allowed: one lookup per request instead of
  // cutting and lower-casing the name each time. A deployment is called by a handful; the bound is for the rest.
  const allowedAsSent = new Set<string>();
  const hostAllowed = (host: string): boolean => {
    if (allowedAsSent.has(host)) return true;
    if (!hosts?.has(hostnameOf(host))) return false;
    if (allowedAsSent.size >= HOSTS_REMEMBERED) allowedAsSent.clear();
    allowedAsSent.add(host);
    return true;
  };
  const anyOrigin = opts.allowedOrigins.includes("*");
  const origins = new Set(opts.allowedOrigins.map((o) => o.toLowerCase()));
  const renderers = new Map<string, NonNullable<HttpRoute["renderRefusal"]>>();
  for (const route of opts.routes) if (route.renderRefusal) renderers.set(route.path, route.renderRefusal);

  function refuse(
    req: NodeServerRequest,
    res: NodeServerResponse,
    status: number,
    err: ToolError,
    fields: Record<string, string>,
  ): void {
    const path = pathOf(req.url);
    const traceId = traceIdFromHeaders(headersOf(req));
    const language = requestLanguage(req.headers, opts.defaultLanguage);
    const message = err.text[language];
    const contentType = req.headers["content-type"] ?? "";
    let sent = status;
    if (contentType.startsWith("application/grpc")) {
      sent = 200;
      answerGrpcTrailersOnly(
        res,
        { "content-type": contentType, "x-trace-id": traceId },
        Code.PermissionDenied,
        message,
      );
    } else {
      // A route's own shape, at the status this refusal means (a shape that repeats the status, as the
      // knowledge routes' status_code, repeats this one); otherwise the Connect protocol's error body
      // (Connect clients show its message) with the fields of the JSON routes' own refusals.
      const rendered = renderers.get(path)?.(err, traceId, language).body;
      const body =
        rendered === undefined
          ? { code: err.code, message, error: message, reason: err.reason, trace_id: traceId }
          : withStatusCode(rendered, status);
      sendJson(res, status, body, { "x-trace-id": traceId });
    }
    const label = err.reason === HOST_NOT_ALLOWED ? "host_not_allowed" : "origin_not_allowed";
    opts.metrics.observeHttp(label, sent);
    opts.log.info(
      { trace_id: traceId, reason: err.reason, status: sent, path: clip(path), ...fields },
      "request refused: it may come from a DNS-rebinding page",
    );
  }

  return function checkOrigin(req: NodeServerRequest, res: NodeServerResponse): boolean {
    const host = "authority" in req ? req.authority : req.headers.host;
    if (hosts !== undefined && host && !hostAllowed(host) && malformedHost(req) === undefined) {
      const name = hostnameOf(host);
      refuse(req, res, MISDIRECTED, hostNotAllowed(name), { host: clip(name) });
      return true;
    }
    const origin = req.headers.origin;
    if (origin === undefined || anyOrigin || origins.has(origin.toLowerCase()) || sameOrigin(origin, host)) {
      return false;
    }
    refuse(req, res, FORBIDDEN, originNotAllowed(origin), { origin: clip(origin) });
    return true;
  };
}

const HOST_NOT_ALLOWED = "HOST_NOT_ALLOWED";

function hostNotAllowed(name: string): ToolError {
  return new ToolError({
    code: "permission_denied",
    reason: HOST_NOT_ALLOWED,
    message: text(
      `this service does not answer to the host name ${JSON.stringify(clip(name))} (the Host header); call it by a name in ALLOWED_HOSTS, or add this one there`,
      `本服务不响应主机名 ${JSON.stringify(clip(name))}（Host 请求头）；请用 ALLOWED_HOSTS 中的名字调用，或把这个名字加进去`,
    ),
  });
}

function originNotAllowed(origin: string): ToolError {
  return new ToolError({
    code: "permission_denied",
    reason: "ORIGIN_NOT_ALLOWED",
    message: text(
      `pages from the origin ${JSON.stringify(clip(origin))} may not call this service; add the origin to CORS_ALLOWED_ORIGINS to allow it`,
      `来自源 ${JSON.stringify(clip(origin))} 的页面不能调用本服务；要允许它，请把这个源加入 CORS_ALLOWED_ORIGINS`,
    ),
  });
}

/** A route's error body with its `status_code`, where it has one, set to the status sent. */
function withStatusCode(body: unknown, status: number): unknown {
  return typeof body === "object" && body !== null && "status_code" in body ? { ...body, status_code: status } : body;
}

/** The name of a Host value, lower case, without its port; an IPv6 address keeps its brackets. */
function hostnameOf(host: string): string {
  const end = host.startsWith("[") ? host.indexOf("]") + 1 : host.indexOf(":");
  return (end <= 0 ? host : host.slice(0, end)).toLowerCase();
}

/** True when `origin` is the page the request came from being served by this same Host (scheme://host[:port]). */
function sameOrigin(origin: string, host: string | undefined): boolean {
  if (!host) return false;
  const from = origin.startsWith("http://") ? 7 : origin.startsWith("https://") ? 8 : -1;
  return from !== -1 && origin.slice(from).toLowerCase() === host.toLowerCase();
}

function clip(value: string): string {
  return value.length > LOGGED_CHARS ? `${value.slice(0, LOGGED_CHARS)}…` : value;
}
