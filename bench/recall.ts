import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { loadConfig } from "../src/config";
import type { Glossary } from "../src/memrecall/glossary";
import { storeMemoryInput } from "../src/memrecall/inputs";
import { embedMemoryText } from "../src/memrecall/lexical-embedder";
import type { MemRecallDeps } from "../src/memrecall/memories-deps";
import { MemoryIndex } from "../src/memrecall/memory-index";
import type { RecallEvent, RecallResult } from "../src/memrecall/recall/events";
import { recallInput } from "../src/memrecall/recall/input";
import { runRecall } from "../src/memrecall/recall/recall";
import { searchTextOf } from "../src/memrecall/search-text";
import { toolDefinitions } from "../src/memrecall/tool-definitions";
import { memrecallTools } from "../src/memrecall/tools";
import { storeMemory } from "../src/memrecall/write";
import type { MemoryWrite } from "../src/store/memories/memory-store";
import { SqliteMemoryStore } from "../src/store/memories/sqlite-memory-store";
import { figure } from "./figures";
import { type BenchSetup, benchContext, benchDeps, benchSetup, benchLog as log } from "./memrecall-deps";
import { point } from "./record";
import { line, percentile } from "./stats";

/** Issue 16 targets: the deterministic strategy's relevant keys, and its own time per conversation at 10 k memories. */
const TARGET_RECALL_AT_3 = 0.8;
/**
 * Issue 22's target on the held-out set: the share of its conversations recalled (every needed key among
 * the handoff's first three; a not-found conversation given no key).
 */
const TARGET_HELD_OUT_RECALLED = 0.9;
const TARGET_MS = 30;
const LATENCY_SIZE = 10_000;
const LATENCY_ROUNDS = 5;
/** Confidence bands of the calibration line: in each, how often the first key named was one the conversation needs. */
const CONFIDENCE_BANDS = [0, 0.5, 0.7, 0.9];

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
  conversations: z.array(
    z
      .object({
        id: z.string(),
        class: z.string(),
        messages: z.array(z.object({ role: z.enum(["user", "assistant", "system"]), content: z.string() })),
        needed: z.array(z.string()),
      })
      .refine((c) => c.needed.length > 0 || c.class === "not-found", "only a not-found conversation needs nothing"),
  ),
});
type EvalSet = z.output<typeof evalSet>;
type Conversation = EvalSet["conversations"][number];

/**
 * The labelled sets: the development set (issue 16's, the one tuned on), issue 22's development set (another
 * user and domain in the held-out set's nine classes, written to be tuned on) and the held-out set of issue 22,
 * written before any issue-22 tuning and never to be tuned on; `series` is each one's name on the chart.
 */
const SETS = {
  development: { file: "./recall-eval.json", series: "development set" },
  development22: { file: "./recall-dev-22.json", series: "issue 22 development set" },
  heldOut: { file: "./recall-holdout.json", series: "held-out set" },
} as const;
type SetName = keyof typeof SETS;

function loadSet(name: SetName): EvalSet {
  return evalSet.parse(JSON.parse(readFileSync(new URL(SETS[name].file, import.meta.url), "utf8")));
}

/**
 * Recall (issue 16), its deterministic strategy as shipped (no LLM), on the
 * labelled development set bench/recall-eval.json (57 memories, 52
 * conversations in six classes, written before the strategy existed), each
 * memory dated by its `created_days_ago`. Per class: recall@3 of the handoff's
 * relevant_memory_keys over the memories each conversation needs; for
 * not-found conversations, how many got a key (the target is none). Then the
 * confidence against how often the first key was right, iterations and
 * searches used. The same evaluation then runs on issue 22's held-out set
 * bench/recall-holdout.json (another user and domain, nine classes: the six
 * plus single-word, cross-language and paraphrase; never tuned on), in a
 * store of its own, against issue 22's target: ≥ 0.9 of its conversations
 * recalled. Beside it, issue 22's development set bench/recall-dev-22.json
 * (a connected-car platform engineer, the held-out set's nine classes, five
 * conversations each; may be tuned on) the same way, against the same target.
 * Last, the recall's own time per conversation with the development
 * set's memories among 10 k of one user (the rest generated from the set's
 * words).
 */
