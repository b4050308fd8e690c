import { describe, expect, it } from "vitest";
import { DEFAULT_GLOSSARY } from "../../src/config-fields";
import { loadGlossary } from "../../src/memrecall/glossary";
import { type Found, latestWins } from "../../src/memrecall/latest-wins";
import type { MemoryRecord } from "../../src/store/memories/memory-store";

const glossary = loadGlossary(DEFAULT_GLOSSARY);
const DAY = 86_400_000;

/** A found memory written `daysAgo` days ago. */
function found(
  key: string,
  relevance: number,
  daysAgo: number,
  fields: Partial<Pick<MemoryRecord, "memory_type" | "summary" | "content" | "supersedes" | "superseded_by">>,
): Found {
  const at = new Date(Date.now() - daysAgo * DAY);
  return {
    relevance,
    record: {
      memory_key: key,
      user_id: "u",
      memory_type: "user_preference",
      summary: "",
      content: key,
      content_truncated: false,
      keywords: [],
      metadata: {},
      supersedes: "",
      superseded_by: "",
      sensitive: false,
      created_at: at,
      updated_at: at,
      stated_at: at,
      ...fields,
    },
  };
}
const shown = (f: Found[]) =>
  latestWins(f, glossary).map((s) => [s.record.memory_key, s.relevance, s.supersedes, s.superseded_by]);

const oldChart = (relevance: number, extra = {}) =>
  found("chart_old", relevance, 120, {
    summary: "图表偏好：柱状图",
    content: "看趋势的时候我习惯用柱状图。",
    ...extra,
  });
const newChart = (relevance: number, extra = {}) =>
  found("chart_new", relevance, 20, {
    summary: "图表偏好改了：趋势用折线图",
    content: "用户更正：以后看趋势都画折线图。",
    ...extra,
  });

describe("latestWins", () => {
  it("keeps memories nothing replaces as they are, by relevance, then the most recent first", () => {
    expect(
      shown([
        found("a", 0.5, 3, { content: "数据库配置" }),
        found("b", 0.9, 9, { content: "缓存" }),
        found("c", 0.5, 1, { content: "日志" }),
      ]),
    ).toEqual([
      ["b", 0.9, [], ""],
      ["c", 0.5, [], ""],
      ["a", 0.5, [], ""],
    ]);
  });

  it("halves a memory stored as replaced (superseded_by), found without its successor", () => {
    expect(shown([found("tz_old", 0.9, 200, { superseded_by: "tz_new" })])).toEqual([["tz_old", 0.45, [], "tz_new"]]);
  });

  it("puts the successor first and the replaced one at most at its relevance, however well the old one matched", () => {
    expect(
      shown([
        found("tz_old", 0.95, 200, { superseded_by: "tz_new" }),
        found("tz_new", 0.3, 30, { supersedes: "tz_old" }),
      ]),
    ).toEqual([
      ["tz_new", 0.3, ["tz_old"], ""],
      ["tz_old", 0.3, [], "tz_new"],
    ]);
  });

  it("finds a newer memory of the same type on the same subject that says it changes the older one", () => {
    expect(shown([oldChart(0.9), newChart(0.6)])).toEqual([
      ["chart_new", 0.6, ["chart_old"], ""],
      ["chart_old", 0.45, [], "chart_new"],
    ]);
  });

  it.each([
    {
      why: "the newer one does not say it changes anything",
      newer: newChart(0.6, { summary: "图表偏好：折线图", content: "趋势也可以画折线图。" }),
    },
    { why: "another type", newer: newChart(0.6, { memory_type: "decision" }) },
    { why: "no type", newer: newChart(0.6, { memory_type: "" }), older: oldChart(0.9, { memory_type: "" }) },
    {
      why: "another subject of the same type",
      newer: found("colours", 0.6, 5, {
        summary: "Chart colours",
        content: "From now on use the brand green, never red and green together.",
      }),
    },
  ])("replaces nothing when $why", ({ newer, older }) => {
    const result = latestWins([older ?? oldChart(0.9), newer], glossary);
    expect(result.every((s) => s.superseded_by === "" && s.supersedes.length === 0)).toBe(true);
    expect(result[0]!.record.memory_key).toBe("chart_old");
  });

  it("sees the change across languages: an English preference replaced by a Chinese one", () => {
    const older = found("date_old", 0.98, 100, {
      summary: "Date format in exports: MM/DD/YYYY",
      content: "Use the US date format MM/DD/YYYY in exported CSV files.",
    });
    const newer = found("date_new", 0.45, 5, {
      summary: "导出日期格式改成 ISO",
      content: "导出 CSV 的日期统一用 YYYY-MM-DD，之前说的美式格式不要了。",
    });
    expect(shown([older, newer])).toEqual([
      ["date_new", 0.45, ["date_old"], ""],
      ["date_old", 0.45, [], "date_new"],
    ]);
  });
});
