import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Issue 22: memory search reaches words the shipped glossary does not list
 * through CC-CEDICT (the other language) and WordNet (English synonyms), at
 * a lower credit than the user's own words.
 */

const MEMORIES = [
  {
    memoryKey: "migraine_med",
    summary: "偏头痛发作时的用药",
    content: "偏头痛发作时先吃布洛芬，两小时不缓解再吃舒马普坦。",
  },
  {
    memoryKey: "bastion",
    summary: "Production access",
    content: "SSH to production goes through the bastion host at 10.20.0.5.",
  },
  {
    memoryKey: "car_lease",
    summary: "Company car",
    content: "The company car lease ends in March; return the automobile to the Pudong office.",
  },
  { memoryKey: "flags", summary: "Feature flag naming", content: "Feature flags are prefixed ff_ and live in Nacos." },
  { memoryKey: "gym", summary: "周三下班去健身房", content: "每周三下班后去公司楼下的健身房，练腿。" },
];

let server: TestServer;
const account = `u-lex-${randomUUID().slice(0, 8)}`;
const client = () => clientWith(MemRecallService, server.baseUrl, { "x-account-id": account });

beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "silent" });
  for (const m of MEMORIES) await client().storeMemory({ memoryType: "project_fact", ...m });
});
afterAll(async () => {
  await server?.close();
});

describe("SearchMemories through the dictionaries", () => {
  it.each([
    ["migraine medication", "migraine_med"], // English query, Chinese memory (CC-CEDICT: migraine ↔ 偏头痛)
    ["堡垒机地址", "bastion"], // Chinese query, English memory (堡垒机 ↔ bastion host)
    ["gym schedule", "gym"],
    ["motorcar lease", "car_lease"], // WordNet: motorcar is a car
    ["前缀", "flags"], // 前缀 → "prefix", which the memory writes "prefixed"
  ])("%s finds %s, in keyword and hybrid mode", async (query, key) => {
    for (const searchMode of ["keyword", "hybrid"]) {
      // A word of the query no memory holds (medication, 地址, schedule) lowers the share well below the default bar of 0.5: the order is what is checked.
      const res = await client().searchMemories({ query, searchMode, minRelevanceScore: 0.05 });
      expect(res.results[0]?.memoryKey, `${searchMode}: ${JSON.stringify(res.results.map((r) => r.memoryKey))}`).toBe(
        key,
      );
    }
  });

  it("counts a translation below the word itself: the same memory found by its own words scores higher", async () => {
    const own = await client().searchMemories({ query: "偏头痛 用药", searchMode: "keyword" });
    const translated = await client().searchMemories({ query: "migraine", searchMode: "keyword" });
    // What the dictionary brought is listed with the rest of the expansion.
    expect(translated.searchQueryExpanded.split(", ")).toContain("偏头痛");
    expect(own.results[0]?.memoryKey).toBe("migraine_med");
    expect(translated.results[0]?.memoryKey).toBe("migraine_med");
    expect(translated.results[0]!.relevanceScore).toBeLessThan(1);
    expect(translated.results[0]!.relevanceScore).toBeGreaterThanOrEqual(0.5);
  });

  it("answers a hostile query of 2000 characters of dictionary words, listing ten dictionary words at most", async () => {
    const words = "high blood pressure migraine car house water fire light heart gym sign star firm ship".split(" ");
    let query = "";
    for (let i = 0; query.length < 1990; i++) query += `${words[i % words.length]} `;
    const res = await client().searchMemories({
      query: query.slice(0, 2000),
      searchMode: "keyword",
      minRelevanceScore: 0.01,
    });
    const expanded = res.searchQueryExpanded.split(", ").filter((t) => t !== "");
    // The query is all English: what Chinese the expansion lists came from the dictionary (ten at most) or the glossary.
    expect(expanded.filter((t) => /\p{Script=Han}/u.test(t)).length).toBeLessThanOrEqual(10);
  });

  it("finds nothing through a word the dictionaries know but no memory holds in any language", async () => {
    const res = await client().searchMemories({ query: "glaucoma", searchMode: "keyword" });
    expect(res.results).toEqual([]);
  });
});
