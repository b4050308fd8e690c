import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { z } from "zod";
import { loadConfig } from "../src/config";
import type { Glossary } from "../src/memrecall/glossary";
import { searchMemoriesInput, storeMemoryInput } from "../src/memrecall/inputs";
import { embedMemoryText } from "../src/memrecall/lexical-embedder";
import type { MemoryIndex } from "../src/memrecall/memory-index";
import { searchMemories } from "../src/memrecall/search";
import { searchTextOf } from "../src/memrecall/search-text";
import { storeMemory } from "../src/memrecall/write";
import type { MemoryStore, MemoryWrite } from "../src/store/memories/memory-store";
import { PostgresMemoryStore } from "../src/store/memories/postgres-memory-store";
import { SqliteMemoryStore } from "../src/store/memories/sqlite-memory-store";
import { figure } from "./figures";
import { benchFusionWeight } from "./fusion-fit";
import { type BenchSetup, benchContext, benchDeps, benchSetup, benchLog as log } from "./memrecall-deps";
import { type ChartId, point } from "./record";
import { formatMicros, line, percentile, timeEach } from "./stats";

const DATABASE_URL = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";
const MODES = ["keyword", "semantic", "hybrid"] as const;
export type Mode = (typeof MODES)[number];
const SIZES = [10_000, 100_000];
const LATENCY_QUERIES = 200;
/** Score bands of the reliability line: a band's share of relevant results should be about its scores. */
const BANDS = [0, 0.3, 0.5, 0.7, 0.9];
/** Issue 6 targets at 100 k memories of one user. */
const TARGET_P95_MS = { keyword: 20, hybrid: 50 } as const;
/** Issue 22 targets on the held-out set: hybrid recall@5 overall, and the weakest kind's. */
const TARGET_HOLDOUT_HYBRID_RECALL = 0.85;
const TARGET_HOLDOUT_KIND_RECALL = 0.7;

const evalSet = z.object({
  memories: z.array(
    z.object({
      memory_key: z.string(),
      memory_type: z.string(),
      summary: z.string(),
      content: z.string(),
      keywords: z.array(z.string()).default([]),
      created_days_ago: z.number().int().min(0),
      supersedes: z.string().optional(),
    }),
  ),
  queries: z.array(
    z
      .object({
        query: z.string(),
        kind: z.string(),
        language: z.string(),
        relevant: z.array(z.string()),
        /** Older versions of a relevant memory (a changed preference): they should rank below it. */
        stale: z.array(z.string()).default([]),
      })
      .refine((q) => q.relevant.length > 0 || q.kind === "unrelated", "only an unrelated query has no relevant memory"),
  ),
});

/**
 * MemRecall search, end to end through the domain code the RPC calls, as it
 * ships: no LLM (no query expansion), no embeddings endpoint (MemRecall's
 * local embedder), the shipped glossary.
 *
 * Quality, on two labelled sets stored through StoreMemory and dated by their
 * `created_days_ago`: bench/memrecall-eval.json (issue 6: 76 memories, 70
 * queries, Chinese and English, mostly about a medical knowledge network) and
 * bench/memrecall-work-eval.json (issue 17: 158 working memories, 90 queries
 * in seven kinds plus unrelated ones, written before the search was tuned),
 * the development set of issue 22; and bench/memrecall-holdout.json (issue
 * 22's held-out set: 123 memories of another person and domain, 74 queries in
 * the same kinds, written before any issue-22 tuning and never to be tuned
 * on), whose hybrid figures are checked against issue 22's targets and shown
 * per kind beside the development sets'; and bench/memrecall-dev-22.json
 * (issue 22's second development set, which may be tuned on: 127 memories of
 * a data platform engineer at a logistics company, in Chinese, English and a
 * mix of both, 86 queries in the held-out set's kinds), printed just before
 * the held-out set, per mode and per kind, and charted beside it.
 * Every query in each mode with min_relevance_score 0 and the default limit 5:
 * recall@5 and MRR overall and per kind; calibration (what a score of 0.5 or
 * more means: the share of such results that are relevant, per query
 * language, and how many unrelated queries still get one); latest wins (a
 * changed preference: the current memory above the ones it replaced).
 * Latency: one user with 10 k and 100 k memories (the first set's memories
 * plus generated filler written straight to the store), distinct queries so
 * the result cache never answers, on SQLite and on PostgreSQL.
 */
