import { pino } from "pino";
import { DEFAULT_SEED, generateBundle } from "../data/generator/build";
import type { CallContext } from "../src/core/call-context";
import { normalizeText } from "../src/core/text";
import { parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { formatMicros, line, percentile, timeEach } from "./stats";

const SCALE = 100_000;
const QUERIES = 2000;

/**
 * The embedded engine's per-query cost at 100k instances: exact (==) and
 * contains (like) lookups on disease names through the indexes, against the
 * same answer computed by scanning every row, side by side in one run.
 */
export async function benchEngine(): Promise<void> {
  const generated = performance.now();
  const bundle = parseBundle(
    JSON.parse(JSON.stringify(generateBundle({ seed: DEFAULT_SEED, scale: SCALE }))),
    `generated scale ${SCALE}`,
  );
  const loadStarted = performance.now();
  const engine = new EmbeddedBackend([bundle], { timeZone: "Asia/Shanghai" });
  const loadMs = performance.now() - loadStarted;
  const total = Object.values(bundle.objects).reduce((n, rows) => n + rows.length, 0);
  line(
    `engine: bundle of ${total} instances`,
    `generated+checked in ${((loadStarted - generated) / 1000).toFixed(2)} s, engine built in ${loadMs.toFixed(0)} ms`,
  );

  const ctx: CallContext = {
    caller: { accountId: "bench", accountType: "user" },
    traceId: "bench",
    language: "en" as const,
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    remainingMs: () => undefined,
  };
  const diseases = bundle.objects["disease"] ?? [];
  const names = diseases.map((d) => String(d["disease_name"]));
  const pick = (i: number) => names[(i * 7919) % names.length]!;
  const fragment = (i: number) => {
    const chars = [...pick(i)];
    const len = Math.min(chars.length, 2 + (i % 3));
    const from = (i * 31) % Math.max(1, chars.length - len + 1);
    return chars.slice(from, from + len).join("");
  };

  // First queries build the lazy indexes; report that cost on its own.
  const warm = performance.now();
  await engine.queryObjects(ctx, "kn_medical", "disease", {
    condition: { operation: "==", field: "disease_name", value: pick(0) },
    limit: 10,
  });
  await engine.queryObjects(ctx, "kn_medical", "disease", {
    condition: { operation: "like", field: "disease_name", value: fragment(0) },
    limit: 10,
  });
  line("engine: first == and like (index build)", formatMicros((performance.now() - warm) * 1000));

  const exact = await timeEach(QUERIES, (i) =>
    engine.queryObjects(ctx, "kn_medical", "disease", {
      condition: { operation: "==", field: "disease_name", value: pick(i) },
      limit: 10,
      need_total: true,
    }),
  );
  const like = await timeEach(QUERIES, (i) =>
    engine.queryObjects(ctx, "kn_medical", "disease", {
      condition: { operation: "like", field: "disease_name", value: fragment(i) },
      limit: 10,
      need_total: true,
    }),
  );
  const normalized = names.map(normalizeText);
  const scanExact = await timeEach(200, (i) => names.filter((n) => n === pick(i)).length);
  const scanLike = await timeEach(200, (i) => {
    const needle = normalizeText(fragment(i));
    return normalized.filter((n) => n.includes(needle)).length;
  });
  const p50 = (s: number[]) => percentile(s, 50);
  line(
    `engine: disease_name == (${diseases.length} diseases)`,
    `p50 ${formatMicros(p50(exact))} p95 ${formatMicros(percentile(exact, 95))} | bare scan p50 ${formatMicros(p50(scanExact))} | scan/indexed ${(p50(scanExact) / p50(exact)).toFixed(1)}x`,
  );
  line(
    `engine: disease_name like (2-4 chars)`,
    `p50 ${formatMicros(p50(like))} p95 ${formatMicros(percentile(like, 95))} | bare scan p50 ${formatMicros(p50(scanLike))} | scan/indexed ${(p50(scanLike) / p50(like)).toFixed(1)}x`,
  );
  const sample = diseases[123]!;
  const hop = await timeEach(QUERIES, () =>
    engine.querySubgraph(ctx, "kn_medical", {
      relation_type_paths: [
        {
          object_types: [
            {
              id: "disease",
              condition: { operation: "==", field: "disease_id", value: sample["disease_id"]! },
              limit: 1,
            },
            { id: "symptom", limit: 10 },
          ],
          relation_types: [
            { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
          ],
          limit: 10,
        },
      ],
    }),
  );
  line(
    "engine: one-hop subgraph from one disease",
    `p50 ${formatMicros(p50(hop))} p95 ${formatMicros(percentile(hop, 95))}`,
  );
}
