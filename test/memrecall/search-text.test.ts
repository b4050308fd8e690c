import { describe, expect, it } from "vitest";
import { loadGlossary, markerOf } from "../../src/memrecall/glossary";

const emptyGlossary = loadGlossary([]);

import { extractLocally } from "../../src/memrecall/keyword-extraction";
import {
  EQUIVALENT_CREDIT,
  type KeywordQuery,
  keywordQueryOf,
  keywordShare,
  lookupTokens,
  searchTextOf,
  searchTokens,
} from "../../src/memrecall/search-text";

/** The share of `query` (its own words only) that a memory holding `text`'s tokens holds. */
const coverage = (tokens: string[], text: string) =>
  keywordShare({ tokens, equivalents: tokens.map(() => []), phrases: tokens.map(() => []), extra: [] }, (t) =>
    text.split(" ").includes(t),
  );

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
    const rare = coverage(query, searchTextOf(["数据库 备份"], emptyGlossary));
    const common = coverage(query, searchTextOf(["我的 备份"], emptyGlossary));
    expect(rare).toBeGreaterThan(common);
    expect(coverage(query, searchTextOf(["我的数据库"], emptyGlossary))).toBe(1);
    expect(coverage(query, searchTextOf(["无关 内容"], emptyGlossary))).toBe(0);
  });

  it("holds the character pairs of a Chinese word jieba made up from its context, so 封版 finds 封版前", () => {
    // jieba joins 封版前 into one unknown word here; alone, 封版 is a word of its own.
    expect(searchTokens("下周开始封版前的回归测试")).toContain("封版前");
    expect(searchTokens("下周开始封版前的回归测试")).not.toContain("封版");
    const text = searchTextOf(["下周开始封版前的回归测试"], emptyGlossary).split(" ");
    expect(text).toEqual(expect.arrayContaining(["封版前", "封版", "版前"]));
    // Words jieba knows are not taken apart.
    expect(searchTextOf(["连接池"], emptyGlossary).split(" ")).toEqual(["连接", "连接池"]);
  });

  it("ends with the markers of the glossary groups the memory names", () => {
    const g = loadGlossary([]);
    expect(searchTextOf(["code freeze"], g)).toBe("code freeze");
    const shipped = loadGlossary([new URL("../../data/memrecall/glossary.json", import.meta.url).pathname]);
    expect(searchTextOf(["Code freeze on June 14"], shipped).split(" ")).toContain(markerOf("封版"));
  });
});

describe("keywordQueryOf and keywordShare: a word held counts 1, only its equivalent 0.8", () => {
  const shipped = loadGlossary([new URL("../../data/memrecall/glossary.json", import.meta.url).pathname]);
  const share = (query: string, memoryText: string, extra = "") =>
    keywordShare(keywordQueryOf(query, extra, shipped).query, (t) =>
      searchTextOf([memoryText], shipped).split(" ").includes(t),
    );

  it.each([
    { query: "数据库配置", memory: "生产数据库的配置", expected: 1, why: "every word held" },
    { query: "数据库配置", memory: "production database config", expected: 0.8, why: "every word as its equivalent" },
    { query: "封版", memory: "Code freeze starts June 14", expected: 0.8, why: "a phrase, through the marker" },
    { query: "database config", memory: "数据库配置", expected: 0.8, why: "and the other way" },
    { query: "brokers", memory: "9 个 broker", expected: 0.8, why: "broker is its singular" },
    { query: "query", memory: "slow queries", expected: 0.8, why: "queries is its plural" },
    { query: "周末去爬山", memory: "数据库配置", expected: 0, why: "nothing in common" },
  ])("$query in '$memory' → $expected ($why)", ({ query, memory, expected }) => {
    expect(share(query, memory)).toBeCloseTo(expected, 4);
  });

  it("counts a word once, whole or as an equivalent, and a memory stored before the group existed by its words", () => {
    // "db" and "database" are both equivalents of 数据库: held together they still count 0.8.
    expect(share("数据库", "db database")).toBeCloseTo(EQUIVALENT_CREDIT, 4);
    // No marker in this memory's search text (it predates the group): the word "database" still counts.
    const q = keywordQueryOf("数据库", "", shipped).query;
    expect(keywordShare(q, (t) => t === "database")).toBeCloseTo(EQUIVALENT_CREDIT, 4);
  });

  it("lists the glossary terms it brought, not those typed, and scores extra terms at 0.8 of their coverage", () => {
    const { expansion } = keywordQueryOf("数据库 database", "", shipped);
    expect(expansion).toEqual(expect.arrayContaining(["databases", "db"]));
    expect(expansion).not.toContain("database");
    expect(share("防火墙", "redis cache", "redis")).toBeCloseTo(EQUIVALENT_CREDIT, 4);
  });
});

// IDFs the tables use (search-text.ts idfOf): a Latin word jieba does not know weighs 6 + 0.4 × its length
// (at most 10 letters): redis 8, host 7.6, pg 6.8, postgresql 10, w00 7.2; a stop word 0.5 (the, 之前);
// a Chinese word jieba does not know 11.74 (龘); jieba's table: 数据库 8.917071, 配置 5.949118.
describe("keywordShare without equivalents: the share of the query's IDF weight a memory's search text holds", () => {
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
  const thirty = Array.from({ length: 60 }, (_, i) => `w${String(i).padStart(2, "0")}`);
  const q = (tokens: string[], equivalents: string[][] = [], extra: string[] = []): KeywordQuery => ({
    tokens,
    equivalents: tokens.map((_, i) => equivalents[i] ?? []),
    phrases: tokens.map(() => []),
    extra,
  });
  it.each([
    {
      query: q(["host", "postgresql"], [], ["pg"]),
      expected: ["postgresql", "host", "pg"],
      why: "rarest first: 10 > 7.6",
    },
    {
      query: q(["pg"], [["postgresql"]]),
      expected: ["pg", "postgresql"],
      why: "the query's own before its equivalents",
    },
    { query: q(["the", "redis", "之前"]), expected: ["redis"], why: "IDF 0.5 < 2: common words left out" },
    { query: q(["the", "之前"]), expected: ["the", "之前"], why: "only common words: kept, in query order" },
    { query: q([], [], ["the"]), expected: ["the"], why: "an expansion of common words alone is kept too" },
    {
      query: q(["redis", "redis"], [["host"]], ["redis", "host"]),
      expected: ["redis", "host"],
      why: "each word once",
    },
    {
      query: q(thirty, [], ["pg"]),
      expected: thirty.slice(0, 48),
      why: "at most 48; equal IDFs (7.2) keep their order",
    },
  ])("$why", ({ query, expected }) => {
    expect(lookupTokens(query)).toEqual(expected);
  });
});
