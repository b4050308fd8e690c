import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config";
import { MEMRECALL_PROBE } from "../src/config-fields";
import { loadProbe } from "../src/memrecall/calibration";
import { searchMemoriesInput } from "../src/memrecall/inputs";
import { STANDIN_GRID, startStandinEmbeddings } from "../test/helpers/standin-embeddings";
import { probeMeaningOf } from "../test/helpers/standin-labels";
import { type EvalSet, FUSION_MARGIN, fusionShortfalls, type RankFigures, readSet, storeSet } from "./memrecall";
import { type BenchSetup, benchSetup } from "./memrecall-deps";
import { point } from "./record";
import { line } from "./stats";

/** The sets: issue 22's development set (may be tuned on) and its held-out set (never tuned on). */
const SETS = [
  { label: "dev-22", file: "memrecall-dev-22.json" },
  { label: "held-out", file: "memrecall-holdout.json" },
] as const;
/** The tests' grid (test/memrecall/standin-model.test.ts), so the figures can be compared. */
const { noise: NOISE, bases: BASES, dim: DIM, seed: SEED } = STANDIN_GRID;
/** The calibration probe's texts: the service embeds them at start-up to learn the stand-in's scale. */
const meaningOf = probeMeaningOf(loadProbe(MEMRECALL_PROBE));
/** The min_relevance_score a caller who sets none gets, read from the service's input schema. */
const DEFAULT_MIN_RELEVANCE = searchMemoriesInput.parse({ query: "q" }).min_relevance_score;

type Figures = RankFigures;
interface Row {
  keyword: Figures;
  semantic: Figures;
  hybrid: Figures;
  /** Hybrid at the default min_relevance_score. */
  hybridDefault: Figures;
  /** The most of hybrid's recall@5 a calibrated score could keep at the default min_relevance_score (`calibratedBound`). */
  bound: number;
}

/** One hybrid result at min_relevance_score 0: its place, its score, and its part of its query's recall if relevant (else 0). */
interface Judged {
  first: boolean;
  score: number;
  recall: number;
}

/**
 * Memory search with a model, measured with the stand-in embeddings model
 * (test/helpers/standin-embeddings.ts) in place of one: issue 22's
 * development and held-out sets, each stored through StoreMemory against a
 * stand-in built from that set's labels at cosine bases 0.15 and 0.7 and
 * noise 4, 2 and 1 (EMBEDDINGS_BASE_URL, as the service is configured for a
 * model), and without an endpoint (the lexical default). Per row: recall@5
 * and MRR of keyword, semantic and hybrid search (min_relevance_score 0), of
 * hybrid at the default min_relevance_score with the share of ranking's
 * recall it keeps and the most a calibrated score could keep, and whether
 * hybrid is at least the better of keyword and semantic less 0.02 on both
 * figures (issue 34's check, computed, not assumed).
 */