export async function benchMemRecall(): Promise<void> {
  const setup = await benchSetup(loadConfig({}));
  try {
    await memrecallQuality(setup);
    if (process.env["BENCH_QUALITY_ONLY"] === "1") return;
    const first = readSet("memrecall-eval.json");
    const dir = mkdtempSync(join(tmpdir(), "bench-memrecall-"));
    try {
      for (const make of [
        () => new SqliteMemoryStore({ path: join(dir, "latency.db"), log }),
        () => new PostgresMemoryStore({ connectionString: DATABASE_URL, log }),
      ]) {
        await latency(setup, first, make());
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await setup.close();
  }
}

/** A labelled memory-search set of bench/, by file name. */
export function readSet(file: string): EvalSet {
  return evalSet.parse(JSON.parse(readFileSync(new URL(`./${file}`, import.meta.url), "utf8")));
}

/**
 * The quality part of the bench under `setup`'s configuration: the four
 * labelled sets, per mode and per kind, and the held-out set against issue
 * 22's targets (`npm run eval` runs this part alone).
 */
export async function memrecallQuality(setup: BenchSetup): Promise<void> {
  const first = readSet("memrecall-eval.json");
  const work = readSet("memrecall-work-eval.json");
  const holdout = readSet("memrecall-holdout.json");
  const dev22 = readSet("memrecall-dev-22.json");
  const dir = mkdtempSync(join(tmpdir(), "bench-memrecall-"));
  try {
    // The sets whose searches went without the configured LLM's expansion (it failed).
    const degraded: string[] = [];
    await quality(setup, "issue-6 set", first, join(dir, "quality-6.db"), degraded);
    const development = await quality(
      setup,
      "work set",
      work,
      join(dir, "quality-17.db"),
      degraded,
      "memrecall-work-recall-at-5",
    );
    const developmentDev22 = await quality(
      setup,
      "development set dev-22",
      dev22,
      join(dir, "quality-dev-22.db"),
      degraded,
    );
    const heldOut = await quality(setup, "held-out set", holdout, join(dir, "quality-holdout.db"), degraded);
    await benchFusionWeight(setup);
    const chart = "memrecall-hybrid-dev-vs-holdout";
    for (const [kind, recall] of development.hybridByKind) point(chart, "development set (work set)", kind, recall);
    for (const [kind, recall] of developmentDev22.hybridByKind) point(chart, "development set (dev-22)", kind, recall);
    for (const [kind, recall] of heldOut.hybridByKind) point(chart, "held-out set", kind, recall);
    const [weakestDevKind, weakestDev] = [...developmentDev22.hybridByKind].reduce((a, b) => (b[1] < a[1] ? b : a));
    line(
      "development set dev-22 hybrid (tuned on)",
      `recall@5 ${developmentDev22.hybrid.toFixed(3)}, weakest kind ${weakestDevKind} ${weakestDev.toFixed(2)} ` +
        "(the issue-22 targets are judged on the held-out set only)",
    );
    const [weakestKind, weakest] = [...heldOut.hybridByKind].reduce((a, b) => (b[1] < a[1] ? b : a));
    const met = heldOut.hybrid >= TARGET_HOLDOUT_HYBRID_RECALL && weakest >= TARGET_HOLDOUT_KIND_RECALL;
    line(
      "held-out set hybrid vs issue-22 targets",
      `recall@5 ${heldOut.hybrid.toFixed(3)} (target ≥ ${TARGET_HOLDOUT_HYBRID_RECALL}), weakest kind ${weakestKind} ` +
        `${weakest.toFixed(2)} (target every kind ≥ ${TARGET_HOLDOUT_KIND_RECALL}): ${met ? "met" : "NOT met"}`,
    );
    figure(["held-out set", "issue-22 targets met"], met ? "yes" : "no");
    // The figures are printed; they are not the configured LLM's when it failed under them.
    if (degraded.length > 0)
      throw new Error(
        `the LLM's query expansion failed in searches of ${degraded.join(", ")}: searched on the query alone`,
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Issue 34: hybrid search at least the better of keyword and semantic, on recall@5 and on MRR, within this. */
export const FUSION_MARGIN = 0.02;

/** A search mode's recall@5 and MRR on a set. */
export interface RankFigures {
  recall: number;
  mrr: number;
}

/** The figures on which hybrid falls more than FUSION_MARGIN below the better of keyword and semantic. */
export function fusionShortfalls(
  hybrid: RankFigures,
  keyword: RankFigures,
  semantic: RankFigures,
): ("recall@5" | "MRR")[] {
  return (["recall", "mrr"] as const)
    .filter((m) => hybrid[m] < Math.max(keyword[m], semantic[m]) - FUSION_MARGIN)
    .map((m) => (m === "recall" ? "recall@5" : "MRR"));
}

export type EvalSet = z.output<typeof evalSet>;
type EvalMemory = EvalSet["memories"][number];

const storeInput = (m: EvalMemory) =>
  storeMemoryInput.parse({ ...m, keywords: m.keywords.map((keyword) => ({ keyword, weight: 1 })) });

/** The set's memories stored through StoreMemory, oldest first, then dated `created_days_ago` back in the file. */
async function storeDated(setup: BenchSetup, data: EvalSet, path: string, owner: string): Promise<void> {
  const store = new SqliteMemoryStore({ path, log });
  await store.migrate();
  const deps = benchDeps(setup, store);
  const ctx = benchContext(owner);
  const oldestFirst = data.memories
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.created_days_ago - a.m.created_days_ago || a.i - b.i);
  try {
    for (const { m } of oldestFirst) await storeMemory(deps, ctx, storeInput(m));
  } finally {
    await store.close();
  }
  const db = new Database(path);
  const now = Date.now();
  const date = db.prepare("UPDATE memories SET created_at = ?, updated_at = ? WHERE user_id = ? AND memory_key = ?");
  // Memories of one day keep the order they were stored in, a second apart.
  oldestFirst.forEach(({ m }, order) => {
    const at = now - m.created_days_ago * 86_400_000 - (oldestFirst.length - order) * 1000;
    date.run(at, at, `user:${owner}`, m.memory_key);
  });
  db.close();
}

/** A set stored and dated in the SQLite file `path`, opened afresh under `setup`: what a process started after those writes sees. */
export interface StoredSet {
  /** The set's queries searched in `mode` with the default limit (5) at `minRelevanceScore`. */
  search(
    query: string,
    mode: Mode,
    minRelevanceScore: number,
  ): Promise<{ memory_key: string; relevance_score: number }[]>;
  /** Searches so far that went without the LLM's expansion because the LLM failed (SearchMemories' `degraded`). */
  degraded(): number;
  close(): Promise<void>;
}

export async function storeSet(
  setup: BenchSetup,
  data: EvalSet,
  path: string,
  /** The search index over the store, when not the service's own. */
  indexOf?: (store: MemoryStore) => MemoryIndex,
): Promise<StoredSet> {
  const owner = `eval-${randomUUID()}`;
  await storeDated(setup, data, path, owner);
  const store = new SqliteMemoryStore({ path, log });
  const deps = { ...benchDeps(setup, store), ...(indexOf ? { index: indexOf(store) } : {}) };
  const ctx = benchContext(owner);
  let degraded = 0;
  return {
    search: async (query, mode, minRelevanceScore) => {
      const out = await searchMemories(
        deps,
        ctx,
        searchMemoriesInput.parse({ query, search_mode: mode, min_relevance_score: minRelevanceScore }),
      );
      if (out.degraded) degraded++;
      return out.results;
    },
    degraded: () => degraded,
    close: () => store.close(),
  };
}

interface Tally {
  recall: number;
  rr: number;
  n: number;
}

/** The hybrid mode's recall@5 on a set: overall, and per kind of query (unrelated ones have none). */
interface HybridRecall {
  hybrid: number;
  hybridByKind: Map<string, number>;
}

/**
 * Prints a set's figures per search mode; with `chart`, its recall@5 per kind goes there too.
 * Returns the hybrid mode's recall@5, for comparing sets.
 */
async function quality(
  setup: BenchSetup,
  label: string,
  data: EvalSet,
  path: string,
  /** Gets `label` when a search went without the LLM's expansion. */
  degraded: string[],
  chart?: ChartId,
): Promise<HybridRecall> {
  const stored = await storeSet(setup, data, path);
  try {
    const figures = await measured(stored, label, data, chart);
    if (stored.degraded() > 0) {
      line(`${label}: searches without the LLM's expansion`, `${stored.degraded()} (the LLM failed)`);
      degraded.push(label);
    }
    return figures;
  } finally {
    await stored.close();
  }
}

async function measured(stored: StoredSet, label: string, data: EvalSet, chart?: ChartId): Promise<HybridRecall> {
  const tallies: Record<string, Tally> = {};
  const tally = (bucket: string, recall: number, rr: number) => {
    const t = (tallies[bucket] ??= { recall: 0, rr: 0, n: 0 });
    t.recall += recall;
    t.rr += rr;
    t.n++;
  };
  for (const mode of MODES) {
    // Calibration: results scoring 0.5 or more, by query language, and how many are relevant.
    const confident = new Map<string, { relevant: number; all: number }>();
    // Reliability: of the results in each score band, the share that is relevant.
    const bands = BANDS.map(() => ({ relevant: 0, all: 0 }));
    const relevantAbove = { found: 0, all: 0 };
    let unrelatedAbove = 0;
    let unrelated = 0;
    const latest = { won: 0, n: 0 };
    for (const q of data.queries) {
      const results = await stored.search(q.query, mode, 0);
      const keys = results.map((r) => r.memory_key);
      for (const r of results) {
        const band = bands[BANDS.findLastIndex((low) => r.relevance_score >= low)]!;
        band.all++;
        if (q.relevant.includes(r.memory_key)) band.relevant++;
        if (r.relevance_score < 0.5) continue;
        for (const lang of [q.language, "all"]) {
          const c = confident.get(lang) ?? { relevant: 0, all: 0 };
          c.all++;
          if (q.relevant.includes(r.memory_key)) c.relevant++;
          confident.set(lang, c);
        }
      }
      if (q.kind === "unrelated") {
        unrelated++;
        if (results.some((r) => r.relevance_score >= 0.5)) unrelatedAbove++;
        continue;
      }
      relevantAbove.all += q.relevant.length;
      relevantAbove.found += results.filter(
        (r) => r.relevance_score >= 0.5 && q.relevant.includes(r.memory_key),
      ).length;
      const recall = q.relevant.filter((k) => keys.includes(k)).length / q.relevant.length;
      const first = keys.findIndex((k) => q.relevant.includes(k));
      // Misses, query by query, for the sets that may be tuned on (never the held-out one).
      if (process.env["BENCH_MEMRECALL_VERBOSE"] === "1" && !label.startsWith("held-out") && first !== 0)
        process.stdout.write(
          `  ${first === -1 ? "MISS" : `rank${first + 1}`} ${mode} ${q.kind} ${JSON.stringify(q.query)} want ${q.relevant.join(",")}; got ${results
            .slice(0, 3)
            .map((r) => `${r.memory_key} ${r.relevance_score}`)
            .join(", ")}\n`,
        );
      const rr = first === -1 ? 0 : 1 / (first + 1);
      tally(mode, recall, rr);
      tally(`${mode}/${q.kind}`, recall, rr);
      if (q.stale.length > 0) {
        latest.n++;
        const staleAt = keys.findIndex((k) => q.stale.includes(k));
        if (first !== -1 && (staleAt === -1 || first < staleAt)) latest.won++;
      }
    }
    const all = tallies[mode]!;
    line(
      `${label} ${mode} (${all.n} queries)`,
      `recall@5 ${(all.recall / all.n).toFixed(3)}  MRR ${(all.rr / all.n).toFixed(3)}`,
    );
    figure([label, mode, "queries"], all.n);
    figure([label, mode, "recall@5"], all.recall / all.n);
    figure([label, mode, "MRR"], all.rr / all.n);
    const kinds = Object.entries(tallies)
      .filter(([k]) => k.startsWith(`${mode}/`))
      .map(([k, t]) => {
        const kind = k.slice(mode.length + 1);
        if (chart) point(chart, mode, kind, t.recall / t.n);
        figure([label, mode, "by kind", kind, "recall@5"], t.recall / t.n);
        figure([label, mode, "by kind", kind, "MRR"], t.rr / t.n);
        return [k, t] as const;
      })
      .map(([k, t]) => `${k.slice(mode.length + 1)} ${(t.recall / t.n).toFixed(2)}/${(t.rr / t.n).toFixed(2)}`);
    line("  by kind (recall@5/MRR)", kinds.join(", "));
    const share = (c: { relevant: number; all: number } | undefined) =>
      c === undefined || c.all === 0 ? "none" : `${((100 * c.relevant) / c.all).toFixed(0)}% of ${c.all}`;
    const languages = [...confident.keys()].filter((l) => l !== "all").sort();
    line(
      "  calibration: scores ≥ 0.5 relevant",
      `${share(confident.get("all"))} (${languages.map((l) => `${l} ${share(confident.get(l))}`).join(", ")}); ` +
        `relevant ones scored ≥ 0.5: ${((100 * relevantAbove.found) / Math.max(1, relevantAbove.all)).toFixed(0)}%` +
        (unrelated > 0 ? `; unrelated queries with a result ≥ 0.5: ${unrelatedAbove}/${unrelated}` : ""),
    );
    line(
      "  relevant by score band",
      BANDS.map(
        (low, i) =>
          `[${low.toFixed(1)}, ${(BANDS[i + 1] ?? 1).toFixed(1)}${BANDS[i + 1] === undefined ? "]" : ")"} ${share(bands[i])}`,
      ).join(", "),
    );
    const confidentAll = confident.get("all");
    if (confidentAll) figure([label, mode, "share relevant of scores ≥ 0.5"], confidentAll.relevant / confidentAll.all);
    figure([label, mode, "share of relevant scored ≥ 0.5"], relevantAbove.found / Math.max(1, relevantAbove.all));
    if (unrelated > 0) figure([label, mode, "unrelated queries with a result ≥ 0.5"], unrelatedAbove);
    if (latest.n > 0) {
      line("  latest wins (current above replaced)", `${latest.won}/${latest.n}`);
      figure([label, mode, "latest wins"], latest.won / latest.n);
    }
  }
  const shown = (m: string) =>
    `recall@5 ${(tallies[m]!.recall / tallies[m]!.n).toFixed(3)} MRR ${(tallies[m]!.rr / tallies[m]!.n).toFixed(3)}`;
  const recall = (m: string) => tallies[m]!.recall / tallies[m]!.n;
  const figures = (m: string): RankFigures => ({ recall: recall(m), mrr: tallies[m]!.rr / tallies[m]!.n });
  const short = fusionShortfalls(figures("hybrid"), figures("keyword"), figures("semantic"));
  line(
    `${label} hybrid ≥ best part − ${FUSION_MARGIN}`,
    `${short.length === 0 ? "yes" : `NO (${short.join(", ")})`} (hybrid ${shown("hybrid")}; keyword ${shown("keyword")}; semantic ${shown("semantic")})`,
  );
  const hybridByKind = new Map(
    Object.keys(tallies)
      .filter((k) => k.startsWith("hybrid/"))
      .map((k) => [k.slice("hybrid/".length), recall(k)] as const),
  );
  return { hybrid: recall("hybrid"), hybridByKind };
}

async function analyze(): Promise<void> {
  const db = new pg.Client({ connectionString: DATABASE_URL });
  await db.connect();
  await db.query("ANALYZE memories");
  await db.end();
}

/** Filler text: sentences recombined from the labelled memories' words, so the vocabulary and its frequencies are realistic. */
function fillerWriter(data: EvalSet, glossary: Glossary): (i: number) => MemoryWrite {
  const words = data.memories.flatMap((m) =>
    `${m.summary} ${m.content}`.split(/[\s，。；：、,.;:()（）]+/).filter((w) => w.length > 1),
  );
  let seed = 42;
  const next = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed;
  };
  return (i) => {
    const pick = () => words[next() % words.length]!;
    const summary = Array.from({ length: 4 }, pick).join(" ");
    const content = Array.from({ length: 18 }, pick).join(" ");
    const keywords = [pick(), pick()].map((keyword) => ({ keyword: keyword.slice(0, 64), weight: 1 }));
    return {
      memory_key: `filler_${i}`,
      memory_type: ["project_fact", "decision", "command_output", "general"][i % 4]!,
      summary,
      content,
      content_truncated: false,
      keywords,
      metadata: {},
      search_text: searchTextOf([summary, content, keywords.map((k) => k.keyword).join(" ")], glossary),
      embedding: embedMemoryText(`${summary}\n${content}`, glossary),
    };
  };
}

async function latency(setup: BenchSetup, data: EvalSet, store: MemoryStore): Promise<void> {
  await store.migrate();
  let deps = benchDeps(setup, store);
  const owner = `bench-${randomUUID()}`;
  const ctx = benchContext(owner);
  for (const m of data.memories) await storeMemory(deps, ctx, storeInput(m));
  const filler = fillerWriter(data, setup.memrecall.glossary);
  let loaded = data.memories.length;
  try {
    for (const size of SIZES) {
      const started = performance.now();
      const batch: Promise<unknown>[] = [];
      for (; loaded < size; loaded++) {
        batch.push(store.upsert(`user:${owner}`, filler(loaded)));
        if (batch.length === 16) await Promise.all(batch.splice(0));
      }
      await Promise.all(batch);
      const loadMs = performance.now() - started;
      // What autovacuum does after a bulk load: without fresh statistics PostgreSQL plans the
      // key lookups of a user it thinks has one row by the wrong index.
      if (store.kind === "postgres") await analyze();
      // The filler went straight to the store, past the service's caches and vector index: start them afresh.
      deps = benchDeps(setup, store);
      const first = performance.now();
      await searchMemories(
        deps,
        ctx,
        searchMemoriesInput.parse({ query: "first search loads the vectors", search_mode: "semantic" }),
      );
      const firstMs = performance.now() - first;
      for (const mode of ["keyword", "hybrid"] as const) {
        let q = 0;
        const search = () => {
          const base = data.queries[q % data.queries.length]!.query;
          // A distinct query each time: the one-minute result cache never answers.
          const query = `${base} ${q++}`;
          return searchMemories(
            deps,
            ctx,
            searchMemoriesInput.parse({ query, search_mode: mode, min_relevance_score: 0 }),
          );
        };
        await timeEach(10, search);
        const us = await timeEach(LATENCY_QUERIES, search);
        const p95 = percentile(us, 95) / 1000;
        const target =
          size === 100_000
            ? `  target p95 ≤ ${TARGET_P95_MS[mode]} ms: ${p95 <= TARGET_P95_MS[mode] ? "met" : "MISSED"}`
            : "";
        line(
          `${store.kind} ${mode} search, ${size / 1000}k memories`,
          `p50 ${formatMicros(percentile(us, 50))}  p95 ${formatMicros(percentile(us, 95))}${target}`,
        );
      }
      const write = await timeEach(20, (i) =>
        storeMemory(
          deps,
          ctx,
          storeMemoryInput.parse({ memory_key: `bench_write_${size}_${i}`, content: `a new memory ${i}` }),
        ),
      );
      const afterWrite = await timeEach(20, (i) =>
        searchMemories(
          deps,
          ctx,
          searchMemoriesInput.parse({ query: `new memory ${size} ${i}`, search_mode: "hybrid" }),
        ).then(() =>
          storeMemory(
            deps,
            ctx,
            storeMemoryInput.parse({ memory_key: `bench_write_${size}_x${i}`, content: `another memory ${i}` }),
          ),
        ),
      );
      line(
        `${store.kind} ${size / 1000}k: StoreMemory`,
        `p50 ${formatMicros(percentile(write, 50))}  (a hybrid search right after a write, plus the next write: p50 ${formatMicros(percentile(afterWrite, 50))}: the index is updated in place, not reloaded)`,
      );
      line(
        `${store.kind} ${size / 1000}k: load, first search`,
        `load ${(loadMs / 1000).toFixed(1)} s (upserts, 16 at a time); first semantic search (reads every vector) ${(firstMs / 1000).toFixed(2)} s`,
      );
    }
  } finally {
    await store.close();
    // The bench user's rows go: the shared database is not the bench's to fill.
    if (store.kind === "postgres") {
      const db = new pg.Client({ connectionString: DATABASE_URL });
      await db.connect();
      await db.query("DELETE FROM memories WHERE user_id = $1", [`user:${owner}`]);
      await db.end();
    }
  }
}
