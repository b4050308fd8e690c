import type { Logger } from "pino";
import { tracingOn } from "../core/telemetry";
import { retryAfterSeconds } from "../errors/connect-mapping";
import { type Language, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { Admission } from "./admission";
import { requestLanguage } from "./language";
import type { Metrics } from "./metrics";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";
import {
  type BodyRead,
  isClientGone,
  jsonMeter,
  malformedHost,
  REQUEST_TOO_LARGE,
  readRequestBody,
} from "./request-body";
import { traceIdFromHeaders } from "./trace";
import { routeSpan } from "./tracing";

/** A plain HTTP route on the RPC port: probes, metrics, the REST aliases of the specs. */
export interface HttpRoute {
  method: "GET" | "POST";
  path: string;
  /**
   * The route takes a JSON body of at most this many bytes. It is read whole
   * (and its shape checked as it arrives) before the call waits for a slot, and handed to
   * `handle`; a route without it reads no body.
   */
  jsonBody?: { maxBytes: number };
  /** The route's work; `body` is the request body when the route takes one (jsonBody), else empty. */
  handle(req: NodeServerRequest, res: NodeServerResponse, body: Buffer): void | Promise<void>;
  /**
   * Answered at once even when the server is at its limit of calls in
   * progress: probes and metrics, which must tell an overloaded server from a
   * dead one. Every other route waits its turn like an RPC.
   */
  unqueued?: boolean;
  /**
   * The route's body is read and checked as for any route, but the route
   * takes admission slots itself, one per piece of work it finds in the body
   * (MCP: one per tool call of a JSON-RPC batch), rather than one for the
   * whole request: a batch then costs other callers what its calls sent one
   * by one would.
   */
  admitsItself?: boolean;
  /**
   * The status and body of a refusal before the route runs (body too large,
   * too deep or holding too many values, malformed Host, overloaded, shutting down) in the route's own
   * error shape; a plain JSON body with the status of refusalStatus when absent.
   */
  renderRefusal?(err: ToolError, traceId: string, language: Language): { status: number; body: unknown };
}

/** Writes a JSON body with the given status. */
export function sendJson(
  res: NodeServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/** The request's headers as a fetch Headers (HTTP/2 pseudo-headers left out). */
export function headersOf(req: NodeServerRequest): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(":") || value === undefined) continue;
    out.set(name, Array.isArray(value) ? value.join(", ") : String(value));
  }
  return out;
}

/**
 * Serves every request that is not an RPC: the registered routes by method and
 * exact path, 405 with Allow for a known path and another method, 404 (JSON,
 * naming what exists) otherwise. Each answer is counted in /metrics. A route
 * that is not `unqueued` runs only once `admission` gives it a slot, as RPCs
 * do; refused, it answers 429 with Retry-After (503 when the server stops
 * while it waits). A route's body is read and checked (size, nesting, count
 * of values) before it asks for a slot: a slow sender never holds one.
 */
