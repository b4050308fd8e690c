import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { LogicPropertyResolverService } from "../gen/contextloader/resolver/v1/resolver_pb";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { manyMetricsBundle } from "../test/fixtures/many-metrics-bundle";
import { startScriptedLlm } from "../test/helpers/scripted-llm";
import { formatMicros, line, percentile, timeEach } from "./stats";

const PROPERTIES = Array.from({ length: 8 }, (_, i) => `metric_${i + 1}`);
const LLM_LATENCY_MS = 200;
const TARGET_RATIO = 3.5;

/**
 * The resolver with 8 logic properties and a scripted LLM answering each
 * prompt after 200 ms: max_concurrency 4 against max_concurrency 1 (the LLM
 * calls one after another), through the real app over Connect.
 */
export async function benchResolver(): Promise<void> {
  const now = Date.now();
  const start = now - 365 * 86_400_000;
  const llm = await startScriptedLlm((req) => {
    const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1] ?? "";
    return { delayMs: LLM_LATENCY_MS, content: JSON.stringify({ [property]: { instant: true, start, end: now } }) };
  });
  const bundle = parseBundle(
    manyMetricsBundle("kn_bench_resolver", PROPERTIES, start + 86_400_000),
    "the resolver bench network",
  );
  const log = pino({ level: "silent" });
  const app = createApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      SQLITE_PATH: ":memory:",
      LLM_BASE_URL: llm.baseUrl,
      LOG_LEVEL: "silent",
    }),
    log,
    {
      backend: new EmbeddedBackend([bundle], { timeZone: "Asia/Shanghai" }),
    },
  );
  const port = await app.listen();
  const client = createClient(
    LogicPropertyResolverService,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }),
  );
  const resolve = (maxConcurrency: number) =>
    client.resolveLogicProperties({
      knId: "kn_bench_resolver",
      otId: "company",
      query: "这家企业的各项指标",
      uniqueIdentities: [{ company_id: "c1" }],
      properties: PROPERTIES,
      options: { maxConcurrency },
    });
  try {
    await resolve(4);
    const concurrent = (await timeEach(5, () => resolve(4))).map((us) => us / 1000);
    const sequential = (await timeEach(3, () => resolve(1))).map((us) => us / 1000);
    const ratio = percentile(sequential, 50) / percentile(concurrent, 50);
    line(
      `resolver: ${PROPERTIES.length} properties, LLM ${LLM_LATENCY_MS} ms`,
      `max_concurrency 4: ${formatMicros(percentile(concurrent, 50) * 1000)} | one at a time: ${formatMicros(percentile(sequential, 50) * 1000)}`,
    );
    line(
      "resolver: one at a time / max_concurrency 4",
      `${ratio.toFixed(2)}x (target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? "met" : "NOT met"}; ideal ${PROPERTIES.length / Math.ceil(PROPERTIES.length / 4)}x: ${PROPERTIES.length} LLM latencies against ceil(${PROPERTIES.length}/4))`,
    );
  } finally {
    await app.shutdown();
    await llm.close();
  }
}
