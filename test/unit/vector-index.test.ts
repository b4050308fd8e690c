import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VectorIndex } from "../../src/memrecall/vector-index";
import type { MemoryVector } from "../../src/store/memory-store";
import { SqliteMemoryStore } from "../../src/store/sqlite-memory-store";

const DIMS = 8;
const unit = (d: number) => Float32Array.from({ length: DIMS }, (_, i) => (i === d ? 1 : 0));
const vector = (key: string, d: number, extra: Partial<MemoryVector> = {}): MemoryVector => ({
  memory_key: key,
  embedding: unit(d),
  memory_type: "fact",
  created_at: new Date(),
  keywords: [],
  ...extra,
});

describe("VectorIndex", () => {
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
      search_text: v.memory_key,
      embedding: v.embedding,
    });
  }

  it("ranks by dot product, best first, within the filters", async () => {
    await write("u", vector("a", 0, { memory_type: "pref", keywords: ["Redis"] }));
    await write("u", vector("b", 1));
    const index = new VectorIndex(store, 4);
    const query = Float32Array.from({ length: DIMS }, (_, i) => (i === 0 ? 0.8 : i === 1 ? 0.6 : 0));
    expect(await index.nearest("u", 1, query, {}, 5)).toEqual([
      { memory_key: "a", cosine: expect.closeTo(0.8, 5) },
      { memory_key: "b", cosine: expect.closeTo(0.6, 5) },
    ]);
    expect((await index.nearest("u", 1, query, { memory_types: ["fact"] }, 5)).map((h) => h.memory_key)).toEqual(["b"]);
    expect((await index.nearest("u", 1, query, { keywords: ["redis"] }, 5)).map((h) => h.memory_key)).toEqual(["a"]);
    expect((await index.nearest("u", 1, query, {}, 1)).map((h) => h.memory_key)).toEqual(["a"]);
  });

  it("applies this process's next write in place, past the capacity it loaded with, and removes by moving the last", async () => {
    for (let i = 0; i < 3; i++) await write("u", vector(`m${i}`, i));
    const index = new VectorIndex(store, 4);
    await index.nearest("u", 5, unit(0), {}, 10);
    // The store is not read again: these exist only in the index.
    for (let i = 3; i < 8; i++) index.applied("u", 5 + i - 2, { put: vector(`m${i}`, i) });
    const all = await index.nearest("u", 10, unit(7), {}, 20);
    expect(all.map((h) => h.memory_key).sort()).toEqual(["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(all[0]).toEqual({ memory_key: "m7", cosine: 1 });

    index.applied("u", 11, { remove: "m1" });
    index.applied("u", 12, { put: vector("m0", 5) });
    const after = await index.nearest("u", 12, unit(5), {}, 20);
    expect(after.map((h) => h.memory_key).sort()).toEqual(["m0", "m2", "m3", "m4", "m5", "m6", "m7"]);
    expect(after.filter((h) => h.cosine === 1).map((h) => h.memory_key).sort()).toEqual(["m0", "m5"]);
    expect((await index.nearest("u", 12, unit(7), {}, 1))[0]).toEqual({ memory_key: "m7", cosine: 1 });
  });

  it("reloads from the store when another write came between (the version jumped)", async () => {
    await write("u", vector("a", 0));
    const index = new VectorIndex(store, 4);
    await index.nearest("u", 1, unit(0), {}, 5);
    await write("u", vector("b", 1));
    // Versions 2 (another replica's b) and 3 (ours): not applicable in place.
    index.applied("u", 3, { put: vector("c", 2) });
    expect((await index.nearest("u", 3, unit(1), {}, 5))[0]?.memory_key).toBe("b");
  });

  it("keeps users apart and forgets the least recently used beyond its size", async () => {
    await write("u", vector("a", 0));
    await write("v", vector("b", 0));
    const index = new VectorIndex(store, 1);
    expect((await index.nearest("u", 1, unit(0), {}, 5)).map((h) => h.memory_key)).toEqual(["a"]);
    expect((await index.nearest("v", 1, unit(0), {}, 5)).map((h) => h.memory_key)).toEqual(["b"]);
    // u was dropped for v: this write cannot be applied in place and is read from the store instead.
    await write("u", vector("c", 0));
    index.applied("u", 2, { put: vector("c", 0) });
    expect((await index.nearest("u", 2, unit(0), {}, 5)).map((h) => h.memory_key).sort()).toEqual(["a", "c"]);
  });
});
