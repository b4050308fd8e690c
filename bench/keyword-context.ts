import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { parse } from "yaml";
import {
  KnowledgeRetrievalService,
  type RetrieveKeywordContextResponse,
} from "../gen/contextloader/knowledge/v1/knowledge_pb";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import type { CallContext } from "../src/core/call-context";
import type { KnowledgeNetworkBackend } from "../src/kn/backend";
import { type Bundle, parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { createHttpBackend } from "../src/kn/http/http-backend";
import { startSimulator } from "../src/simulator/simulator";
import { formatMicros, line, percentile, timeEach } from "./stats";

const KN = "kn_bench";
const LATENCY_MS = 20;
const KEYWORD = "测试产品";
const PRODUCTS = 10;
const NEIGHBOR_TYPES = ["factory", "region", "category", "supplier", "channel"];
const OURS_RUNS = 100;
const SEQUENTIAL_RUNS = 5;
/**
 * Calls before the clock starts. The call runs a few hundred functions; V8
 * optimises them only after many calls, and our own time halves over the
 * first ~150 (measured: 5.8 ms in the first 50 calls, 4.3-4.6 ms from the
 * 150th on). A running service is past that point, so that is what is timed.
 */
const WARMUP_RUNS = 200;
/** The target: at least this many times faster than the spec's order of calls... */
const TARGET_RATIO = 10;
/** ...and within two upstream round trips plus this much of our own time, ms (issue 14: 10 % of the round trips). */
const TARGET_OVERHEAD_MS = 5;

/**
 * Keyword context (RetrieveKeywordContext) through the real app over Connect,
 * against the simulator with 20 ms per upstream call, on a network where the
 * keyword matches 10 instances of an object type with 5 relation types; next
 * to it the spec's order of calls (keyword-context-recall §4.2: one instance
 * query, then one subgraph call per instance and relation type, each awaited)
 * over the same HTTP backend and simulator.
 */
export async function benchKeywordContext(): Promise<void> {
  const starts: number[] = [];
  const sim = await startSimulator({
    backend: recordingStarts(new EmbeddedBackend([benchBundle()], { timeZone: "Asia/Shanghai" }), starts),
    faults: { latencyMs: LATENCY_MS },
  });
  const log = pino({ level: "silent" });
  const app = createApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      SQLITE_PATH: ":memory:",
      ONTOLOGY_MANAGER_URL: sim.url,
      ONTOLOGY_QUERY_URL: sim.url,
      LOG_LEVEL: "silent",
    }),
    log,
  );
  const port = await app.listen();
  const client = createClient(
    KnowledgeRetrievalService,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }),
  );
  const backend = createHttpBackend({
    ontologyManagerUrl: sim.url,
    ontologyQueryUrl: sim.url,
    operatorMarketUrl: undefined,
    timeoutMs: 10_000,
    maxSockets: 64,
    spelling: "new",
  });
  const ctx: CallContext = {
    caller: { accountId: "bench", accountType: "user" },
    traceId: "bench",
    language: "en" as const,
    log,
    signal: new AbortController().signal,
    remainingMs: () => undefined,
  };

  try {
    // Step one in a fresh session per run, untimed: only step two is measured.
    const newSession = async () => {
      const sessionId = randomUUID();
      await client.retrieveSchema({
        query: "测试产品的工厂、地区、分类、供应商和渠道",
        knIds: [{ knowledgeNetworkId: KN }],
        sessionId,
      });
      return sessionId;
    };
    const ours = (sessionId: string, compactFormat: boolean) =>
      client.retrieveKeywordContext({
        query: KEYWORD,
        knIds: [{ knowledgeNetworkId: KN }],
        sessionId,
        objectTypeId: "product",
        compactFormat,
      });
    /**
     * Times step two in fresh sessions; answers are checked after the clock stops.
     * Each run also reads the simulator's log: its two round trips (the parallel
     * instance queries, then the subgraph batches) as the simulator timed them,
     * so what is left is our own time.
     */
    const timeOurs = async (compactFormat: boolean) => {
      const sessions: string[] = [];
      for (let i = 0; i < OURS_RUNS; i++) sessions.push(await newSession());
      const answers: RetrieveKeywordContextResponse[] = [];
      const total: number[] = [];
      const own: number[] = [];
      for (const session of sessions) {
        sim.clearRequests();
        const started = performance.now();
        answers.push(await ours(session, compactFormat));
        const ms = performance.now() - started;
        const log = sim.requests();
        const slowest = (match: string) => Math.max(0, ...log.filter((r) => r.path.includes(match)).map((r) => r.ms));
        total.push(ms);
        own.push(ms - slowest("/object-types/") - slowest("/subgraph"));
      }
      answers.forEach(checkAnswer);
      return { total, own };
    };
    const sequential = async () => {
      const found = await backend.queryObjects(ctx, KN, "product", {
        // The spec's OR over every property, with like instead of ==: an exact "测试产品" matches nothing here.
        condition: {
          operation: "or",
          sub_conditions: ["product_id", "product_name"].map((field) => ({
            field,
            operation: "like",
            value: KEYWORD,
            value_from: "const" as const,
          })),
        },
        need_total: true,
        limit: 10,
      });
      for (const row of found.datas) {
        for (const target of NEIGHBOR_TYPES) {
          // The spec's §6.2 body: one path from this instance over one relation type.
          await backend.querySubgraph(ctx, KN, {
            relation_type_paths: [
              {
                object_types: [
                  {
                    id: "product",
                    condition: { operation: "==", field: "product_id", value: row["product_id"]!, value_from: "const" },
                    limit: 1,
                  },
                  {
                    id: target,
                    condition: { operation: "exist", field: `${target}_name`, value_from: "const" },
                    limit: 10,
                  },
                ],
                relation_types: [
                  {
                    relation_type_id: `product_${target}`,
                    source_object_type_id: "product",
                    target_object_type_id: target,
                  },
                ],
                limit: 10,
              },
            ],
          });
        }
      }
      if (found.datas.length !== PRODUCTS) throw new Error(`the instance query found ${found.datas.length} products`);
    };

    // Warm up: connections, jieba's dictionary, the engine's lazy indexes, and the JIT (WARMUP_RUNS).
    for (let i = 0; i < WARMUP_RUNS; i++) checkAnswer(await ours(await newSession(), i % 2 === 0));
    await sequential();

    const compact = await timeOurs(true);
    const full = await timeOurs(false);
    const sequentialMs = (await timeEach(SEQUENTIAL_RUNS, sequential)).map((us) => us / 1000);

    // One more run of each with the log cleared, to count its upstream calls.
    const countUpstream = async (run: () => Promise<unknown>) => {
      sim.clearRequests();
      starts.length = 0;
      await run();
      return `${sim.requests().length} upstream requests in ${roundTrips(starts)} round trips`;
    };
    const session = await newSession();
    const oursCalls = await countUpstream(() => ours(session, true));
    const sequentialCalls = await countUpstream(sequential);

    const oursMedian = percentile(compact.total, 50);
    const ownMedian = percentile(compact.own, 50);
    const sequentialMedian = percentile(sequentialMs, 50);
    const ratio = sequentialMedian / oursMedian;
    const timing = (ms: number[]) =>
      `${formatMicros(percentile(ms, 50) * 1000)} (p95 ${formatMicros(percentile(ms, 95) * 1000)})`;
    line(
      "keyword-context: network",
      `"${KEYWORD}" matches ${PRODUCTS} products, ${NEIGHBOR_TYPES.length} relation types, ${LATENCY_MS} ms per upstream call`,
    );
    line(
      `keyword-context: ours, YAML (median of ${OURS_RUNS})`,
      `${timing(compact.total)}, of it our own ${timing(compact.own)} | ${oursCalls}`,
    );
    line(`keyword-context: ours, compact_format=false`, `${timing(full.total)}, of it our own ${timing(full.own)}`);
    line(
      `keyword-context: spec's order (median of ${SEQUENTIAL_RUNS})`,
      `${timing(sequentialMs)} | ${sequentialCalls}`,
    );
    line("keyword-context: spec's order / ours", `${ratio.toFixed(1)}x`);
    const met = ratio >= TARGET_RATIO && ownMedian <= TARGET_OVERHEAD_MS;
    line(
      `keyword-context: target (>= ${TARGET_RATIO}x; 2 round trips + <= ${TARGET_OVERHEAD_MS} ms)`,
      `${met ? "met" : "NOT met"}: ${ratio.toFixed(1)}x; 2 round trips as the simulator timed them + ${ownMedian.toFixed(1)} ms of ours`,
    );
  } finally {
    backend.close();
    await app.shutdown();
    await sim.close();
  }
}

