import { setMaxListeners } from "node:events";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { Config } from "./config";
import { buildDeps, type ClosableBackend } from "./deps";
import { httpRoutes, productServices, routes } from "./routes";
import { Admission } from "./server/admission";
import { authResultOf, claimedCaller, createAuthenticator, logAuthentication, withAuthentication } from "./server/auth";
import { createCors } from "./server/cors";
import { HealthState } from "./server/health";
import { createHttpRoutes } from "./server/http-routes";
import { callInterceptor } from "./server/interceptors";
import { Listener } from "./server/listener";
import { createMetrics, type Metrics } from "./server/metrics";
import { createOriginCheck } from "./server/origin";
import { probeRoutes } from "./server/probes";
import { protoMaxDepth } from "./server/proto-shape";
import { createRpcHandler } from "./server/rpc-handler";
import { ToolingStreams } from "./server/tooling-streams";
import { tracingInterceptor } from "./server/tracing";

export interface App {
  /** Binds the configured port (0 picks a free one); resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful shutdown: NOT_SERVING, stop accepting, drain, then abort what is left. Idempotent. */
  shutdown(): Promise<void>;
  readonly health: HealthState;
  readonly metrics: Metrics;
}

/** The JSON options of every RPC (see createApp). */
export const JSON_OPTIONS = { useProtoFieldName: true, ignoreUnknownFields: false, alwaysEmitImplicit: true } as const;

/**
 * Assembles the service from its settings: the dependencies (deps.ts), the
 * RPC and JSON routes (routes.ts), the one interceptor, the Host and Origin
 * checks, CORS and the one-port listener, and the graceful shutdown.
 * `overrides` lets tests and benchmarks bring a knowledge-network backend
 * built elsewhere.
 */
export function createApp(config: Config, log: Logger, overrides: { backend?: ClosableBackend } = {}): App {
  const metrics = createMetrics();
  const deps = buildDeps(config, log, overrides);
  const health = new HealthState(productServices.map((s) => s.typeName));
  const toolingStreams = new ToolingStreams({
    totalStreams: config.server.streams.total,
    watchIdleMs: config.server.healthWatchIdleMs,
  });
  const stopping = new AbortController();
  // Every call in flight listens to this signal (connect's shutdownSignal): no listener cap.
  setMaxListeners(0, stopping.signal);
  // One bound for RPCs and JSON routes alike: they share the event loop.
  const admission = new Admission(config.server.admission, metrics.admission);
  metrics.gauge("contextloader_calls_in_flight", "Calls in progress (RPCs and JSON routes).", () => admission.inFlight);
  metrics.gauge("contextloader_calls_queued", "Calls waiting for a slot.", () => admission.queued);
  for (const u of deps.usage) metrics.gauge(u.name, u.help, u.read);

  const plainRoutes = [
    ...probeRoutes({ health, metrics, checks: deps.readiness, log }),
    ...httpRoutes(
      deps,
      {
        log,
        maxBytes: config.server.readMaxBytes,
        stopping: stopping.signal,
        defaultLanguage: config.server.defaultLanguage,
      },
      admission,
    ),
  ];
  const rpc = createRpcHandler({
    routes: routes(deps, health, toolingStreams),
    routerOptions: {
      grpc: true,
      grpcWeb: true,
      connect: true,
      readMaxBytes: config.server.readMaxBytes,
      writeMaxBytes: config.server.writeMaxBytes,
      // Compressing a few kilobytes costs more time than it saves on the networks agents run in.
      compressMinBytes: config.server.compressMinBytes,
      // Agents compose JSON by hand: a misspelt field is an error, not silently ignored.
      // Zero values are written too, so every answer has the spec's full shape (false, 0, [] included).
      jsonOptions: JSON_OPTIONS,
      // protobuf-es's default is 100 levels; proto-shape.ts refuses deeper ones before it decodes them.
      binaryOptions: { recursionLimit: protoMaxDepth(config.server.jsonMaxDepth) },
      // With tracing on, outermost: the call's span is open while it waits, runs and is logged.
      interceptors: [
        ...(config.tracing ? [tracingInterceptor()] : []),
        callInterceptor({ log, metrics, admission, defaultLanguage: config.server.defaultLanguage }),
      ],
      shutdownSignal: stopping.signal,
    },
    fallback: createHttpRoutes({
      routes: plainRoutes,
      metrics,
      log,
      admission,
      // Turns are shared between accounts; requests authentication refused wait as one caller.
      callerOf: (req) => {
        const auth = authResultOf(req);
        return auth.ok ? auth.caller.accountId : "";
      },
      jsonMaxDepth: config.server.jsonMaxDepth,
      jsonMaxValues: config.server.jsonMaxValues,
      stopping: stopping.signal,
      defaultLanguage: config.server.defaultLanguage,
    }),
    jsonMaxDepth: config.server.jsonMaxDepth,
    jsonMaxValues: config.server.jsonMaxValues,
    protoMaxDepth: protoMaxDepth(config.server.jsonMaxDepth),
    toolingStreams,
    log,
    defaultLanguage: config.server.defaultLanguage,
  });
  const checkOrigin = createOriginCheck({
    allowedHosts: config.server.allowedHosts,
    allowedOrigins: config.server.corsAllowedOrigins,
    routes: plainRoutes,
    metrics,
    log,
    defaultLanguage: config.server.defaultLanguage,
  });
  const cors = createCors(config.server.corsAllowedOrigins);
  const authenticated = withAuthentication(
    createAuthenticator(config.auth, { log }),
    { settings: config.auth, log, defaultLanguage: config.server.defaultLanguage },
    rpc,
  );
  const listener = new Listener({
    handler: (req, res) => {
      if (!checkOrigin(req, res) && !cors(req, res)) authenticated(req, res);
    },
    tls: config.server.tls,
    timeouts: config.server.timeouts,
    streams: config.server.streams,
    callerOf: claimedCaller(config.auth),
    log,
  });
  metrics.gauge(
    "contextloader_streams_open",
    "Requests and streams open, over every connection.",
    () => listener.openStreams,
  );
  metrics.gauge(
    "contextloader_tooling_streams_open",
    "Health watches and reflection streams open.",
    () => toolingStreams.inUse,
  );

  let stopped: Promise<void> | undefined;
  return {
    health,
    metrics,
    async listen() {
      await deps.start();
      const { host, tls } = config.server;
      const port = await listener.listen(config.server.port, host);
      log.info({ port, host, tls: tls !== undefined }, "listening: gRPC, gRPC-web and Connect on one port");
      logAuthentication(log, config.auth, host);
      return port;
    },
    shutdown() {
      stopped ??= (async () => {
        log.info({ grace_ms: config.server.shutdownGraceMs }, "shutting down: not serving, draining in-flight calls");
        health.markNotServing();
        await listener.shutdown(config.server.shutdownGraceMs, () =>
          stopping.abort(new ConnectError("the server is shutting down; retry on another replica", Code.Unavailable)),
        );
        await deps.close();
        log.info("stopped");
      })();
      return stopped;
    },
  };
}
