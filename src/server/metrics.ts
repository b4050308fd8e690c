import { performance } from "node:perf_hooks";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { AdmissionObserver } from "./admission";

/**
 * The service's Prometheus metrics, one registry per app (no global state, so
 * two apps in one test process keep separate counts). Served at GET /metrics.
 */
export interface Metrics {
  registry: Registry;
  /** Count and latency of one finished RPC. */
  observeRpc(rpc: string, code: string, seconds: number): void;
  /** Count of one plain HTTP route answer. */
  observeHttp(route: string, status: number): void;
  /** Refusals and queue waits of admission control. */
  admission: AdmissionObserver;
  /** A gauge read at every scrape (calls in flight, what a cache holds). */
  gauge(name: string, help: string, read: () => number): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "contextloader_" });
  const requests = new Counter({
    name: "contextloader_rpc_requests_total",
    help: "Finished RPCs by method and gRPC status code.",
    labelNames: ["rpc", "code"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "contextloader_rpc_duration_seconds",
    help: "RPC latency from request to last response byte, by method and gRPC status code.",
    labelNames: ["rpc", "code"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const http = new Counter({
    name: "contextloader_http_requests_total",
    help: "Plain HTTP route answers (health, metrics, REST aliases) by route and status.",
    labelNames: ["route", "status"],
    registers: [registry],
  });
  const refused = new Counter({
    name: "contextloader_calls_refused_total",
    help: "Calls refused RESOURCE_EXHAUSTED by admission control: queue_full (refused at once) or waited_too_long.",
    labelNames: ["reason"],
    registers: [registry],
  });
  // The share of time the event loop was busy since the last scrape: 1 means every call waits for CPU.
  let utilizationSince = performance.eventLoopUtilization();
  new Gauge({
    name: "contextloader_event_loop_utilization",
    help: "Share of the time since the last scrape the event loop spent running code (0..1).",
    registers: [registry],
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, utilizationSince).utilization);
      utilizationSince = now;
    },
  });
  const waited = new Histogram({
    name: "contextloader_queue_wait_seconds",
    help: "How long admitted calls waited for a slot (calls admitted at once are not counted).",
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return {
    registry,
    admission: {
      refused: (reason) => refused.inc({ reason }),
      waited: (ms) => waited.observe(ms / 1000),
    },
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
    observeRpc(rpc, code, seconds) {
      requests.inc({ rpc, code });
      latency.observe({ rpc, code }, seconds);
    },
    observeHttp(route, status) {
      http.inc({ route, status: String(status) });
    },
  };
}
