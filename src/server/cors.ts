import type { IncomingHttpHeaders } from "node:http";
import { cors as connectCors } from "@connectrpc/connect";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";

/** Headers our callers send beyond the protocols' own (MCP's Streamable HTTP headers included). */
const extraAllowedHeaders = [
  "x-account-id",
  "x-account-type",
  "x-kn-id",
  "x-account-scopes",
  // The answer's language for a caller that cannot set Accept-Language (src/server/language.ts).
  "language",
  "traceparent",
  "authorization",
  "accept",
  "mcp-protocol-version",
  "mcp-session-id",
  "last-event-id",
];
/** Headers browsers may read beyond the protocols' own. */
const extraExposedHeaders = ["x-trace-id", "mcp-session-id", "mcp-protocol-version"];
const PREFLIGHT_MAX_AGE_S = 7200;

/**
 * CORS for browser callers (Connect-web, gRPC-web, MCP clients) from the configured origins.
 * Runs after origin.ts, which refused every other origin but the request's own.
 * Returns true when it answered the request itself (a preflight).
 */
export function createCors(allowedOrigins: readonly string[]) {
  const any = allowedOrigins.includes("*");
  const allowed = new Set(allowedOrigins.map((o) => o.toLowerCase()));
  const allowMethods = connectCors.allowedMethods.join(", ");
  const allowHeaders = [...connectCors.allowedHeaders, ...extraAllowedHeaders].join(", ");
  const exposeHeaders = [...connectCors.exposedHeaders, ...extraExposedHeaders].join(", ");

  return function handleCors(req: NodeServerRequest, res: NodeServerResponse): boolean {
    const headers = req.headers as IncomingHttpHeaders;
    const origin = headers.origin;
    if (origin === undefined) return false;
    // Any other origin is the request's own: a same-origin page needs no CORS headers.
    if (!any && !allowed.has(origin.toLowerCase())) return false;
    const preflight = req.method === "OPTIONS" && headers["access-control-request-method"] !== undefined;
    res.setHeader("access-control-allow-origin", any ? "*" : origin);
    res.setHeader("vary", "Origin");
    if (!preflight) {
      res.setHeader("access-control-expose-headers", exposeHeaders);
      return false;
    }
    res.writeHead(204, {
      "access-control-allow-methods": allowMethods,
      "access-control-allow-headers": allowHeaders,
      "access-control-max-age": String(PREFLIGHT_MAX_AGE_S),
    });
    res.end();
    return true;
  };
}
