import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { z } from "zod";
import { type Lexicon, loadLexicon } from "../src/core/lexicon";
import { formatMicros, line, percentile } from "./stats";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../node_modules/tsx/dist/esm/index.mjs", import.meta.url));
const LOOKUPS = 10_000;
const MiB = 2 ** 20;

/** What the child process measured. */
const Measured = z.object({
  loadMs: z.number(),
  worstBlockMs: z.number(),
  heapMiB: z.number(),
  buffersMiB: z.number(),
  rssMiB: z.number(),
  entries: z.number(),
  senses: z.number(),
  synsets: z.number(),
  lookups: z.record(z.string(), z.object({ p50: z.number(), p99: z.number(), hits: z.number() })),
});

/**
 * The lexicon's cost (src/core/lexicon.ts): its load in a fresh process (so
 * nothing was loaded before it; time, the longest the event loop waited, and
 * heap, buffers and RSS added, after a full collection), then 10 000 lookups
 * of each kind with their p50/p99 and how many found something. The queries
 * are drawn from the dictionary itself (every tenth headword and its first
 * sense, a quarter of the senses with an "s" added for the inflection path),
 * so most hit as a user's words would.
 */
export async function benchLexicon(): Promise<void> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--expose-gc", "--import", tsxLoader, fileURLToPath(import.meta.url)],
    { cwd: root, timeout: 120_000 },
  );
  const m = Measured.parse(JSON.parse(stdout));
  line("lexicon: load in a fresh process", `${m.loadMs} ms; longest event-loop wait ${m.worstBlockMs.toFixed(1)} ms`);
  line(
    "lexicon: memory added",
    `heap ${m.heapMiB.toFixed(1)} MiB, buffers ${m.buffersMiB.toFixed(1)} MiB, RSS ${m.rssMiB.toFixed(1)} MiB`,
  );
  line("lexicon: loaded", `${m.entries} headwords, ${m.senses} senses, ${m.synsets} synsets`);
  for (const [name, s] of Object.entries(m.lookups))
    line(
      `lexicon: ${name}, ${LOOKUPS} lookups`,
      `p50 ${formatMicros(s.p50)}, p99 ${formatMicros(s.p99)}; ${((100 * s.hits) / LOOKUPS).toFixed(0)} % found`,
    );
}

/** In the child: measures and prints one JSON object. */
async function measure(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc");
  gc();
  const before = process.memoryUsage();
  let last = performance.now();
  let worst = 0;
  const tick = () => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  };
  const timer = setInterval(tick, 1);
  last = performance.now();
  const lexicon = await loadLexicon();
  tick();
  clearInterval(timer);
  // Array buffers given back during the load (the indexes grow by doubling) are freed after the collection, not in it.
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  const after = process.memoryUsage();

  const { chinese, english } = queries();
  const result: z.infer<typeof Measured> = {
    loadMs: lexicon.summary.loadMs,
    worstBlockMs: worst,
    heapMiB: (after.heapUsed - before.heapUsed) / MiB,
    buffersMiB: (after.arrayBuffers - before.arrayBuffers) / MiB,
    rssMiB: (after.rss - before.rss) / MiB,
    entries: lexicon.summary.entries,
    senses: lexicon.summary.senses,
    synsets: lexicon.summary.synsets,
    lookups: {
      chineseFor: timeLookups(english, (q) => lexicon.chineseFor(q)),
      englishFor: timeLookups(chinese, (q) => lexicon.englishFor(q)),
      synonymsOf: timeLookups(english, (q) => lexicon.synonymsOf(q)),
    },
  };
  process.stdout.write(JSON.stringify(result));
}

/** LOOKUPS Chinese headwords and as many English senses, spread over the file (commonest first, so over all frequencies). */
function queries(): { chinese: string[]; english: string[] } {
  const lines = gunzipSync(readFileSync(new URL("../data/lexicon/cedict.tsv.gz", import.meta.url)))
    .toString("utf8")
    .split("\n")
    .filter((l) => l && !l.startsWith("#"));
  const step = Math.max(1, Math.floor(lines.length / LOOKUPS));
  const chinese: string[] = [];
  const english: string[] = [];
  for (let i = 0; chinese.length < LOOKUPS; i = (i + step) % lines.length) {
    const [word, , sense] = lines[i]!.split("\t");
    chinese.push(word!);
    english.push(chinese.length % 4 === 0 ? `${sense}s` : sense!);
  }
  return { chinese, english };
}

function timeLookups(
  queries: string[],
  lookup: (q: string) => ReturnType<Lexicon["chineseFor"]>,
): { p50: number; p99: number; hits: number } {
  const micros: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const t = process.hrtime.bigint();
    const found = lookup(q);
    micros.push(Number(process.hrtime.bigint() - t) / 1000);
    if (found.length > 0) hits++;
  }
  return { p50: percentile(micros, 50), p99: percentile(micros, 99), hits };
}

// As the child process's entry point only: run.ts imports benchLexicon.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  measure().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
