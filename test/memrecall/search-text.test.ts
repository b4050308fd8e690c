import { describe, expect, it } from "vitest";
import { equivalentsOf } from "../../src/memrecall/glossary";
import { extractLocally } from "../../src/memrecall/keyword-extraction";
import { coverage, lookupTokens, searchTextOf, searchTokens } from "../../src/memrecall/search-text";

describe("equivalentsOf", () => {
  it("brings the other language's terms and abbreviations, not the ones already there", () => {
    expect(equivalentsOf("数据库配置")).toEqual(expect.arrayContaining(["database", "db", "config"]));
    expect(equivalentsOf("数据库配置")).not.toContain("数据库");
    expect(equivalentsOf("production database")).toEqual(expect.arrayContaining(["生产环境", "线上", "数据库"]));
  });

  it("matches Latin terms as whole words only", () => {
    expect(equivalentsOf("dbx settings")).not.toContain("database");
    expect(equivalentsOf("the prod db")).toEqual(expect.arrayContaining(["database", "生产环境"]));
  });

  it("has nothing for text outside the glossary", () => {
    expect(equivalentsOf("周末去爬山")).toEqual([]);
  });
});

describe("extractLocally", () => {
  it("keeps time expressions whole and typed time, in Chinese and English", () => {
    const zh = extractLocally("最近三天张三部署的 redis 集群", "", 5);
    expect(zh).toContainEqual({ keyword: "最近三天", weight: 0.8, type: "time" });
    const en = extractLocally("the slow SQL query from 2 weeks ago", "", 5);
    expect(en).toContainEqual({ keyword: "2 weeks ago", weight: 0.8, type: "time" });
  });

  it("leaves out stop words, single characters and bare numbers, and keeps the written case", () => {
    const words = extractLocally("我之前的 PostgreSQL 数据库 200 个连接", "", 10).map((k) => k.keyword);
    expect(words).toContain("PostgreSQL");
    expect(words).toContain("数据库");
    for (const w of ["我", "之前", "的", "200", "个"]) expect(words).not.toContain(w);
  });

  it("weighs the rarest word first, scaled to 1, and types entities and actions from part of speech", () => {
    const k = extractLocally("在北京部署数据库", "", 5);
    expect(k[0]!.weight).toBe(1);
    expect(k).toContainEqual(expect.objectContaining({ keyword: "北京", type: "entity" }));
    expect(k.every((x, i) => i === 0 || x.weight <= k[i - 1]!.weight)).toBe(true);
  });
});

describe("search text and coverage", () => {
  it("cuts Chinese for search, so a compound finds its parts, and lower-cases English whole", () => {
    expect(searchTokens("数据库配置 Configs")).toEqual(expect.arrayContaining(["数据", "数据库", "配置", "configs"]));
    expect(searchTokens("Configs")).not.toContain("config");
  });

  it("weighs query words by IDF: a memory with the rare word covers more than one with the common one", () => {
    const query = searchTokens("我的数据库");
    const rare = coverage(query, searchTextOf(["数据库 备份"]));
    const common = coverage(query, searchTextOf(["我的 备份"]));
    expect(rare).toBeGreaterThan(common);
    expect(coverage(query, searchTextOf(["我的数据库"]))).toBe(1);
    expect(coverage(query, searchTextOf(["无关 内容"]))).toBe(0);
  });
});

// IDFs the tables use (search-text.ts idfOf): a Latin word jieba does not know weighs 6 + 0.4 × its length
// (at most 10 letters): redis 8, host 7.6, pg 6.8, postgresql 10, w00 7.2; a stop word 0.5 (the, 之前);
// a Chinese word jieba does not know 11.74 (龘); jieba's table: 数据库 8.917071, 配置 5.949118.
describe("coverage: the keyword relevance of a memory, the share of the query's IDF weight its search text holds", () => {
  it.each([
    { query: ["redis", "host"], text: "redis cache", expected: 0.5128, why: "8 / (8 + 7.6)" },
    { query: ["redis", "host"], text: "host redis cache", expected: 1, why: "every query word held" },
    { query: ["redis", "host"], text: "cache", expected: 0, why: "no query word held" },
    { query: ["the", "redis"], text: "redis", expected: 0.9412, why: "8 / (0.5 + 8): a stop word weighs little" },
    { query: ["the", "redis"], text: "the cache", expected: 0.0588, why: "0.5 / (0.5 + 8)" },
    { query: ["postgresql", "pg"], text: "pg", expected: 0.4048, why: "6.8 / (10 + 6.8)" },
    {
      query: ["龘", "redis"],
      text: "龘",
      expected: 0.5947,
      why: "11.74 / (11.74 + 8): an unknown word counts as rare",
    },
    { query: ["数据库", "配置"], text: "数据库 备份", expected: 0.5998, why: "8.917071 / (8.917071 + 5.949118)" },
    { query: ["config"], text: "configs", expected: 0, why: "whole tokens only, no stemming" },
    { query: [], text: "redis", expected: 0, why: "a query without weight covers nothing" },
  ])("$query in '$text' → $expected ($why)", ({ query, text, expected }) => {
    expect(coverage(query, text)).toBeCloseTo(expected, 4);
  });
});

describe("lookupTokens: the words looked up in the full-text index", () => {
  const twenty = Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, "0")}`);
  it.each([
    {
      query: ["host", "postgresql"],
      extra: ["pg"],
      expected: ["postgresql", "host", "pg"],
      why: "rarest first: 10 > 7.6",
    },
    {
      query: ["pg"],
      extra: ["postgresql"],
      expected: ["pg", "postgresql"],
      why: "the query's own before the expansion's",
    },
    { query: ["the", "redis", "之前"], extra: [], expected: ["redis"], why: "IDF 0.5 < 2: common words left out" },
    { query: ["the", "之前"], extra: [], expected: ["the", "之前"], why: "only common words: kept, in query order" },
    { query: [], extra: ["the"], expected: ["the"], why: "an expansion of common words alone is kept too" },
    { query: ["redis", "redis"], extra: ["redis", "host"], expected: ["redis", "host"], why: "each word once" },
    {
      query: twenty,
      extra: ["pg"],
      expected: twenty.slice(0, 16),
      why: "at most 16; equal IDFs (7.2) keep their order",
    },
  ])("$why", ({ query, extra, expected }) => {
    expect(lookupTokens(query, extra)).toEqual(expected);
  });
});