/** Every product found, each with neighbours over all 5 relation types, and no warning. */
function checkAnswer(res: RetrieveKeywordContextResponse): void {
  const instances = res.keywordContext
    ? res.keywordContext.instances.map((i) => new Set(i.neighbors.map((n) => n.relationTypeId)).size)
    : (parse(res.keywordContextText) as { instances: { neighbors: Record<string, string[]> }[] }).instances.map(
        (i) => Object.keys(i.neighbors).length,
      );
  if (
    instances.length !== PRODUCTS ||
    instances.some((relations) => relations !== NEIGHBOR_TYPES.length) ||
    res.warnings.length > 0
  ) {
    throw new Error(
      `keyword context: ${instances.length} instances with neighbours over [${instances.join(", ")}] relation types, ${res.warnings.length} warnings`,
    );
  }
}

/**
 * The bench network: products 测试产品01..10, each linked by one relation type
 * to each of 5 other object types, 3 instances of each.
 */
export function benchBundle(): Bundle {
  const pad = (n: number) => String(n).padStart(2, "0");
  const otherCount = 5;
  const type = (id: string, name: string) => ({
    id,
    name,
    primary_keys: [`${id}_id`],
    display_key: `${id}_name`,
    data_properties: [
      { name: `${id}_id`, type: "varchar" },
      { name: `${id}_name`, type: "varchar" },
    ],
  });
  const products = Array.from({ length: PRODUCTS }, (_, i) => ({
    product_id: `product_${pad(i + 1)}`,
    product_name: `${KEYWORD}${pad(i + 1)}`,
  }));
  return parseBundle(
    {
      knowledge_network: { id: KN, name: "基准网络" },
      object_types: [type("product", "产品"), ...NEIGHBOR_TYPES.map((t) => type(t, t))],
      relation_types: NEIGHBOR_TYPES.map((t) => ({
        id: `product_${t}`,
        name: `产品的${t}`,
        source_object_type_id: "product",
        target_object_type_id: t,
      })),
      objects: {
        product: products,
        ...Object.fromEntries(
          NEIGHBOR_TYPES.map((t) => [
            t,
            Array.from({ length: otherCount }, (_, i) => ({ [`${t}_id`]: `${t}_${i}`, [`${t}_name`]: `${t} ${i}` })),
          ]),
        ),
      },
      relations: Object.fromEntries(
        NEIGHBOR_TYPES.map((t) => [
          `product_${t}`,
          products.flatMap((p, i) => [0, 1, 2].map((k) => [p.product_id, `${t}_${(i + k) % otherCount}`])),
        ]),
      ),
    },
    "the keyword-context bench network",
  );
}

/** The backend, noting when each call reaches it (the simulator calls it after the injected latency). */
function recordingStarts(backend: KnowledgeNetworkBackend, starts: number[]): KnowledgeNetworkBackend {
  return new Proxy(backend, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        starts.push(performance.now());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * Sequential round trips among calls by their start times: a call can depend
 * on an earlier one only if it started about one upstream latency after it
 * (it had to wait for the answer). Node's timers run on a millisecond clock
 * and may fire a fraction of a millisecond early, so calls within half a
 * latency of a round's first call are in that round.
 */
function roundTrips(starts: readonly number[]): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let rounds = 0;
  let roundStart = -Infinity;
  for (const s of sorted) {
    if (s - roundStart >= LATENCY_MS / 2) {
      rounds++;
      roundStart = s;
    }
  }
  return rounds;
}