export function createHttpRoutes(opts: {
  routes: readonly HttpRoute[];
  metrics: Metrics;
  log: Logger;
  admission: Admission;
  /** Whose turn a waiting request takes in admission control (an account). */
  callerOf(req: NodeServerRequest): string;
  /** JSON bodies nested deeper than this are refused (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
  /** JSON bodies holding more values than this are refused (JSON_MAX_VALUES). */
  jsonMaxValues: number;
  /** Aborted when the server shuts down past its grace period: a route still waiting for a slot is refused. */
  stopping: AbortSignal;
  /** The language of refusals for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
}): NodeHandler {
  const byPath = new Map<string, Map<string, HttpRoute>>();
  for (const route of opts.routes) {
    const methods = byPath.get(route.path) ?? new Map<string, HttpRoute>();
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  const known = [...byPath.keys()].sort();
  const jsonLimits = { maxDepth: opts.jsonMaxDepth, maxValues: opts.jsonMaxValues };

  const run = (route: HttpRoute, path: string, req: NodeServerRequest, res: NodeServerResponse, body: Buffer) =>
    Promise.resolve()
      .then(() => {
        // With tracing on, the route runs in its span (the span also takes over the request's traceparent).
        // Probes and metrics (unqueued) are not traced: they come every few seconds.
        const span = tracingOn() && !route.unqueued ? routeSpan(route, headersOf(req), req, res) : undefined;
        return span ? span.run(() => route.handle(req, res, body)) : route.handle(req, res, body);
      })
      .catch((err: unknown) => {
        if (isClientGone(err) || res.destroyed) opts.log.debug({ err, path }, "http route: the client went away");
        else opts.log.error({ err, path }, "http route failed");
        if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: "internal error" });
        else res.destroy();
      });

  /** The checked body of a route that takes one; undefined when the call was answered (refused) or the client left. */
  const bodyOf = async (route: HttpRoute, req: NodeServerRequest, res: NodeServerResponse) => {
    if (!route.jsonBody) return Buffer.alloc(0);
    let read: BodyRead;
    try {
      read = await readRequestBody(req, res, route.jsonBody.maxBytes, jsonMeter(jsonLimits));
    } catch (err) {
      opts.log.debug({ err, path: route.path }, "the client went away while sending its body");
      return undefined;
    }
    if (read.problem) {
      refuse(route, req, res, read.problem, opts.defaultLanguage);
      return undefined;
    }
    return read.body;
  };

  return (req, res) => {
    const path = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const methods = byPath.get(path);
    const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
    const route = methods?.get(method);
    const label = route ? path : methods ? path : "unmatched";
    res.once("finish", () => opts.metrics.observeHttp(label, res.statusCode));
    if (!methods) {
      sendJson(res, 404, {
        error: "not found",
        detail: `no route ${req.method} ${path}; RPCs are POST /<package>.<Service>/<Method>`,
        routes: known,
      });
      return;
    }
    if (!route) {
      sendJson(
        res,
        405,
        { error: "method not allowed", allow: [...methods.keys()] },
        { allow: [...methods.keys()].join(", ") },
      );
      return;
    }
    const badHost = malformedHost(req);
    if (badHost !== undefined) {
      refuse(route, req, res, hostRefusal(badHost), opts.defaultLanguage);
      return;
    }
    if (route.unqueued) {
      void run(route, path, req, res, Buffer.alloc(0));
      return;
    }
    const gone = new AbortController();
    res.once("close", () =>
      gone.abort(
        new ToolError({
          code: "cancelled",
          reason: "CANCELLED",
          message: text("the client went away", "客户端已离开"),
        }),
      ),
    );
    void bodyOf(route, req, res).then((body) => {
      if (body === undefined) return;
      if (route.admitsItself) {
        void run(route, path, req, res, body);
        return;
      }
      opts.admission.enter(AbortSignal.any([gone.signal, opts.stopping]), opts.callerOf(req)).then(
        (release) => {
          res.once("close", release);
          if (res.destroyed) release();
          void run(route, path, req, res, body);
        },
        (reason: unknown) => {
          if (gone.signal.aborted || res.headersSent) return;
          refuse(route, req, res, reason, opts.defaultLanguage);
        },
      );
    });
  };
}

/** The refusal of a Host header no URL can be built from. */
export function hostRefusal(host: string): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "MALFORMED_HOST",
    message: text(
      `the Host header ${JSON.stringify(host)} is not a host name or address with an optional port`,
      `Host 请求头 ${JSON.stringify(host)} 不是主机名或地址（可带端口）`,
    ),
    violations: [{ field: "host", description: text("not host[:port]", "不是 host[:port] 形式") }],
  });
}

/**
 * The HTTP status of a refusal before a route runs: 413 for a body over
 * READ_MAX_BYTES, 400 for a bad request (too deep, too many values, malformed Host), 429 when
 * overloaded, 503 when shutting down.
 */
export function refusalStatus(err: ToolError): number {
  if (err.reason === REQUEST_TOO_LARGE) return 413;
  if (err.code === "invalid_argument") return 400;
  return err.code === "resource_exhausted" ? 429 : 503;
}

/** Answers a call that did not get a slot: overloaded (429, Retry-After) or the server stopping (503). */
function refuse(
  route: HttpRoute,
  req: NodeServerRequest,
  res: NodeServerResponse,
  reason: unknown,
  defaultLanguage: Language,
): void {
  const err =
    reason instanceof ToolError
      ? reason
      : new ToolError({
          code: "unavailable",
          reason: "SHUTTING_DOWN",
          message: text("the server is shutting down; retry on another replica", "服务正在停止；请在另一个副本上重试"),
        });
  const traceId = traceIdFromHeaders(headersOf(req));
  const language = requestLanguage(req.headers, defaultLanguage);
  const headers: Record<string, string> = { "x-trace-id": traceId };
  if (err.retryAfterMs !== undefined) headers["retry-after"] = retryAfterSeconds(err.retryAfterMs);
  const rendered = route.renderRefusal?.(err, traceId, language) ?? {
    status: refusalStatus(err),
    body: { error: err.text[language], code: err.code, reason: err.reason, trace_id: traceId },
  };
  sendJson(res, rendered.status, rendered.body, headers);
}
