import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type IndexQuery, MemoryIndex, type Scoring } from "../../src/memrecall/memory-index";
import type { KeywordQuery } from "../../src/memrecall/search-text";
import type { MemoryFilters, MemoryVector } from "../../src/store/memories/memory-store";
import { SqliteMemoryStore } from "../../src/store/memories/sqlite-memory-store";

const DIMS = 8;
const unit = (d: number) => Float32Array.from({ length: DIMS }, (_, i) => (i === d ? 1 : 0));
const vector = (key: string, d: number, extra: Partial<MemoryVector> = {}): MemoryVector => ({
  memory_key: key,
  embedding: unit(d),
  search_text: key,
  memory_type: "fact",
  created_at: new Date(),
  updated_at: new Date(),
  stated_at: new Date(),
  keywords: [],
  ...extra,
});
/** A keyword query of these tokens (equivalents per token), looked up by all of them. */
const words = (tokens: string[], equivalents: string[][] = [], extra: string[] = []): IndexQuery => {
  const query: KeywordQuery = {
    tokens,
    equivalents: tokens.map((_, i) => equivalents[i] ?? []),
    phrases: tokens.map(() => []),
    extra,
  };
  return { keyword: { query, lookup: [...tokens, ...equivalents.flat(), ...extra] } };
};
const byCosine: Scoring = (_, cosine) => cosine;
const byShare: Scoring = (share) => share;

