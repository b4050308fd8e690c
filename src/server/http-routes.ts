import type { Logger } from "pino";
import type { Metrics } from "./metrics";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";

/** A plain HTTP route on the RPC port: probes, metrics, the REST aliases of the specs. */
export interface HttpRoute {
  method: "GET" | "POST";
  path: string;
  handle(req: NodeServerRequest, res: NodeServerResponse): void | Promise<void>;
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

/**
 * Serves every request that is not an RPC: the registered routes by method and
 * exact path, 405 with Allow for a known path and another method, 404 (JSON,
 * naming what exists) otherwise. Each answer is counted in /metrics.
 */
export function createHttpRoutes(opts: { routes: readonly HttpRoute[]; metrics: Metrics; log: Logger }): NodeHandler {
  const byPath = new Map<string, Map<string, HttpRoute>>();
  for (const route of opts.routes) {
    const methods = byPath.get(route.path) ?? new Map<string, HttpRoute>();
    methods.set(route.method, route);
    byPath.set(route.path, methods);
  }
  const known = [...byPath.keys()].sort();

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
    Promise.resolve()
      .then(() => route.handle(req, res))
      .catch((err: unknown) => {
        opts.log.error({ err, path }, "http route failed");
        if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
        else res.destroy();
      });
  };
}