export async function benchRecall(): Promise<void> {
  const setup = await benchSetup(loadConfig({}));
  const dir = mkdtempSync(join(tmpdir(), "bench-recall-"));
  try {
    await recallQuality(setup);
    if (process.env["BENCH_QUALITY_ONLY"] !== "1") {
      const development = loadSet("development");
      const path = join(dir, "recall.db");
      const owner = `recall-${randomUUID()}`;
      await storeDated(setup, development, path, owner);
      const store = new SqliteMemoryStore({ path, log });
      try {
        await latency(setup, development, store, owner);
      } finally {
        await store.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await setup.close();
  }
}

/**
 * The quality part of the bench under `setup`'s configuration (`npm run eval`
 * runs this part alone): each labelled set in a store of its own, per class.
 * Recall runs as a caller who names no strategy gets it: deterministic without
 * an LLM, the LLM's with one.
 */
export async function recallQuality(setup: BenchSetup): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-recall-quality-"));
  try {
    for (const set of Object.keys(SETS) as SetName[]) {
      const path = join(dir, `${set}.db`);
      const owner = `recall-${set}-${randomUUID()}`;
      await storeDated(setup, loadSet(set), path, owner);
      const store = new SqliteMemoryStore({ path, log });
      try {
        await quality(loadSet(set), benchDeps(setup, store), owner, set);
      } finally {
        await store.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs one conversation through Recall to its handoff, with the strategy a caller who names none gets. */
async function run(deps: MemRecallDeps, owner: string, c: Conversation): Promise<RecallResult> {
  const input = recallInput(deps.maxContextWindow).parse({ messages: c.messages, strategy: "auto" });
  const definitions = toolDefinitions(memrecallTools(deps.maxContextWindow));
  let result: RecallResult | undefined;
  for await (const e of runRecall(deps, benchContext(owner), input, definitions) as AsyncGenerator<RecallEvent>) {
    if (e.kind === "handoff") result = e.result;
  }
  if (!result) throw new Error(`${c.id}: the recall ended without a handoff`);
  return result;
}

/**
 * One set's evaluation, printed per class; on the development set against issue 16's targets, on issue 22's
 * development set and on the held-out set against issue 22's (the share of conversations recalled).
 */
async function quality(data: EvalSet, deps: MemRecallDeps, owner: string, set: SetName): Promise<void> {
  // Conversation by conversation only for the sets tuned on: the held-out set's misses are reported per class, never read one by one.
  const verbose = process.env["BENCH_RECALL_VERBOSE"] === "1" && set !== "heldOut";
  const byClass = new Map<string, { recall: number; n: number; keyed: number }>();
  const found = { recall: 0, n: 0 };
  /** Conversations with every needed key among the first three, or, for not-found, no key at all. */
  let recalled = 0;
  const calibration = { confidence: 0, right: 0, n: 0 };
  const bands = CONFIDENCE_BANDS.map(() => ({ right: 0, n: 0 }));
  let iterations = 0;
  let searches = 0;
  const strategies = new Set<string>();
  for (const c of data.conversations) {
    const r = await run(deps, owner, c);
    strategies.add(r.strategy);
    const top3 = r.relevant_memory_keys.slice(0, 3);
    const t = byClass.get(c.class) ?? { recall: 0, n: 0, keyed: 0 };
    t.n++;
    if (r.relevant_memory_keys.length > 0) t.keyed++;
    iterations += r.iteration_used;
    searches += r.searches;
    if (c.needed.length > 0) {
      const recall = c.needed.filter((k) => top3.includes(k)).length / c.needed.length;
      t.recall += recall;
      found.recall += recall;
      found.n++;
    }
    if (r.relevant_memory_keys.length > 0) {
      calibration.n++;
      calibration.confidence += r.confidence;
      const right = c.needed.includes(r.relevant_memory_keys[0]!);
      if (right) calibration.right++;
      const band = bands[CONFIDENCE_BANDS.findLastIndex((low) => r.confidence >= low)]!;
      band.n++;
      if (right) band.right++;
    }
    byClass.set(c.class, t);
    const ok = c.needed.length === 0 ? top3.length === 0 : c.needed.every((k) => top3.includes(k));
    if (ok) recalled++;
    if (verbose) {
      line(
        `  ${ok ? "ok  " : "MISS"} ${c.id} ${c.class}`,
        `keys ${JSON.stringify(r.relevant_memory_keys)} conf ${r.confidence} it ${r.iteration_used} win ${r.context_window_used}; needed ${JSON.stringify(c.needed)}`,
      );
    }
  }
  const n = data.conversations.length;
  const series = SETS[set].series;
  line(
    `recall ${[...strategies].join(" and ")}${{ development: "", development22: ", issue 22 development set", heldOut: ", held-out set" }[set]} (${n} conversations)`,
    `iterations ${(iterations / n).toFixed(2)}, searches ${(searches / n).toFixed(2)} per conversation`,
  );
  figure([series, "strategy"], [...strategies].join(" and "));
  figure([series, "conversations"], n);
  for (const [cls, t] of byClass) {
    // not-found is measured by keys given, not by recall: it has no bar.
    if (cls !== "not-found") {
      point("recall-recall-at-3", series, cls, t.recall / t.n);
      figure([series, "by class", cls, "recall@3"], t.recall / t.n);
    } else figure([series, "by class", cls, "given a key"], t.keyed);
    line(
      `  ${cls} (${t.n})`,
      cls === "not-found"
        ? `conversations given a key: ${t.keyed}/${t.n} (target 0)`
        : `recall@3 ${(t.recall / t.n).toFixed(3)}`,
    );
  }
  const overall = found.recall / found.n;
  const none = byClass.get("not-found")?.keyed ?? 0;
  figure([series, "recall@3"], overall);
  figure([series, "conversations recalled"], recalled / n);
  if (set === "development") {
    line(
      "  recall@3 over the conversations that need a memory",
      `${overall.toFixed(3)} (target ≥ ${TARGET_RECALL_AT_3}) ${overall >= TARGET_RECALL_AT_3 ? "MET" : "NOT MET"}; not-found given a key: ${none} ${none === 0 ? "MET" : "NOT MET"}`,
    );
  } else {
    line(
      "  recall@3 over the conversations that need a memory",
      `${overall.toFixed(3)}; not-found given a key: ${none}/${byClass.get("not-found")?.n ?? 0}`,
    );
    line(
      "  issue 22: conversations recalled",
      `${recalled}/${n} = ${(recalled / n).toFixed(3)} (every needed key in the first three; not-found: no key) (target ≥ ${TARGET_HELD_OUT_RECALLED}) ${recalled / n >= TARGET_HELD_OUT_RECALLED ? "met" : "NOT met"}`,
    );
  }
  line(
    "  calibration (handoffs naming a key)",
    `mean confidence ${(calibration.confidence / Math.max(1, calibration.n)).toFixed(2)}, first key right ${((100 * calibration.right) / Math.max(1, calibration.n)).toFixed(0)}% of ${calibration.n}`,
  );
  line(
    "  first key right by confidence band",
    CONFIDENCE_BANDS.map(
      (low, i) =>
        `[${low.toFixed(1)}, ${(CONFIDENCE_BANDS[i + 1] ?? 1).toFixed(1)}${CONFIDENCE_BANDS[i + 1] === undefined ? "]" : ")"} ${bands[i]!.right}/${bands[i]!.n}`,
    ).join(", "),
  );
}

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
    for (const { m } of oldestFirst) {
      await storeMemory(
        deps,
        ctx,
        storeMemoryInput.parse({ ...m, keywords: m.keywords.map((keyword) => ({ keyword, weight: 1 })) }),
      );
    }
  } finally {
    await store.close();
  }
  const db = new Database(path);
  const now = Date.now();
  const date = db.prepare("UPDATE memories SET created_at = ?, updated_at = ? WHERE user_id = ? AND memory_key = ?");
  oldestFirst.forEach(({ m }, order) => {
    const at = now - m.created_days_ago * 86_400_000 - (oldestFirst.length - order) * 1000;
    date.run(at, at, `user:${owner}`, m.memory_key);
  });
  db.close();
}

/** Filler memories recombined from the set's words, so the vocabulary and its frequencies are realistic. */
function filler(data: EvalSet, glossary: Glossary): (i: number) => MemoryWrite {
  const words = data.memories.flatMap((m) =>
    `${m.summary} ${m.content}`.split(/[\s，。；：、,.;:()（）]+/).filter((w) => w.length > 1),
  );
  let seed = 16;
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

/** The recall's own time per conversation at 10 k memories (the search cache cleared between rounds). */
async function latency(setup: BenchSetup, data: EvalSet, store: SqliteMemoryStore, owner: string): Promise<void> {
  const write = filler(data, setup.memrecall.glossary);
  for (let i = data.memories.length; i < LATENCY_SIZE; i++) await store.upsert(`user:${owner}`, write(i));
  const times: number[] = [];
  // A fresh index per size: the filler went straight to the store.
  const index = new MemoryIndex(store, 4);
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    // New caches every round, so each search runs (the recall's searches are cached for a minute).
    const deps = { ...benchDeps(setup, store), index };
    for (const c of data.conversations) {
      const started = performance.now();
      await run(deps, owner, c);
      if (round > 0) times.push(performance.now() - started);
    }
  }
  times.sort((a, b) => a - b);
  const p50 = percentile(times, 50);
  const p95 = percentile(times, 95);
  line(
    `recall deterministic at ${LATENCY_SIZE / 1000} k memories (${times.length} runs)`,
    `p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms per conversation (target p95 ≤ ${TARGET_MS} ms) ${p95 <= TARGET_MS ? "MET" : "NOT MET"}`,
  );
}
