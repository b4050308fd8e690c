import { describe, expect, it } from "vitest";
import { equivalentsOf } from "../../src/memrecall/glossary";
import { extractLocally } from "../../src/memrecall/keyword-extraction";
import { coverage, searchTextOf, searchTokens } from "../../src/memrecall/search-text";

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