describe("MemoryIndex", () => {
  let store: SqliteMemoryStore;
  let index: MemoryIndex;
  beforeEach(async () => {
    store = new SqliteMemoryStore({ path: ":memory:", log: pino({ level: "silent" }) });
    await store.migrate();
    index = new MemoryIndex(store, 4);
  });
  afterEach(() => store.close());

  async function write(user: string, v: MemoryVector): Promise<void> {
    await store.upsert(user, {
      memory_key: v.memory_key,
      memory_type: v.memory_type,
      summary: "",
      content: v.memory_key,
      content_truncated: false,
      keywords: v.keywords.map((keyword) => ({ keyword, weight: 1 })),
      metadata: {},
      search_text: v.search_text,
      embedding: v.embedding,
      stated_at: v.stated_at,
    });
  }
  const rank = (
    user: string,
    version: number,
    query: IndexQuery,
    score: Scoring,
    filters: MemoryFilters = {},
    n = 10,
  ) => index.rank(user, version, query, filters, n, score);
  const keys = async (p: Promise<{ memory_key: string }[]>) => (await p).map((h) => h.memory_key);

  it("ranks by the scoring of each memory's cosine, best first, within the filters, leaving out scores of 0", async () => {
    await write("u", vector("a", 0, { memory_type: "pref", keywords: ["Redis"] }));
    await write("u", vector("b", 1));
    await write("u", vector("c", 2));
    const query = { vector: Float32Array.from({ length: DIMS }, (_, i) => (i === 0 ? 0.8 : i === 1 ? 0.6 : 0)) };
    expect(await rank("u", 1, query, byCosine)).toEqual([
      { memory_key: "a", score: expect.closeTo(0.8, 5) },
      { memory_key: "b", score: expect.closeTo(0.6, 5) },
    ]);
    expect(await keys(rank("u", 1, query, byCosine, { memory_types: ["fact"] }))).toEqual(["b"]);
    expect(await keys(rank("u", 1, query, byCosine, { keywords: ["redis"] }))).toEqual(["a"]);
    expect(await keys(rank("u", 1, query, byCosine, {}, 1))).toEqual(["a"]);
    // A scoring that leaves the cosine under its floor out: b (0.6) is no candidate.
    expect(await keys(rank("u", 1, query, (_, c) => (c > 0.7 ? c : 0)))).toEqual(["a"]);
  });

  it("keeps only memories stated by stated_by, as loaded and as applied in place", async () => {
    const day = (d: number) => new Date(Date.UTC(2025, 0, d, 12));
    await write("u", vector("d1", 0, { stated_at: day(1), search_text: "封版" }));
    await write("u", vector("d3", 1, { stated_at: day(3), search_text: "封版" }));
    await write("u", vector("d5", 2, { stated_at: day(5), search_text: "封版" }));
    // Stated now: after every day above.
    await write("u", vector("now", 3, { search_text: "封版" }));
    const asOf = async (version: number, stated_by?: Date) =>
      (await keys(rank("u", version, words(["封版"]), byShare, stated_by ? { stated_by } : {}))).sort();
    expect(await asOf(1)).toEqual(["d1", "d3", "d5", "now"]);
    expect(await asOf(1, day(4))).toEqual(["d1", "d3"]);
    // At or before: a memory stated exactly then is kept.
    expect(await asOf(1, day(3))).toEqual(["d1", "d3"]);
    expect(await asOf(1, new Date(day(3).getTime() - 1))).toEqual(["d1"]);
    expect(await asOf(1, day(0))).toEqual([]);
    expect(await keys(rank("u", 1, words(["封版"]), byShare, { stated_by: day(4), memory_types: ["pref"] }))).toEqual(
      [],
    );
    // Written in place: the memory's new stated_at is the one filtered on, for a put and a replace.
    index.applied("u", 2, { put: vector("d2", 4, { stated_at: day(2), search_text: "封版" }) });
    index.applied("u", 3, { put: vector("d1", 0, { stated_at: day(6), search_text: "封版" }) });
    expect(await asOf(3, day(4))).toEqual(["d2", "d3"]);
    expect(await asOf(3, day(6))).toEqual(["d1", "d2", "d3", "d5"]);
  });

  it("breaks equal scores by the most recently written first, then by key", async () => {
    await write("u", vector("old", 0, { search_text: "封版" }));
    await new Promise((r) => setTimeout(r, 5));
    await write("u", vector("new", 0, { search_text: "封版" }));
    await write("u", vector("also", 0, { search_text: "封版" }));
    const [also, newer] = await store.getMany("u", ["also", "new"]);
    const order = await keys(rank("u", 1, words(["封版"]), byShare));
    // also and new may share a millisecond; either way the older memory comes last.
    expect(order.at(-1)).toBe("old");
    if (also!.updated_at.getTime() === newer!.updated_at.getTime()) expect(order).toEqual(["also", "new", "old"]);
  });

  it("applies this process's next write in place, past the capacity it loaded with, and removes by moving the last", async () => {
    for (let i = 0; i < 3; i++) await write("u", vector(`m${i}`, i));
    await rank("u", 5, { vector: unit(0) }, byCosine);
    // The store is not read again: these exist only in the index.
    for (let i = 3; i < 8; i++) index.applied("u", 5 + i - 2, { put: vector(`m${i}`, i) });
    const all = await rank("u", 10, { vector: unit(7) }, (_, c) => c + 1, {}, 20);
    expect(all.map((h) => h.memory_key).sort()).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(all[0]).toEqual({ memory_key: "m7", score: 2 });

    index.applied("u", 11, { remove: "m1" });
    index.applied("u", 12, { put: vector("m0", 5) });
    const after = await rank("u", 12, { vector: unit(5) }, (_, c) => c + 1, {}, 20);
    expect(after.map((h) => h.memory_key).sort()).toEqual(["m0", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(
      after
        .filter((h) => h.score === 2)
        .map((h) => h.memory_key)
        .sort(),
    ).toEqual(["m0", "m5"]);
    expect((await rank("u", 12, { vector: unit(7) }, byCosine, {}, 1))[0]).toEqual({ memory_key: "m7", score: 1 });
  });

  it("scores keywords by the share of the query's IDF weight, and keeps postings right through replace and remove", async () => {
    await write("u", vector("db", 0, { search_text: "数据库 配置 生产" }));
    await write("u", vector("cache", 1, { search_text: "缓存 配置" }));
    await write("u", vector("long", 2, { search_text: "数据库 配置 生产 其他 很多 词" }));
    const q = words(["数据库", "配置"]);
    const hits = await rank("u", 1, q, byShare);
    expect(hits.map((h) => h.memory_key).sort()).toEqual(["cache", "db", "long"]);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[1]!.score).toBeCloseTo(1, 5);
    expect(hits[2]).toEqual({ memory_key: "cache", score: expect.closeTo(5.949118 / (8.917071 + 5.949118), 5) });
    // The extra terms count 0.8 of their coverage: "缓存" alone, through them, beats nothing.
    expect((await rank("u", 1, words(["防火墙"], [], ["缓存"]), byShare)).map((h) => [h.memory_key, h.score])).toEqual([
      ["cache", expect.closeTo(0.8, 5)],
    ]);

    index.applied("u", 2, { put: vector("db", 0, { search_text: "防火墙 规则" }) });
    index.applied("u", 3, { remove: "cache" });
    expect(await keys(rank("u", 3, q, byShare))).toEqual(["long"]);
    expect(await keys(rank("u", 3, words(["防火墙"]), byShare))).toEqual(["db"]);
    expect(await rank("u", 3, words(["缓存"]), byShare)).toEqual([]);
  });

  it("credits a word 0.8 when a memory holds only one of its equivalents, once however many it holds", async () => {
    await write("u", vector("zh", 0, { search_text: "数据库 配置" }));
    await write("u", vector("en", 1, { search_text: "database db config glsabc" }));
    await write("u", vector("half", 2, { search_text: "配置" }));
    const q = words(["数据库", "配置"], [["database", "db", "glsabc"], ["config"]]);
    const hits = await rank("u", 1, q, byShare);
    expect(hits).toEqual([
      { memory_key: "zh", score: expect.closeTo(1, 5) },
      { memory_key: "en", score: expect.closeTo(0.8, 5) },
      { memory_key: "half", score: expect.closeTo(5.949118 / (8.917071 + 5.949118), 5) },
    ]);
  });

  it("gives a hybrid scoring both the share and the cosine; a memory embedded with another size has words only", async () => {
    await write("u", vector("both", 0, { search_text: "封版" }));
    await write("u", vector("meaning", 0, { search_text: "冻结" }));
    await write("u", vector("words", 1, { search_text: "封版" }));
    await write("u", vector("other-model", 0, { search_text: "封版", embedding: Float32Array.from([1, 0, 0]) }));
    const sum: Scoring = (share, cosine) => share + cosine;
    const hits = await rank("u", 1, { ...words(["封版"]), vector: unit(0) }, sum);
    expect(hits[0]).toEqual({ memory_key: "both", score: expect.closeTo(2, 5) });
    expect(
      hits
        .slice(1)
        .map((h) => [h.memory_key, h.score])
        .sort(),
    ).toEqual([
      ["meaning", expect.closeTo(1, 5)],
      ["other-model", expect.closeTo(1, 5)],
      ["words", expect.closeTo(1, 5)],
    ]);
  });

  it("reloads from the store when another write came between (the version jumped)", async () => {
    await write("u", vector("a", 0));
    await rank("u", 1, { vector: unit(0) }, byCosine);
    await write("u", vector("b", 1));
    // Versions 2 (another replica's b) and 3 (ours): not applicable in place.
    index.applied("u", 3, { put: vector("c", 2) });
    expect((await rank("u", 3, { vector: unit(1) }, byCosine))[0]?.memory_key).toBe("b");
  });

  it("keeps users apart and forgets the least recently used beyond its size", async () => {
    index = new MemoryIndex(store, 1);
    await write("u", vector("a", 0));
    await write("v", vector("b", 0));
    expect(await keys(rank("u", 1, { vector: unit(0) }, byCosine))).toEqual(["a"]);
    expect(await keys(rank("v", 1, { vector: unit(0) }, byCosine))).toEqual(["b"]);
    // u was dropped for v: this write cannot be applied in place and is read from the store instead.
    await write("u", vector("c", 0));
    index.applied("u", 2, { put: vector("c", 0) });
    expect((await keys(rank("u", 2, { vector: unit(0) }, byCosine))).sort()).toEqual(["a", "c"]);
  });
});
