import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryIndex } from "../../src/memrecall/memory-index";
import type { MemoryVector } from "../../src/store/memories/memory-store";
import { SqliteMemoryStore } from "../../src/store/memories/sqlite-memory-store";

const DIMS = 8;
const lookup = (q: { tokens: string[]; extra: string[] }) => [...q.tokens, ...q.extra];
const unit = (d: number) => Float32Array.from({ length: DIMS }, (_, i) => (i === d ? 1 : 0));
const vector = (key: string, d: number, extra: Partial<MemoryVector> = {}): MemoryVector => ({
  memory_key: key,
  embedding: unit(d),
  search_text: key,
  memory_type: "fact",
  created_at: new Date(),
  updated_at: new Date(),
  keywords: [],
  ...extra,
});

describe("MemoryIndex", () => {
  let store: SqliteMemoryStore;
  beforeEach(async () => {
    store = new SqliteMemoryStore({ path: ":memory:", log: pino({ level: "silent" }) });
    await store.migrate();
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
    });
  }

  it("ranks by dot product, best first, within the filters", async () => {
    await write("u", vector("a", 0, { memory_type: "pref", keywords: ["Redis"] }));
    await write("u", vector("b", 1));
    const index = new MemoryIndex(store, 4);
    const query = Float32Array.from({ length: DIMS }, (_, i) => (i === 0 ? 0.8 : i === 1 ? 0.6 : 0));
    expect(await index.nearest("u", 1, query, {}, 5)).toEqual([
      { memory_key: "a", score: expect.closeTo(0.8, 5) },
      { memory_key: "b", score: expect.closeTo(0.6, 5) },
    ]);
    expect((await index.nearest("u", 1, query, { memory_types: ["fact"] }, 5)).map((h) => h.memory_key)).toEqual(["b"]);
    expect((await index.nearest("u", 1, query, { keywords: ["redis"] }, 5)).map((h) => h.memory_key)).toEqual(["a"]);
    expect((await index.nearest("u", 1, query, {}, 1)).map((h) => h.memory_key)).toEqual(["a"]);
  });

  it("applies this process's next write in place, past the capacity it loaded with, and removes by moving the last", async () => {
    for (let i = 0; i < 3; i++) await write("u", vector(`m${i}`, i));
    const index = new MemoryIndex(store, 4);
    await index.nearest("u", 5, unit(0), {}, 10);
    // The store is not read again: these exist only in the index.
    for (let i = 3; i < 8; i++) index.applied("u", 5 + i - 2, { put: vector(`m${i}`, i) });
    const all = await index.nearest("u", 10, unit(7), {}, 20);
    expect(all.map((h) => h.memory_key).sort()).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(all[0]).toEqual({ memory_key: "m7", score: 1 });

    index.applied("u", 11, { remove: "m1" });
    index.applied("u", 12, { put: vector("m0", 5) });
    const after = await index.nearest("u", 12, unit(5), {}, 20);
    expect(after.map((h) => h.memory_key).sort()).toEqual(["m0", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(
      after
        .filter((h) => h.score === 1)
        .map((h) => h.memory_key)
        .sort(),
    ).toEqual(["m0", "m5"]);
    expect((await index.nearest("u", 12, unit(7), {}, 1))[0]).toEqual({ memory_key: "m7", score: 1 });
  });

  it("scores keywords by the share of the query's IDF weight, and keeps postings right through replace and remove", async () => {
    await write("u", vector("db", 0, { search_text: "数据库 配置 生产" }));
    await write("u", vector("cache", 1, { search_text: "缓存 配置" }));
    await write("u", vector("long", 2, { search_text: "数据库 配置 生产 其他 很多 词" }));
    const index = new MemoryIndex(store, 4);
    const q = { tokens: ["数据库", "配置"], extra: [] };
    const hits = await index.keywordTop("u", 1, q, lookup(q), {}, 10);
    // db and long hold every word (db first: fewer tokens); cache holds the commoner one only.
    expect(hits.map((h) => h.memory_key)).toEqual(["db", "long", "cache"]);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[2]!.score).toBeGreaterThan(0);
    expect(hits[2]!.score).toBeLessThan(0.5);
    // The expansion counts 0.9: "缓存" alone, through it, beats nothing.
    expect(
      (
        await index.keywordTop(
          "u",
          1,
          { tokens: ["防火墙"], extra: ["缓存"] },
          lookup({ tokens: ["防火墙"], extra: ["缓存"] }),
          {},
          10,
        )
      ).map((h) => [h.memory_key, h.score]),
    ).toEqual([["cache", expect.closeTo(0.9, 5)]]);

    index.applied("u", 2, { put: vector("db", 0, { search_text: "防火墙 规则" }) });
    index.applied("u", 3, { remove: "cache" });
    expect((await index.keywordTop("u", 3, q, lookup(q), {}, 10)).map((h) => h.memory_key)).toEqual(["long"]);
    expect(
      (
        await index.keywordTop(
          "u",
          3,
          { tokens: ["防火墙"], extra: [] },
          lookup({ tokens: ["防火墙"], extra: [] }),
          {},
          10,
        )
      ).map((h) => h.memory_key),
    ).toEqual(["db"]);
    expect(
      await index.keywordTop("u", 3, { tokens: ["缓存"], extra: [] }, lookup({ tokens: ["缓存"], extra: [] }), {}, 10),
    ).toEqual([]);
  });

  it("reloads from the store when another write came between (the version jumped)", async () => {
    await write("u", vector("a", 0));
    const index = new MemoryIndex(store, 4);
    await index.nearest("u", 1, unit(0), {}, 5);
    await write("u", vector("b", 1));
    // Versions 2 (another replica's b) and 3 (ours): not applicable in place.
    index.applied("u", 3, { put: vector("c", 2) });
    expect((await index.nearest("u", 3, unit(1), {}, 5))[0]?.memory_key).toBe("b");
  });

  it("keeps users apart and forgets the least recently used beyond its size", async () => {
    await write("u", vector("a", 0));
    await write("v", vector("b", 0));
    const index = new MemoryIndex(store, 1);
    expect((await index.nearest("u", 1, unit(0), {}, 5)).map((h) => h.memory_key)).toEqual(["a"]);
    expect((await index.nearest("v", 1, unit(0), {}, 5)).map((h) => h.memory_key)).toEqual(["b"]);
    // u was dropped for v: this write cannot be applied in place and is read from the store instead.
    await write("u", vector("c", 0));
    index.applied("u", 2, { put: vector("c", 0) });
    expect((await index.nearest("u", 2, unit(0), {}, 5)).map((h) => h.memory_key).sort()).toEqual(["a", "c"]);
  });
});
