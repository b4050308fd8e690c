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
  const rpcs = new RpcSeries(RPC_BUCKETS);
  register(registry, rpcs.counter("contextloader_rpc_requests_total", "Finished RPCs by method and gRPC status code."));
  register(
    registry,
    rpcs.histogram(
      "contextloader_rpc_duration_seconds",
      "RPC latency from request to last response byte, by method and gRPC status code.",
    ),
  );
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
      rpcs.observe(rpc, code, seconds);
    },
    observeHttp(route, status) {
      http.inc({ route, status: String(status) });
    },
  };
}

const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Count, sum and bucket counts (not cumulative) of one rpc and code. */
interface Series {
  labels: { rpc: string; code: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}

/**
 * The count and latency of every finished RPC by rpc and code, kept in plain
 * numbers found by two map lookups, and given to the registry as a counter
 * and a histogram only when /metrics is read. prom-client's own Counter and
 * Histogram build and hash a labels object on every observation; this is
 * every call's cost, a scrape is not. The values and text are those
 * prom-client's Counter and Histogram give.
 */
class RpcSeries {
  private readonly byRpc = new Map<string, Map<string, Series>>();

  constructor(private readonly bounds: readonly number[]) {}

  observe(rpc: string, code: string, seconds: number): void {
    let byCode = this.byRpc.get(rpc);
    if (byCode === undefined) {
      byCode = new Map();
      this.byRpc.set(rpc, byCode);
    }
    let series = byCode.get(code);
    if (series === undefined) {
      series = { labels: { rpc, code }, count: 0, sum: 0, buckets: new Float64Array(this.bounds.length) };
      byCode.set(code, series);
    }
    series.count++;
    series.sum += seconds;
    for (let i = 0; i < this.bounds.length; i++) {
      if (seconds <= this.bounds[i]!) {
        series.buckets[i]! += 1;
        break;
      }
    }
  }

  private *all(): Iterable<Series> {
    for (const byCode of this.byRpc.values()) yield* byCode.values();
  }

  /** The counter of finished calls, as the registry reads a metric. */
  counter(name: string, help: string): RegistryMetric {
    const read = () => ({
      name,
      help,
      type: "counter",
      aggregator: "sum",
      values: [...this.all()].map((s) => ({ labels: { ...s.labels }, value: s.count })),
    });
    return { name, help, type: "counter", aggregator: "sum", get: async () => read(), reset: () => this.byRpc.clear() };
  }

  /** The latency histogram, as the registry reads a metric (prom-client's layout: bucket labels apart from the series' own). */
  histogram(name: string, help: string): RegistryMetric {
    const read = () => {
      const values: HistogramValue[] = [];
      for (const s of this.all()) {
        let cumulative = 0;
        this.bounds.forEach((bound, i) => {
          cumulative += s.buckets[i]!;
          values.push({
            labels: { le: bound },
            sharedLabels: s.labels,
            value: cumulative,
            metricName: `${name}_bucket`,
          });
        });
        values.push({ labels: { le: "+Inf" }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket` });
        values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` });
        values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` });
      }
      return { name, help, type: "histogram", aggregator: "sum", values };
    };
    return {
      name,
      help,
      type: "histogram",
      aggregator: "sum",
      getForPromString: async () => read(),
      // As prom-client's Histogram.get: the series' labels merged into each value's.
      get: async () => {
        const data = read();
        return {
          ...data,
          values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
            ...rest,
            labels: { ...labels, ...sharedLabels },
          })),
        };
      },
      reset: () => this.byRpc.clear(),
    };
  }
}

interface HistogramValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
}

/** What a Registry reads of a metric it was given (registerMetric, metrics, getMetricsAsJSON, resetMetrics). */
interface RegistryMetric {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  get(): Promise<unknown>;
  getForPromString?(): Promise<unknown>;
  reset(): void;
}

/** Gives the registry a metric of ours: its types name prom-client's classes, but it reads only these members. */
function register(registry: Registry, metric: RegistryMetric): void {
  registry.registerMetric(metric as unknown as Counter);
}
