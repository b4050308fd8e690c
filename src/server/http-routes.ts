import type { Logger } from "pino";
import { retryAfterSeconds } from "../errors/connect-mapping";
import { ToolError } from "../errors/tool-error";
import type { Admission } from "./admission";
import type { Metrics } from "./metrics";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";
import { traceIdFromHeaders } from "./trace";

/** A plain HTTP route on the RPC port: probes, metrics, the REST aliases of the specs. */
export interface HttpRoute {
  method: "GET" | "POST";
  path: string;
  handle(req: NodeServerRequest, res: NodeServerResponse): void | Promise<void>;
  /**
   * Answered at once even when the server is at its limit of calls in
   * progress: probes and metrics, which must tell an overloaded server from a
   * dead one. Every other route waits its turn like an RPC.
   */
  unqueued?: boolean;
  /** The status and body of a refusal (overloaded, shutting down) in the route's own error shape; a plain JSON body when absent. */
  renderRefusal?(err: ToolError, traceId: string): { status: number; body: unknown };
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
 * while it waits).
 */
export function createHttpRoutes(opts: {
  routes: readonly HttpRoute[];
  metrics: Metrics;
  log: Logger;
  admission: Admission;
  /** Aborted when the server shuts down past its grace period: a route still waiting for a slot is refused. */
  stopping: AbortSignal;
}): NodeHandler {
  const byPath = new Map<string, Map<string, HttpRoute>>();
  for (const route of opts.routes) {
    const methods = byPath.get(route.path) ?? new Map<string, HttpRoute>();
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  const known = [...byPath.keys()].sort();

  const run = (route: HttpRoute, path: string, req: NodeServerRequest, res: NodeServerResponse) =>
    Promise.resolve()
      .then(() => route.handle(req, res))
      .catch((err: unknown) => {
        opts.log.error({ err, path }, "http route failed");
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
        else res.destroy();
      });

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
    if (route.unqueued) {
      void run(route, path, req, res);
      return;
    }
    const gone = new AbortController();
    res.once("close", () => gone.abort(new ToolError({ code: "cancelled", reason: "CANCELLED", message: "gone" })));
    opts.admission.enter(AbortSignal.any([gone.signal, opts.stopping])).then(
      (release) => {
        res.once("close", release);
        if (res.destroyed) release();
        void run(route, path, req, res);
      },
      (reason: unknown) => {
        if (gone.signal.aborted || res.headersSent) return;
        refuse(route, req, res, reason);
      },
    );
  };
}

/** Answers a call that did not get a slot: overloaded (429, Retry-After) or the server stopping (503). */
function refuse(route: HttpRoute, req: NodeServerRequest, res: NodeServerResponse, reason: unknown): void {
  const err =
    reason instanceof ToolError
      ? reason
      : new ToolError({
          code: "unavailable",
          reason: "SHUTTING_DOWN",
          message: "the server is shutting down; retry on another replica",
        });
  const traceId = traceIdFromHeaders(headersOf(req));
  const headers: Record<string, string> = { "x-trace-id": traceId };
  if (err.retryAfterMs !== undefined) headers["retry-after"] = retryAfterSeconds(err.retryAfterMs);
  const rendered = route.renderRefusal?.(err, traceId) ?? {
    status: err.code === "resource_exhausted" ? 429 : 503,
    body: { error: err.message, code: err.code, reason: err.reason, trace_id: traceId },
  };
  sendJson(res, rendered.status, rendered.body, headers);
}
