/**
 * What `npm run bench -- --record` keeps of a run, so that docs/evaluation.md
 * shows figures a bench printed, never figures typed by hand: each bench's
 * printed lines, and the points of the charts where a picture says more than
 * a table (per-class quality, the set tuned on beside the held-out set).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { barChartSvg, type ChartData } from "./svg-chart";

/** The charts a bench can add points to: what each shows, and its value axis. */
export const CHARTS = {
  "mentions-recall-at-1": {
    title: "Mentions: recall@1 per class, on the set tuned on and on the held-out set",
    unit: "recall@1",
    max: 1,
  },
  "memrecall-work-recall-at-5": {
    title: "SearchMemories on the work set: recall@5 per kind of query, per search mode",
    unit: "recall@5",
    max: 1,
  },
  "memrecall-hybrid-dev-vs-holdout": {
    title: "SearchMemories, hybrid: recall@5 per kind, the development set beside the held-out set",
    unit: "recall@5",
    max: 1,
  },
  "standin-held-out-recall-at-5": {
    title:
      "SearchMemories on the held-out set: recall@5 per mode, the lexical default and the stand-in model at cosine base/noise",
    unit: "recall@5",
    max: 1,
  },
  "recall-recall-at-3": {
    title: "Recall (deterministic strategy): recall@3 per class, the development set beside the held-out set",
    unit: "recall@3",
    max: 1,
  },
  remember: {
    title:
      "RememberConversation (rules mode): precision, recall and changed preferences superseding right, the development set beside the held-out set",
    unit: "share",
    max: 1,
  },
  "tokens-by-format": {
    title: "Tokens of each MCP tool's answer on the sample network, per format (o200k)",
    unit: "tokens",
    max: undefined,
  },
} as const satisfies Record<string, { title: string; unit: string; max: number | undefined }>;

export type ChartId = keyof typeof CHARTS;

/** series → category → value, per chart, in the order points arrived. */
const points = new Map<ChartId, Map<string, Map<string, number>>>();

/** One bar: `value` of `series` for `category` (a class, a kind, a tool). */
export function point(chart: ChartId, series: string, category: string, value: number): void {
  let bySeries = points.get(chart);
  if (!bySeries) points.set(chart, (bySeries = new Map()));
  let byCategory = bySeries.get(series);
  if (!byCategory) bySeries.set(series, (byCategory = new Map()));
  byCategory.set(category, value);
}

/** The charts that received points, as the SVG renderer takes them; clears them. */
function takeCharts(): { id: ChartId; data: ChartData }[] {
  const out = [...points].map(([id, bySeries]) => {
    const categories = [...new Set([...bySeries.values()].flatMap((m) => [...m.keys()]))];
    const series = [...bySeries].map(([name, m]) => ({ name, values: categories.map((c) => m.get(c)) }));
    return { id, data: { ...CHARTS[id], categories, series } };
  });
  points.clear();
  return out;
}

/** Everything written to stdout until the returned function is called, which stops copying and returns it. */
export function captureStdout(): () => string {
  const chunks: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return () => {
    process.stdout.write = original;
    return chunks.join("");
  };
}

export const EVALUATION_DOC = "docs/evaluation.md";
export const FIGURES_DIR = "docs/evaluation";

/** When, on which commit and on what machine: the date, the commit, the Node version and the CPUs. */
export function stampOf(root: string): string {
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  const cpu = cpus();
  return (
    `${new Date().toISOString().slice(0, 10)}, commit ${commit}, Node ${process.version}, ` +
    `${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}`
  );
}

/** The block of docs/evaluation.md that holds a bench's latest figures: between these two lines. */
export function markers(bench: string): { begin: string; end: string } {
  return { begin: `<!-- bench:${bench} -->`, end: `<!-- /bench:${bench} -->` };
}

/**
 * Writes one bench's printed lines into its block of docs/evaluation.md (after
 * `stamp`: when, on which commit and on what machine) and its charts
 * as SVG files under docs/evaluation/. A bench whose block is missing is an
 * error: the page would silently keep older figures.
 */
export function writeRecord(root: string, bench: string, printed: string, stamp: string): string[] {
  const docPath = join(root, EVALUATION_DOC);
  const doc = readFileSync(docPath, "utf8");
  const { begin, end } = markers(bench);
  const from = doc.indexOf(begin);
  const to = doc.indexOf(end);
  if (from === -1 || to < from) throw new Error(`${EVALUATION_DOC} has no ${begin} … ${end} block for this bench`);
  const header = `npm run bench -- ${bench}: ${stamp}`;
  const charts = takeCharts();
  mkdirSync(join(root, FIGURES_DIR), { recursive: true });
  for (const { id, data } of charts) writeFileSync(join(root, FIGURES_DIR, `${id}.svg`), barChartSvg(data));
  const images = charts.map(({ id, data }) => `![${data.title}](evaluation/${id}.svg)\n\n`).join("");
  const block = `${begin}\n${images}\`\`\`text\n${header}\n${printed.replace(/^\n+|\n+$/g, "")}\n\`\`\`\n`;
  writeFileSync(docPath, doc.slice(0, from) + block + doc.slice(to));
  return charts.map(({ id }) => join(FIGURES_DIR, `${id}.svg`));
}
