import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_GLOSSARY } from "../../src/config-fields";
import { GlossaryError, loadGlossary, markerOf } from "../../src/memrecall/glossary";
import { startServer } from "../helpers/server";

const dir = mkdtempSync(join(tmpdir(), "glossary-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A glossary file in the test's directory. */
function file(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
  return path;
}

/** The group names of the terms found in `text`, in order: "term→name". */
const found = (g: ReturnType<typeof loadGlossary>, text: string) =>
  g.occurrences(text).map((o) => `${o.term}→${o.groups.map((x) => x.terms[0]).join("+")}`);

describe("glossary terms are found on word boundaries only", () => {
  const g = loadGlossary([
    file("boundaries.json", {
      groups: [
        ["字段", "field", "column", "队列"],
        ["消息队列", "message queue", "mq"],
        ["企业版", "enterprise edition"],
        ["公司", "company", "企业"],
        ["数据库", "database", "db"],
        ["封版", "code freeze", "freeze"],
        ["代码", "code"],
      ],
    }),
  ]);

  it.each([
    {
      text: "消息队列的积压",
      expected: ["消息队列→消息队列"],
      why: "the longer term wins: 队列 inside it is not found",
    },
    { text: "企业版的价格", expected: ["企业版→企业版"], why: "企业 is part of the longer 企业版" },
    { text: "这家企业的数据库", expected: ["企业→公司", "数据库→数据库"], why: "企业 standing alone is a company" },
    { text: "the code freeze starts", expected: ["code freeze→封版"], why: "the phrase, not code and freeze" },
    { text: "review the code", expected: ["code→代码"], why: "code alone" },
    { text: "dbx settings", expected: [], why: "Latin terms are whole words: db is not in dbx" },
    { text: "the prod DB, ＤＢ", expected: ["db→数据库", "db→数据库"], why: "any case, full-width letters too" },
    { text: "周末去爬山", expected: [], why: "nothing the glossary knows" },
  ])("$text → $expected ($why)", ({ text, expected }) => {
    expect(found(g, text)).toEqual(expected);
  });

  it("does not find a term inside a word jieba's dictionary has, even when no longer term claims it", () => {
    const short = loadGlossary([file("short.json", { groups: [["数据", "data"]] })]);
    expect(found(short, "数据库迁移")).toEqual([]);
    expect(found(short, "数据 迁移")).toEqual(["数据→数据"]);
    expect(found(short, "big data")).toEqual(["data→数据"]);
    expect(found(short, "metadata")).toEqual([]);
  });

  it("indexes a text under one marker per group it names", () => {
    expect(g.markers("数据库 database 和 code freeze")).toEqual([markerOf("数据库"), markerOf("封版")]);
    expect(markerOf("数据库")).toMatch(/^gls[0-9a-z]+$/);
    expect(markerOf("数据库")).not.toBe(markerOf("封版"));
  });
});

describe("loadGlossary", () => {
  it("merges groups with the same first term across files, and counts files, groups and terms", () => {
    const g = loadGlossary([
      file("a.json", { about: "shipped", groups: [["数据库", "database"]] }),
      file("b.json", {
        groups: [
          ["数据库", "数仓"],
          ["缓存", "cache"],
        ],
      }),
    ]);
    expect(g.summary).toEqual({ files: 2, groups: 2, terms: 5 });
    expect(found(g, "数仓 database")).toEqual(["数仓→数据库", "database→数据库"]);
  });

  it.each([
    { name: "missing.json", body: undefined, problem: /ENOENT/ },
    { name: "broken.json", body: "{ groups: [", problem: /JSON/ },
    { name: "one-term.json", body: { groups: [["数据库"]] }, problem: /groups\.0: a group needs at least two terms/ },
    {
      name: "one-char.json",
      body: { groups: [["库", "database"]] },
      problem: /groups\.0\.0: a Chinese term needs at least two characters/,
    },
    { name: "unknown-field.json", body: { groups: [["a", "b"]], terms: [] }, problem: /Unrecognized key/ },
    { name: "empty.json", body: { groups: [] }, problem: /groups: groups must not be empty/ },
  ])("refuses $name, naming the file and the problem", ({ name, body, problem }) => {
    const path = body === undefined ? join(dir, name) : file(name, body);
    let error: unknown;
    try {
      loadGlossary([path]);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(GlossaryError);
    expect((error as Error).message).toContain(`memory glossary ${path} cannot be used`);
    expect((error as Error).message).toMatch(problem);
  });

  it("stops start-up on a bad MEMRECALL_GLOSSARY file", async () => {
    const path = file("bad-start.json", { groups: [["库", "db"]] });
    await expect(startServer({ MEMRECALL_GLOSSARY: path })).rejects.toThrow(GlossaryError);
  });
});

describe("the shipped glossary", () => {
  const g = loadGlossary(DEFAULT_GLOSSARY);

  it("brings equivalents across languages and abbreviations", () => {
    expect(found(g, "数据库配置")).toEqual(["数据库→数据库", "配置→配置"]);
    expect(found(g, "the prod DB")).toEqual(["prod→生产环境", "db→数据库"]);
    expect(found(g, "日活怎么算")).toEqual(["日活→dau"]);
    expect(found(g, "封版")).toEqual(["封版→封版"]);
  });

  it("does not take 企业版 for a pharmaceutical company, nor 消息队列 for a column (issue 17)", () => {
    expect(found(g, "企业版")).toEqual(["企业版→企业版"]);
    expect(found(g, "消息队列")).toEqual(["消息队列→kafka"]);
    const names = (text: string) => g.occurrences(text).flatMap((o) => o.groups.map((x) => x.terms[0]));
    expect(names("企业版 消息队列")).not.toContain("药厂");
    expect(names("企业版 消息队列")).not.toContain("字段");
  });
});