export async function benchStandin(): Promise<void> {
  line(
    "standin: columns",
    `recall@5/MRR per mode at min_relevance_score 0, and hybrid at the default ${DEFAULT_MIN_RELEVANCE}; ` +
      `stand-in dim ${DIM}, seed ${SEED}`,
  );
  const dir = mkdtempSync(join(tmpdir(), "bench-standin-"));
  const checks = { held: 0, rows: 0 };
  try {
    for (const { label, file } of SETS) {
      const data = readSet(file);
      const answered = data.queries.filter((q) => q.relevant.length > 0).length;
      line(`standin: ${label} set`, `${data.memories.length} memories, ${answered} queries with an answer`);
      const lexical = await benchSetup(loadConfig({}));
      try {
        const row = await measure(lexical, data, join(dir, `${label}-lexical.db`));
        print(`${label}, lexical default`, row, checks);
        if (label === "held-out") chart("lexical", row);
      } finally {
        await lexical.close();
      }
      for (const base of BASES) {
        for (const noise of NOISE) {
          const standin = await startStandinEmbeddings({ set: data, noise, base, dim: DIM, seed: SEED, meaningOf });
          const setup = await benchSetup(
            loadConfig({ EMBEDDINGS_BASE_URL: standin.baseUrl, EMBEDDINGS_MODEL: "standin" }),
          );
          try {
            const row = await measure(setup, data, join(dir, `${label}-${base}-${noise}.db`));
            print(`${label}, base ${base}, noise ${noise}`, row, checks);
            if (label === "held-out") chart(`${base}/${noise}`, row);
            const unlabelled = [...standin.model.seen].filter(([, l]) => l === undefined).map(([text]) => text);
            const unrelated = data.queries.filter((q) => q.relevant.length === 0).map((q) => q.query);
            const other = unlabelled.filter((t) => !unrelated.includes(t)).length;
            if (other > 0) line("  texts the stand-in could not label", `${other} beside the set's unrelated queries`);
          } finally {
            await setup.close();
            await standin.close();
          }
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  line(
    "standin: hybrid ≥ best part − 0.02",
    `on ${checks.held} of ${checks.rows} rows (recall@5 and MRR both; issue 34 asks it of every row)`,
  );
}

async function measure(setup: BenchSetup, data: EvalSet, path: string): Promise<Row> {
  const stored = await storeSet(setup, data, path);
  try {
    const answered = data.queries.filter((q) => q.relevant.length > 0);
    const judged: Judged[] = [];
    const at = async (mode: "keyword" | "semantic" | "hybrid", min: number): Promise<Figures> => {
      let recall = 0;
      let rr = 0;
      for (const q of data.queries) {
        const results = await stored.search(q.query, mode, min);
        if (mode === "hybrid" && min === 0)
          judged.push(
            ...results.map((r, i) => ({
              first: i === 0,
              score: r.relevance_score,
              recall: q.relevant.includes(r.memory_key) ? 1 / q.relevant.length : 0,
            })),
          );
        if (q.relevant.length === 0) continue;
        const keys = results.map((r) => r.memory_key);
        recall += q.relevant.filter((k) => keys.includes(k)).length / q.relevant.length;
        const first = keys.findIndex((k) => q.relevant.includes(k));
        rr += first === -1 ? 0 : 1 / (first + 1);
      }
      return { recall: recall / answered.length, mrr: rr / answered.length };
    };
    return {
      keyword: await at("keyword", 0),
      semantic: await at("semantic", 0),
      hybrid: await at("hybrid", 0),
      hybridDefault: await at("hybrid", DEFAULT_MIN_RELEVANCE),
      bound: calibratedBound(judged, DEFAULT_MIN_RELEVANCE),
    };
  } finally {
    await stored.close();
  }
}

/**
 * The share of ranking's recall@5 that any calibrated score could keep at
 * `threshold`, if it knew a result's score to a tenth and whether it came
 * first: results binned so, a calibrated score reaches the threshold only in
 * the bins whose results are relevant at least that often. Computed from the
 * row's own labels (the searches' unrelated queries included): a bound on
 * what "0.5 means half" allows, not a method. Issue 34 asks the default
 * threshold to keep 90 % of what ranking found; where this is below, no
 * calibrated score can.
 */
function calibratedBound(judged: readonly Judged[], threshold: number): number {
  const bins = new Map<string, { relevant: number; results: number; recall: number }>();
  for (const j of judged) {
    const key = `${j.first}/${Math.min(9, Math.floor(j.score * 10))}`;
    const bin = bins.get(key) ?? { relevant: 0, results: 0, recall: 0 };
    bin.results++;
    if (j.recall > 0) bin.relevant++;
    bin.recall += j.recall;
    bins.set(key, bin);
  }
  const all = [...bins.values()].reduce((sum, b) => sum + b.recall, 0);
  const kept = [...bins.values()].reduce((sum, b) => sum + (b.relevant >= threshold * b.results ? b.recall : 0), 0);
  return all === 0 ? 0 : kept / all;
}

const f = (x: Figures) => `${x.recall.toFixed(3)}/${x.mrr.toFixed(3)}`;

function print(label: string, row: Row, checks: { held: number; rows: number }): void {
  const short = fusionShortfalls(row.hybrid, row.keyword, row.semantic);
  checks.rows++;
  if (short.length === 0) checks.held++;
  const kept = row.hybrid.recall === 0 ? 0 : row.hybridDefault.recall / row.hybrid.recall;
  line(
    `standin: ${label}`,
    `keyword ${f(row.keyword)} | semantic ${f(row.semantic)} | hybrid ${f(row.hybrid)} | ` +
      `hybrid at ${DEFAULT_MIN_RELEVANCE} ${f(row.hybridDefault)} (keeps ${(100 * kept).toFixed(0)}%, ` +
      `calibrated at most ${(100 * row.bound).toFixed(0)}%) | ` +
      `hybrid ≥ best part − ${FUSION_MARGIN}: ${short.length === 0 ? "yes" : `NO (${short.join(", ")})`}`,
  );
}

function chart(category: string, row: Row): void {
  point("standin-held-out-recall-at-5", "keyword", category, row.keyword.recall);
  point("standin-held-out-recall-at-5", "semantic", category, row.semantic.recall);
  point("standin-held-out-recall-at-5", "hybrid", category, row.hybrid.recall);
  point("standin-held-out-recall-at-5", `hybrid at ${DEFAULT_MIN_RELEVANCE}`, category, row.hybridDefault.recall);
}
