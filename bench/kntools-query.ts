import { pino } from "pino";
import { DEFAULT_SEED, generateBundle } from "../data/generator/build";
import type { CallContext } from "../src/core/call-context";
import type { Json } from "../src/core/json";
import { type Bundle, loadBundleFile, parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import type { Condition, SubgraphQuery } from "../src/kn/types";
import type { KnowledgeDeps } from "../src/knowledge/deps";
import { instanceTools } from "../src/knowledge/kn-tools/instances";
import { queryObjectInstancesInput } from "../src/knowledge/kn-tools/query-instances/input";
import { queryInstanceSubgraphInput } from "../src/knowledge/kn-tools/subgraph/input";
import { formatMicros, line, percentile, timeEach } from "./stats";

const KN = "kn_medical";
const SAMPLE_BUNDLE = "data/kn_medical.bundle.json";
const SCALE = 100_000;
const WARMUP = 20;
const RUNS = 500;

/**
 * query_object_instance and query_instance_subgraph, each tool's own time
 * (p50/p99) in process on the embedded engine: the MCP tool's `run` (the
 * checks against the schema, the cursor, the engine's query, the compact
 * answer), beside the bare engine call it makes for the same query, at the
 * sample network and at 100k generated instances. What the tool adds over the
 * engine is the difference. Calls run one after another, tool and engine
 * alternating, after a warm-up (the first queries build the engine's lazy
 * indexes).
 */
export async function benchKnToolsQuery(): Promise<void> {
  await benchAt("sample", loadBundleFile(SAMPLE_BUNDLE));
  const generated = generateBundle({ seed: DEFAULT_SEED, scale: SCALE });
  await benchAt(`${SCALE / 1000}k`, parseBundle(JSON.parse(JSON.stringify(generated)), `generated scale ${SCALE}`));
}

async function benchAt(label: string, bundle: Bundle): Promise<void> {
  const engine = new EmbeddedBackend([bundle], { timeZone: "Asia/Shanghai" });
  const total = Object.values(bundle.objects).reduce((n, rows) => n + rows.length, 0);
  line(`kntools-query @${label}`, `${total} instances`);
  const ctx: CallContext = {
    caller: { accountId: "bench", accountType: "user" },
    traceId: "bench",
    language: "en" as const,
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    remainingMs: () => undefined,
  };
  const deps = { backend: engine } as unknown as KnowledgeDeps;
  const [objectTool, subgraphTool] = instanceTools as [(typeof instanceTools)[number], (typeof instanceTools)[number]];
  const run = (tool: typeof objectTool, input: unknown) => tool.run(deps, ctx, input as never);

  const diseases = bundle.objects["disease"] ?? [];
  const symptoms = bundle.objects["symptom"] ?? [];
  const pick = <T>(list: T[], i: number) => list[(i * 7919) % list.length]!;
  const fragment = (i: number) => [...String(pick(diseases, i)["disease_name"])].slice(0, 2).join("");

  // query_object_instance: a like filter with its total (the first page), then the same query's second page.
  const objectCondition = (i: number): Condition => ({
    operation: "and",
    sub_conditions: [{ field: "disease_name", operation: "like", value: fragment(i), value_from: "const" }],
  });
  const objectInput = (i: number) =>
    queryObjectInstancesInput.parse({ kn_id: KN, ot_id: "disease", condition: objectCondition(i), limit: 10 });
  await compare(
    "query_object_instance like, page 1",
    (i) => run(objectTool, objectInput(i)),
    (i) => engine.queryObjects(ctx, KN, "disease", { condition: objectCondition(i), limit: 10, need_total: true }),
  );
  const cursors = new Map<number, string>();
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const first = (await run(objectTool, objectInput(i))).answer as Record<string, Json>;
    cursors.set(i, String(first["next_cursor"] ?? ""));
  }
  await compare(
    "query_object_instance like, page 2 (cursor)",
    (i) => run(objectTool, { ...objectInput(i), cursor: cursors.get(i) ?? "" }),
    (i) => engine.queryObjects(ctx, KN, "disease", { condition: objectCondition(i), limit: 10, need_total: true }),
  );

  // query_instance_subgraph: one hop from a disease, and two hops from a symptom (backward, then forward).
  const oneHop = (i: number): SubgraphQuery => ({
    relation_type_paths: [
      {
        object_types: [
          {
            id: "disease",
            condition: {
              field: "disease_id",
              operation: "==",
              value: pick(diseases, i)["disease_id"]!,
              value_from: "const",
            },
            limit: 1000,
          },
          { id: "symptom", limit: 1000 },
        ],
        relation_types: [
          { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
        ],
        limit: 2000,
      },
    ],
  });
  const twoHops = (i: number): SubgraphQuery => ({
    relation_type_paths: [
      {
        object_types: [
          {
            id: "symptom",
            condition: {
              field: "symptom_id",
              operation: "==",
              value: pick(symptoms, i)["symptom_id"]!,
              value_from: "const",
            },
            limit: 1000,
          },
          { id: "disease", limit: 1000 },
          { id: "drugs", limit: 1000 },
        ],
        relation_types: [
          { relation_type_id: "has_symptom", source_object_type_id: "symptom", target_object_type_id: "disease" },
          { relation_type_id: "cures", source_object_type_id: "disease", target_object_type_id: "drugs" },
        ],
        limit: 2000,
      },
    ],
  });
  const asInput = (q: SubgraphQuery) => queryInstanceSubgraphInput.parse({ kn_id: KN, ...q });
  await compare(
    "query_instance_subgraph 1 hop",
    (i) => run(subgraphTool, asInput(oneHop(i))),
    (i) => engine.querySubgraph(ctx, KN, oneHop(i)),
  );
  await compare(
    "query_instance_subgraph 2 hops (back, fwd)",
    (i) => run(subgraphTool, asInput(twoHops(i))),
    (i) => engine.querySubgraph(ctx, KN, twoHops(i)),
  );
}

/** Times the tool and the bare engine call alternately; prints both and what the tool adds. */
async function compare(label: string, tool: (i: number) => Promise<unknown>, bare: (i: number) => Promise<unknown>) {
  for (let i = 0; i < WARMUP; i++) {
    await tool(i);
    await bare(i);
  }
  const toolTimes: number[] = [];
  const bareTimes: number[] = [];
  for (let i = WARMUP; i < WARMUP + RUNS; i++) {
    toolTimes.push(...(await timeEach(1, () => tool(i))));
    bareTimes.push(...(await timeEach(1, () => bare(i))));
  }
  const p = (s: number[], q: number) => formatMicros(percentile(s, q));
  line(
    `  ${label}`,
    `tool p50 ${p(toolTimes, 50)} p99 ${p(toolTimes, 99)} | engine alone p50 ${p(bareTimes, 50)} p99 ${p(bareTimes, 99)} | tool adds p50 ${formatMicros(percentile(toolTimes, 50) - percentile(bareTimes, 50))}`,
  );
}
