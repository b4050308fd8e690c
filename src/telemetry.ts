import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { context } from "@opentelemetry/api";
import type { Logger } from "pino";
import type { Config } from "./config";
import { packagePath } from "./core/package-root";
import { setTracer } from "./core/telemetry";

const require = createRequire(import.meta.url);
const VERSION = (JSON.parse(readFileSync(packagePath("package.json"), "utf8")) as { version: string }).version;

/** Tracing while the service runs; `shutdown` exports what is left and turns spans off. */
export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * The OpenTelemetry SDK, started only when an OTLP endpoint is configured:
 * spans batched and exported over OTLP/HTTP (JSON) to the configured URL,
 * with the service's name and version as its resource; a new trace recorded
 * at the configured ratio, a caller's traceparent followed as it says. The
 * SDK's AsyncLocalStorage context manager makes the current span follow
 * async calls (src/core/telemetry.ts reads it). Without an endpoint nothing
 * is loaded into the call path: src/core/telemetry.ts has no tracer and only
 * runs what it is given.
 */
export function startTracing(settings: Config["tracing"], log: Logger): Tracing | undefined {
  if (settings === undefined) return undefined;
  // The SDK and the exporter are loaded only here: a service without an endpoint never holds them.
  const { AsyncLocalStorageContextManager } =
    require("@opentelemetry/context-async-hooks") as typeof import("@opentelemetry/context-async-hooks");
  const { OTLPTraceExporter } =
    require("@opentelemetry/exporter-trace-otlp-http") as typeof import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes } = require("@opentelemetry/resources") as typeof import("@opentelemetry/resources");
  const { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } =
    require("@opentelemetry/sdk-trace") as typeof import("@opentelemetry/sdk-trace");
  // One per process; a second service in the same process (tests) finds it set and keeps it.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const exporter = new OTLPTraceExporter({
    url: settings.url,
    headers: settings.headers,
    timeoutMillis: settings.timeoutMs,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": settings.serviceName, "service.version": VERSION }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  setTracer(provider.getTracer("context-loader", VERSION));
  log.info(
    { url: settings.url, service_name: settings.serviceName, sample_ratio: settings.sampleRatio },
    "tracing: spans exported over OTLP/HTTP",
  );
  return {
    async shutdown() {
      setTracer(undefined);
      try {
        await provider.shutdown();
      } catch (err) {
        log.warn({ err }, "tracing: the last spans could not be exported");
      }
    },
  };
}
