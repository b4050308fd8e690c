import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { type ServerSpan, startServerSpan } from "../core/telemetry";
import { grpcCodeName } from "../errors/connect-mapping";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";

/**
 * The server side of tracing, used only when it is on (app.ts adds the
 * interceptor, http-routes.ts asks `routeSpan`): each RPC and each plain route
 * is a server span continuing the caller's traceparent. The span's own
 * traceparent replaces the request's, so the call's trace id — read from the
 * headers for logs and x-trace-id — is the exported trace's, and the handler
 * runs with the span current, so its upstream calls and store queries are
 * the span's children.
 */

/** Health checks and reflection are not traced: probes every few seconds would drown the calls. */
const UNTRACED = [
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
];

/** Outermost interceptor: opens the span, runs the call in it, ends it with the call's code. */
export function tracingInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (UNTRACED.includes(req.service.typeName)) return next(req);
    const span = startServerSpan(
      `${req.service.typeName}/${req.method.name}`,
      {
        "rpc.system": rpcSystemOf(req.header.get("content-type") ?? ""),
        "rpc.service": req.service.typeName,
        "rpc.method": req.method.name,
      },
      req.header,
    );
    if (span === undefined) return next(req);
    req.header.set("traceparent", span.traceparent);
    try {
      const res = await span.run(() => next(req));
      if (!res.stream) {
        span.end();
        return res;
      }
      return { ...res, message: inSpanToTheEnd(res.message, span) };
    } catch (err) {
      const code = grpcCodeName(ConnectError.from(err).code);
      span.setAttributes({ "rpc.grpc.status_code": ConnectError.from(err).code, "rpc.error_code": code });
      span.end(code);
      throw err;
    }
  };
}

/** A response stream read with the span current (each message is produced then), the span ended with the stream. */
async function* inSpanToTheEnd<T>(stream: AsyncIterable<T>, span: ServerSpan): AsyncIterable<T> {
  const messages = stream[Symbol.asyncIterator]();
  let failed: string | undefined;
  try {
    for (;;) {
      const next = await span.run(() => messages.next());
      if (next.done) return;
      yield next.value;
    }
  } catch (err) {
    failed = grpcCodeName(ConnectError.from(err).code);
    throw err;
  } finally {
    span.end(failed);
  }
}

function rpcSystemOf(contentType: string): string {
  if (contentType.startsWith("application/grpc-web")) return "grpc_web";
  if (contentType.startsWith("application/grpc")) return "grpc";
  return "connect_rpc";
}

/**
 * A plain route's span (`POST /path`), or undefined when tracing is off;
 * ended when the answer is sent. `headers` are the request's (headersOf).
 */
export function routeSpan(
  route: { method: string; path: string },
  headers: Headers,
  req: NodeServerRequest,
  res: NodeServerResponse,
): ServerSpan | undefined {
  const span = startServerSpan(
    `${route.method} ${route.path}`,
    { "http.request.method": route.method, "http.route": route.path },
    headers,
  );
  if (span === undefined) return undefined;
  req.headers["traceparent"] = span.traceparent;
  res.once("close", () => {
    span.setAttributes({ "http.response.status_code": res.statusCode });
    span.end(res.statusCode >= 500 ? String(res.statusCode) : undefined);
  });
  return span;
}
