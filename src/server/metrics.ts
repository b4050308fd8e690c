import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";

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
  return {
    registry,
    observeRpc(rpc, code, seconds) {
      requests.inc({ rpc, code });
      latency.observe({ rpc, code }, seconds);
    },
    observeHttp(route, status) {
      http.inc({ route, status: String(status) });
    },
  };
}
