import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/server/metrics";

/** prom-client's own Counter and Histogram, as the RPC metrics were before they were kept apart. */
function promClientReference() {
  const registry = new Registry();
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
  return {
    registry,
    observe(rpc: string, code: string, seconds: number) {
      requests.inc({ rpc, code });
      latency.observe({ rpc, code }, seconds);
    },
  };
}

const HANDOFF = "contextloader.memrecall.v1.MemRecallService/Handoff";
const SAMPLES: [string, string, number][] = [
  [HANDOFF, "OK", 0.0004],
  [HANDOFF, "OK", 0.001],
  [HANDOFF, "OK", 0.0031],
  [HANDOFF, "INVALID_ARGUMENT", 0.2],
  ["contextloader.knowledge.v1.KnowledgeRetrievalService/KnSearch", "OK", 45],
];

describe("RPC metrics", () => {
  it("count and time every call as prom-client's Counter and Histogram would, in the same /metrics text", async () => {
    const metrics = createMetrics();
    const reference = promClientReference();
    for (const [rpc, code, seconds] of SAMPLES) {
      metrics.observeRpc(rpc, code, seconds);
      reference.observe(rpc, code, seconds);
    }
    const ours = (await metrics.registry.metrics())
      .split("\n\n")
      .filter((block) => block.includes("# TYPE contextloader_rpc_"))
      .join("\n\n");
    expect(`${ours}\n`).toBe(await reference.registry.metrics());
    expect(ours).toContain(`contextloader_rpc_requests_total{rpc="${HANDOFF}",code="OK"} 3`);
    expect(ours).toContain(`contextloader_rpc_duration_seconds_bucket{le="0.001",rpc="${HANDOFF}",code="OK"} 2`);
  });

  it("give the same values as JSON, and start again from zero when reset", async () => {
    const metrics = createMetrics();
    const reference = promClientReference();
    for (const [rpc, code, seconds] of SAMPLES) {
      metrics.observeRpc(rpc, code, seconds);
      reference.observe(rpc, code, seconds);
    }
    const values = async (registry: Registry) =>
      (await registry.getMetricsAsJSON())
        .filter((m) => m.name.startsWith("contextloader_rpc_"))
        .map((m) => ({ name: m.name, type: m.type, values: m.values.map(({ labels, value }) => ({ labels, value })) }));
    expect(await values(metrics.registry)).toEqual(await values(reference.registry));
    metrics.registry.resetMetrics();
    expect(await metrics.registry.metrics()).not.toContain("contextloader_rpc_requests_total{");
  });
});
