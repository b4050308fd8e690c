import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, createRouterTransport, type Transport } from "@connectrpc/connect";
import { pino } from "pino";
import { JSON_OPTIONS } from "../../src/app";
import { loadConfig } from "../../src/config";
import { buildDeps, type Deps } from "../../src/deps";
import { productServices, routes } from "../../src/routes";
import { HealthState } from "../../src/server/health";
import { callInterceptor } from "../../src/server/interceptors";
import { createMetrics } from "../../src/server/metrics";
import { ToolingStreams } from "../../src/server/tooling-streams";

/** The service's routes served in memory: no port, no HTTP, the same handlers and interceptor. */
export interface InMemoryService {
  transport: Transport;
  deps: Deps;
  health: HealthState;
  /** A client of `service` that sends these headers (e.g. x-account-id) on every call. */
  client<S extends DescService>(service: S, headers?: Record<string, string>): Client<S>;
  close(): Promise<void>;
}

/**
 * The examples-es "in memory" test style: `routes(deps)` behind
 * createRouterTransport, with settings from `env` (the production variables;
 * memories in a private in-process SQLite unless the test names a store).
 */
export async function inMemoryService(env: Record<string, string> = {}): Promise<InMemoryService> {
  const config = loadConfig({ SQLITE_PATH: ":memory:", DEFAULT_LANGUAGE: "en", ...env });
  const log = pino({ level: "silent" });
  const deps = buildDeps(config, log);
  await deps.start();
  const health = new HealthState(productServices.map((s) => s.typeName));
  const streams = new ToolingStreams({
    totalStreams: config.server.streams.total,
    watchIdleMs: config.server.healthWatchIdleMs,
  });
  const transport = createRouterTransport(routes(deps, health, streams), {
    router: {
      interceptors: [
        callInterceptor({ log, metrics: createMetrics(), defaultLanguage: config.server.defaultLanguage }),
      ],
      jsonOptions: JSON_OPTIONS,
    },
  });
  return {
    transport,
    deps,
    health,
    client: (service, headers = {}) => createClient(service, withHeaders(transport, headers)),
    close: () => deps.close(),
  };
}

/** `transport` sending `headers` on every call (a header the call sets itself wins). */
function withHeaders(transport: Transport, headers: Record<string, string>): Transport {
  const merged = (header: HeadersInit | undefined) => {
    const out = new Headers(header);
    for (const [k, v] of Object.entries(headers)) if (!out.has(k)) out.set(k, v);
    return out;
  };
  return {
    unary: (method, signal, timeoutMs, header, input, contextValues) =>
      transport.unary(method, signal, timeoutMs, merged(header), input, contextValues),
    stream: (method, signal, timeoutMs, header, input, contextValues) =>
      transport.stream(method, signal, timeoutMs, merged(header), input, contextValues),
  };
}
