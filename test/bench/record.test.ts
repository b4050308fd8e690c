import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { markers, point, writeRecord } from "../../bench/record";
import { benches } from "../../bench/run";
import { barChartSvg, roundAxis } from "../../bench/svg-chart";

/** What `npm run bench -- --record` writes into the docs: the printed lines in the bench's block, the charts as SVG. */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A repository root with docs/evaluation.md holding `doc`. */
function rootWith(doc: string): string {
  const root = mkdtempSync(join(tmpdir(), "bench-record-"));
  dirs.push(root);
  mkdirSync(join(root, "docs"));
  writeFileSync(join(root, "docs", "evaluation.md"), doc);
  return root;
}

describe("barChartSvg", () => {
  const svg = barChartSvg({
    title: "recall <by> class",
    unit: "recall@1",
    max: 1,
    categories: ["disease & co", "symptom"],
    series: [
      { name: "tuned", values: [0.5, 1] },
      { name: "held-out", values: [0.25, undefined] },
    ],
  });

  it("draws a bar per value, its length in proportion to the axis", () => {
    const widths = [...svg.matchAll(/<rect class="bar" x="210" y="\d+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    // 440 px of plot for an axis of 0..1; the held-out series has no symptom value, so no bar.
    expect(widths).toEqual([220, 110, 440]);
    expect(svg).toContain(">0.50<");
    expect(svg).toContain(">0.25<");
  });

  it("escapes text, names each series in a legend and is one svg element", () => {
    expect(svg).toContain("recall &#60;by&#62; class");
    expect(svg).toContain("disease &#38; co");
    expect(svg).not.toContain("<by>");
    expect(svg).toMatch(/>tuned</);
    expect(svg).toMatch(/>held-out</);
    expect(svg.trim().startsWith("<svg ")).toBe(true);
    expect(svg.trim().endsWith("</svg>")).toBe(true);
  });

  it("ends a free axis at a round number above the largest value", () => {
    const counts = barChartSvg({
      title: "t",
      unit: "tokens",
      max: undefined,
      categories: ["a", "b"],
      series: [{ name: "s", values: [100, 400] }],
    });
    const widths = [...counts.matchAll(/<rect class="bar" x="210" y="\d+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    // Steps of 100 reach 400 in four: the axis ends at 400.
    expect(widths).toEqual([110, 440]);
    expect(counts).toContain(">300<");
    expect(roundAxis(3168)).toEqual({ end: 4000, step: 1000 });
    expect(roundAxis(0.93)).toEqual({ end: 1, step: 0.2 });
    expect(roundAxis(2109)).toEqual({ end: 2500, step: 500 });
  });
});

describe("writeRecord", () => {
  it("replaces the bench's block with the stamp and what it printed, and writes its charts", () => {
    const { begin, end } = markers("recall");
    const root = rootWith(`# E\n\n${begin}\nold figures\n${end}\n\nafter\n`);
    point("recall-recall-at-3", "recall@3", "standard", 0.8);
    const written = writeRecord(root, "recall", "\nline one\nline two\n\n", "2026-11-26, commit abc1234");
    const doc = readFileSync(join(root, "docs", "evaluation.md"), "utf8");
    expect(doc).not.toContain("old figures");
    expect(doc).toContain("```text\nnpm run bench -- recall: 2026-11-26, commit abc1234\nline one\nline two\n```\n");
    expect(doc).toContain("](evaluation/recall-recall-at-3.svg)");
    expect(doc.endsWith(`${end}\n\nafter\n`)).toBe(true);
    expect(written).toEqual([join("docs", "evaluation", "recall-recall-at-3.svg")]);
    expect(readFileSync(join(root, written[0]!), "utf8")).toContain(">standard<");
    // The points were taken: the next bench's block has no chart of this one.
    expect(writeRecord(rootWith(`${markers("x").begin}\n${markers("x").end}\n`), "x", "y", "s")).toEqual([]);
  });

  it("refuses a bench whose block is missing, rather than leave older figures on the page", () => {
    const root = rootWith("# E\n");
    expect(() => writeRecord(root, "unary", "x", "s")).toThrow(
      /no <!-- bench:unary --> … <!-- \/bench:unary --> block/,
    );
  });
});

describe("docs/evaluation.md", () => {
  it("has a recorded block for every bench npm run bench runs", () => {
    const doc = readFileSync(join(ROOT, "docs", "evaluation.md"), "utf8");
    const missing = Object.keys(benches).filter((name) => {
      const { begin, end } = markers(name);
      const from = doc.indexOf(begin);
      const to = doc.indexOf(end);
      return from === -1 || to < from || !doc.slice(from, to).includes(`npm run bench -- ${name}: `);
    });
    expect(missing).toEqual([]);
  });
});
