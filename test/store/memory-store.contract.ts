import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemoryStore, MemoryWrite } from "../../src/store/memories/memory-store";

/**
 * The memory store's contract, run against every implementation. `make`
 * builds a store on the database under test; called twice, both stores must
 * see the same data (a second replica, or the same file opened again).
 */
export function describeMemoryStoreContract(name: string, make: () => Promise<MemoryStore>): void {
  describe(`memory store contract: ${name}`, () => {
    let store: MemoryStore;
    // Fresh user ids per run: runs on a shared PostgreSQL never see each other's rows.
    const run = randomUUID();
    const users = new Set<string>();
    const user = (who: string) => {
      const id = `${who}-${run}`;
      users.add(id);
      return id;
    };

    beforeAll(async () => {
      store = await make();
      await store.migrate();
    });
    afterAll(async () => {
      // The shared database is left as it was found.
      for (const u of users) for (const v of await store.vectors(u)) await store.delete(u, v.memory_key);
      await store.close();
    });

    it("migrates again, on the same store and on a second one, without losing data", async () => {
      const u = user("migrate");
      await store.upsert(u, memory("m1", "迁移 前 的 记忆"));
      await store.migrate();
      const second = await make();
      try {
        await second.migrate();
        expect((await second.get(u, "m1"))?.summary).toBe("summary of m1");
      } finally {
        await second.close();
      }
    });

    it("creates a memory, then replaces it under the same key keeping created_at and moving updated_at", async () => {
      const u = user("upsert");
      const first = await store.upsert(
        u,
        memory("k", "数据库 配置", { content: "first content", keywords: [{ keyword: "数据库", weight: 0.9 }] }),
      );
      expect(first.created).toBe(true);
      expect(first.record).toMatchObject({
        memory_key: "k",
        user_id: u,
        memory_type: "fact",
        summary: "summary of k",
        content: "first content",
        content_truncated: false,
        keywords: [{ keyword: "数据库", weight: 0.9 }],
        metadata: { source: "test" },
      });
      expect(first.record.created_at.getTime()).toBe(first.record.updated_at.getTime());

      await sleep(5);
      const second = await store.upsert(
        u,
        memory("k", "网络 防火墙", {
          memory_type: "preference",
          content: "second content",
          content_truncated: true,
          keywords: [],
        }),
      );
      expect(second.created).toBe(false);
      expect(second.record.created_at.getTime()).toBe(first.record.created_at.getTime());
      expect(second.record.updated_at.getTime()).toBeGreaterThan(first.record.updated_at.getTime());
      expect(second.record).toMatchObject({
        memory_type: "preference",
        content: "second content",
        content_truncated: true,
        keywords: [],
      });

      expect(await store.get(u, "k")).toEqual(second.record);
      expect(await store.count(u)).toBe(1);
      // The search text was replaced too: the old tokens no longer find it.
      expect(await keys(store, u, ["数据库"])).toEqual([]);
      expect(await keys(store, u, ["防火墙"])).toEqual(["k"]);
    });

    it("gets one or many memories, skipping unknown keys, and deletes once", async () => {
      const u = user("crud");
      for (const k of ["a", "b", "c"]) await store.upsert(u, memory(k, `词 ${k}`));
      expect((await store.get(u, "b"))?.memory_key).toBe("b");
      expect(await store.get(u, "missing")).toBeUndefined();
      const many = await store.getMany(u, ["c", "missing", "a"]);
      expect(many.map((r) => r.memory_key).sort()).toEqual(["a", "c"]);
      expect(await store.getMany(u, [])).toEqual([]);

      expect(await store.delete(u, "b")).toBe(true);
      expect(await store.delete(u, "b")).toBe(false);
      expect(await store.get(u, "b")).toBeUndefined();
      expect(await store.count(u)).toBe(2);
      expect(await keys(store, u, ["b"])).toEqual([]);
    });

    it("finds a memory's successor when it is read: the newest memory naming it in supersedes, after replaces and deletes", async () => {
      const u = user("supersedes");
      await store.upsert(u, memory("old", "柱状图"));
      expect((await store.get(u, "old"))?.superseded_by).toBe("");
      const b = await store.upsert(u, memory("b", "折线图", { supersedes: "old" }));
      expect(b.record).toMatchObject({ supersedes: "old", superseded_by: "" });
      expect((await store.get(u, "old"))?.superseded_by).toBe("b");
      await sleep(5);
      await store.upsert(u, memory("c", "面积图", { supersedes: "old" }));
      expect((await store.get(u, "old"))?.superseded_by).toBe("c");
      expect((await store.getMany(u, ["old", "c"])).map((r) => [r.memory_key, r.superseded_by]).sort()).toEqual([
        ["c", ""],
        ["old", "c"],
      ]);
      // Replaced without supersedes, c no longer replaces old: b does again.
      await sleep(5);
      expect((await store.upsert(u, memory("c", "面积图"))).record.supersedes).toBe("");
      expect((await store.get(u, "old"))?.superseded_by).toBe("b");
      expect(await store.delete(u, "b")).toBe(true);
      expect((await store.get(u, "old"))?.superseded_by).toBe("");
      // Another user's memory under the same keys changes nothing here.
      const other = user("supersedes-other");
      await store.upsert(other, memory("new", "折线图", { supersedes: "old" }));
      expect((await store.get(u, "old"))?.superseded_by).toBe("");
      // The one that replaces a memory re-stored under its own key still does.
      await store.upsert(u, memory("d", "饼图", { supersedes: "old" }));
      await store.upsert(u, memory("old", "柱状图 改过"));
      expect((await store.get(u, "old"))?.superseded_by).toBe("d");
    });

    it("keeps when a memory was stated: now unless written, as written through get, getMany and a replace", async () => {
      const u = user("stated");
      const before = Date.now();
      const plain = await store.upsert(u, memory("plain", "现在"));
      const after = Date.now();
      // Stated when written: the write's own time, as created_at.
      expect(plain.record.stated_at).toBeInstanceOf(Date);
      expect(plain.record.stated_at.getTime()).toBe(plain.record.created_at.getTime());
      expect(plain.record.stated_at.getTime()).toBeGreaterThanOrEqual(before - 1);
      expect(plain.record.stated_at.getTime()).toBeLessThanOrEqual(after + 1);

      const stated = new Date("2025-03-04T05:06:07.891Z");
      const said = await store.upsert(u, memory("said", "过去", { stated_at: stated }));
      expect(said.record.stated_at).toEqual(stated);
      expect(said.record.created_at.getTime()).toBeGreaterThan(stated.getTime());
      expect((await store.get(u, "said"))?.stated_at).toEqual(stated);
      expect(
        (await store.getMany(u, ["said", "plain"])).map((r) => [r.memory_key, r.stated_at.getTime()]).sort(),
      ).toEqual([
        ["plain", plain.record.stated_at.getTime()],
        ["said", stated.getTime()],
      ]);

      // A replace says when anew: another time as written, or the replace's own time.
      const restated = new Date("2025-06-01T00:00:00.001Z");
      const again = await store.upsert(u, memory("said", "过去", { stated_at: restated }));
      expect(again.record.stated_at).toEqual(restated);
      expect((await store.get(u, "said"))?.stated_at).toEqual(restated);
      await sleep(5);
      const now = await store.upsert(u, memory("said", "过去"));
      expect(now.record.stated_at.getTime()).toBe(now.record.updated_at.getTime());
      expect(now.record.stated_at.getTime()).toBeGreaterThan(now.record.created_at.getTime());
      expect((await store.get(u, "said"))?.stated_at.getTime()).toBe(now.record.updated_at.getTime());
    });

    it("gives a memory valid_until, its successor's stated_at, following every write and delete of the successor", async () => {
      const u = user("valid-until");
      const t1 = new Date("2025-01-01T00:00:00.000Z");
      const t2 = new Date("2025-02-01T00:00:00.000Z");
      const t3 = new Date("2025-03-01T00:00:00.000Z");
      const old = await store.upsert(u, memory("old", "柱状图", { stated_at: new Date("2024-12-01T00:00:00Z") }));
      expect(old.record).not.toHaveProperty("valid_until");
      expect(await store.get(u, "old")).not.toHaveProperty("valid_until");

      const b = await store.upsert(u, memory("b", "折线图", { supersedes: "old", stated_at: t2 }));
      expect(b.record).not.toHaveProperty("valid_until");
      expect(await store.get(u, "old")).toMatchObject({ superseded_by: "b", valid_until: t2 });
      // The newest successor by write, not by when it was stated: c, written later, stated earlier.
      await sleep(5);
      await store.upsert(u, memory("c", "面积图", { supersedes: "old", stated_at: t1 }));
      expect(await store.get(u, "old")).toMatchObject({ superseded_by: "c", valid_until: t1 });
      expect((await store.getMany(u, ["old"]))[0]).toMatchObject({ superseded_by: "c", valid_until: t1 });
      // Re-stated, the successor moves the end with it.
      await sleep(5);
      await store.upsert(u, memory("c", "面积图", { supersedes: "old", stated_at: t3 }));
      expect((await store.get(u, "old"))?.valid_until).toEqual(t3);
      // Re-stored itself, the older memory still reports its end.
      await sleep(5);
      expect((await store.upsert(u, memory("old", "柱状图 改过"))).record).toMatchObject({
        superseded_by: "c",
        valid_until: t3,
      });
      // Replaced without supersedes, c no longer ends it: b does again.
      await sleep(5);
      await store.upsert(u, memory("c", "面积图"));
      expect(await store.get(u, "old")).toMatchObject({ superseded_by: "b", valid_until: t2 });
      expect(await store.delete(u, "b")).toBe(true);
      const holds = await store.get(u, "old");
      expect(holds?.superseded_by).toBe("");
      expect(holds).not.toHaveProperty("valid_until");
      // Another user's successor under the same keys ends nothing here.
      await store.upsert(user("valid-until-other"), memory("new", "折线图", { supersedes: "old", stated_at: t1 }));
      expect(await store.get(u, "old")).not.toHaveProperty("valid_until");
    });

    describe("upsertMany", () => {
      it("creates and replaces each memory in order, as upsert does", async () => {
        const u = user("many");
        const x = await store.upsert(u, memory("x", "旧 内容", { content: "old x" }));
        expect(await store.upsertMany(u, [])).toEqual([]);
        await sleep(5);
        const stated = new Date("2025-05-05T05:05:05.005Z");
        const written = await store.upsertMany(u, [
          memory("a", "苹果 apple", { stated_at: stated }),
          memory("x", "新 内容", { content: "new x", memory_type: "preference" }),
          memory("b", "香蕉 banana", { supersedes: "a", sensitive: true }),
        ]);
        expect(written.map((w) => [w.created, w.record.memory_key])).toEqual([
          [true, "a"],
          [false, "x"],
          [true, "b"],
        ]);
        expect(written[0]!.record).toMatchObject({ user_id: u, summary: "summary of a", stated_at: stated });
        expect(written[1]!.record).toMatchObject({ content: "new x", memory_type: "preference" });
        expect(written[1]!.record.created_at.getTime()).toBe(x.record.created_at.getTime());
        expect(written[1]!.record.updated_at.getTime()).toBeGreaterThan(x.record.updated_at.getTime());
        expect(written[2]!.record).toMatchObject({ supersedes: "a", sensitive: true });

        expect(await store.count(u)).toBe(3);
        expect((await store.get(u, "x"))?.content).toBe("new x");
        expect(await store.get(u, "b")).toEqual(written[2]!.record);
        // Written in one go, a successor in the batch ends the memory before it.
        expect(await store.get(u, "a")).toMatchObject({
          superseded_by: "b",
          valid_until: written[2]!.record.stated_at,
        });
        expect(await keys(store, u, ["旧"])).toEqual([]);
        expect(await keys(store, u, ["banana"])).toEqual(["b"]);
        expect((await store.vectors(u)).map((v) => v.memory_key).sort()).toEqual(["a", "b", "x"]);
      });

      it("writes none when one fails, and rejects as an internal failure (a bug here, not the store away)", async () => {
        const u = user("many-atomic");
        const kept = await store.upsert(u, memory("kept", "保留 kept", { content: "as it was" }));
        const broken = memory("two", "二 two", { embedding: undefined as unknown as Float32Array });
        await expect(
          store.upsertMany(u, [
            memory("one", "一 one"),
            broken,
            memory("three", "三 three"),
            memory("kept", "改写 rewritten", { content: "changed" }),
          ]),
        ).rejects.toMatchObject({ code: "internal", reason: "MEMORY_STORE_FAILED" });
        expect(await store.getMany(u, ["one", "two", "three"])).toEqual([]);
        expect(await store.count(u)).toBe(1);
        expect(await store.get(u, "kept")).toEqual(kept.record);
        expect(await keys(store, u, ["one", "two", "three", "rewritten"])).toEqual([]);
        expect((await store.vectors(u)).map((v) => v.memory_key)).toEqual(["kept"]);
        // The store is usable afterwards.
        expect((await store.upsertMany(u, [memory("one", "一 one")]))[0]?.created).toBe(true);
        expect(await store.count(u)).toBe(2);
      });
    });

    it("finds each memory's newest successor stated by a time, skipping memories without one and other users'", async () => {
      const u = user("successors");
      const day = (d: number) => new Date(Date.UTC(2025, 0, d, 12));
      for (const k of ["old", "lonely", "late"]) await store.upsert(u, memory(k, k, { stated_at: day(1) }));
      await store.upsert(u, memory("s2", "二", { supersedes: "old", stated_at: day(2) }));
      await store.upsert(u, memory("s5", "五", { supersedes: "old", stated_at: day(5) }));
      // Written after s5 but stated before it: by when it was stated, s5 is still the newer.
      await store.upsert(u, memory("s4", "四", { supersedes: "old", stated_at: day(4) }));
      await store.upsert(u, memory("s9", "九", { supersedes: "old", stated_at: day(9) }));
      await store.upsert(u, memory("l8", "八", { supersedes: "late", stated_at: day(8) }));
      // Another user's memories naming the same keys are not this user's successors.
      const other = user("successors-other");
      await store.upsert(other, memory("x6", "六", { supersedes: "old", stated_at: day(6) }));
      await store.upsert(other, memory("x3", "三", { supersedes: "lonely", stated_at: day(3) }));

      const asOf = async (at: Date, memoryKeys = ["old", "lonely", "late", "missing"]) =>
        (await store.successorsAsOf(u, memoryKeys, at)).sort((a, b) => a.supersedes.localeCompare(b.supersedes));
      expect(await asOf(day(7))).toEqual([{ supersedes: "old", memory_key: "s5", stated_at: day(5) }]);
      // Stated exactly at the time counts.
      expect(await asOf(day(5))).toEqual([{ supersedes: "old", memory_key: "s5", stated_at: day(5) }]);
      expect(await asOf(day(4))).toEqual([{ supersedes: "old", memory_key: "s4", stated_at: day(4) }]);
      expect(await asOf(day(3))).toEqual([{ supersedes: "old", memory_key: "s2", stated_at: day(2) }]);
      expect(await asOf(day(1))).toEqual([]);
      expect(await asOf(day(10))).toEqual([
        { supersedes: "late", memory_key: "l8", stated_at: day(8) },
        { supersedes: "old", memory_key: "s9", stated_at: day(9) },
      ]);
      expect(await asOf(day(10), ["late"])).toEqual([{ supersedes: "late", memory_key: "l8", stated_at: day(8) }]);
      expect(await asOf(day(10), [])).toEqual([]);
      expect(await store.successorsAsOf(other, ["old", "lonely"], day(10))).toHaveLength(2);
      // A successor no longer naming the memory is none.
      await store.upsert(u, memory("s5", "五", { stated_at: day(5) }));
      expect(await asOf(day(7))).toEqual([{ supersedes: "old", memory_key: "s4", stated_at: day(4) }]);
    });

    it("keeps the sensitive flag: false unless written, true through get, getMany and a replace", async () => {
      const u = user("sensitive");
      expect((await store.upsert(u, memory("plain", "普通"))).record.sensitive).toBe(false);
      const secret = await store.upsert(u, memory("secret", "口令", { sensitive: true, content: "pw=hunter2" }));
      expect(secret.record).toMatchObject({ sensitive: true, content: "pw=hunter2" });
      expect((await store.get(u, "secret"))?.sensitive).toBe(true);
      expect((await store.getMany(u, ["secret", "plain"])).map((r) => [r.memory_key, r.sensitive]).sort()).toEqual([
        ["plain", false],
        ["secret", true],
      ]);
      // Stored again without the flag, it is no longer sensitive: a write says all a memory is.
      expect((await store.upsert(u, memory("secret", "口令"))).record.sensitive).toBe(false);
    });

    it("counts only the user's own memories", async () => {
      const u = user("count");
      expect(await store.count(u)).toBe(0);
      await store.upsert(u, memory("one", "一"));
      await store.upsert(u, memory("two", "二"));
      await store.upsert(user("count-other"), memory("one", "一"));
      expect(await store.count(u)).toBe(2);
    });

    describe("isolation", () => {
      it("keeps user A's memory from user B even when B knows the key", async () => {
        const a = user("iso-a");
        const b = user("iso-b");
        await store.upsert(a, memory("secret", "机密 薪资 salary", { content: "A's salary" }));

        expect(await store.get(b, "secret")).toBeUndefined();
        expect(await store.getMany(b, ["secret"])).toEqual([]);
        expect(await store.keywordSearch(b, ["机密", "salary"], {}, 10)).toEqual([]);
        expect(await store.vectors(b)).toEqual([]);
        expect(await store.count(b)).toBe(0);
        expect(await store.delete(b, "secret")).toBe(false);

        expect((await store.get(a, "secret"))?.content).toBe("A's salary");
        expect(await keys(store, a, ["salary"])).toEqual(["secret"]);
      });

      it("gives user B its own memory when B stores A's key, leaving A's intact", async () => {
        const a = user("iso2-a");
        const b = user("iso2-b");
        await store.upsert(a, memory("shared", "苹果 apple", { content: "A's apple" }));
        const ofB = await store.upsert(b, memory("shared", "香蕉 banana", { content: "B's banana" }));
        expect(ofB.created).toBe(true);
        expect(ofB.record.user_id).toBe(b);

        expect((await store.get(a, "shared"))?.content).toBe("A's apple");
        expect((await store.get(b, "shared"))?.content).toBe("B's banana");
        expect(await keys(store, a, ["banana"])).toEqual([]);
        expect(await keys(store, b, ["apple"])).toEqual([]);
        expect((await store.vectors(b)).map((v) => v.memory_key)).toEqual(["shared"]);

        expect(await store.delete(b, "shared")).toBe(true);
        expect((await store.get(a, "shared"))?.content).toBe("A's apple");
      });
    });

    describe("keyword search", () => {
      it("finds memories by Chinese tokens and English words, any of them", async () => {
        const u = user("kw-or");
        await store.upsert(u, memory("db", "数据库 配置 连接池"));
        await store.upsert(u, memory("net", "网络 超时 timeout"));
        await store.upsert(u, memory("pg", "postgres connection pool"));
        await store.upsert(u, memory("lunch", "午餐 菜单 lunch"));

        expect(await keys(store, u, ["数据库"])).toEqual(["db"]);
        expect(await keys(store, u, ["postgres"])).toEqual(["pg"]);
        expect((await keys(store, u, ["配置", "timeout", "pool"])).sort()).toEqual(["db", "net", "pg"]);
        expect(await keys(store, u, ["不存在", "absent"])).toEqual([]);
        expect(await store.keywordSearch(u, [], {}, 10)).toEqual([]);

        const [hit] = await store.keywordSearch(u, ["连接池"], {}, 10);
        expect(hit?.search_text).toBe("数据库 配置 连接池");
        expect(hit?.updated_at.getTime()).toBe((await store.get(u, "db"))?.updated_at.getTime());
      });

      it("ranks a memory matching more of the tokens above one matching fewer", async () => {
        const u = user("kw-rank");
        // Equal lengths, so only the number of matching tokens differs.
        await store.upsert(u, memory("one", "迁移 填充 占位 补足"));
        await store.upsert(u, memory("three", "数据库 配置 迁移 补足"));
        await store.upsert(u, memory("two", "数据库 配置 占位 补足"));
        await store.upsert(u, memory("zero", "午餐 填充 占位 补足"));

        const hits = await store.keywordSearch(u, ["数据库", "配置", "迁移"], {}, 10);
        expect(hits.map((h) => h.memory_key)).toEqual(["three", "two", "one"]);
        expect(hits[0]!.rank).toBeGreaterThan(hits[1]!.rank);
        expect(hits[1]!.rank).toBeGreaterThan(hits[2]!.rank);
      });

      it("applies the type, creation time and keyword filters, and the limit", async () => {
        const u = user("kw-filter");
        await store.upsert(
          u,
          memory("pref", "数据库 偏好", {
            memory_type: "preference",
            keywords: [{ keyword: "PostgreSQL", weight: 1 }],
          }),
        );
        await store.upsert(
          u,
          memory("fact", "数据库 缓存", { memory_type: "fact", keywords: [{ keyword: "Redis", weight: 1 }] }),
        );
        await store.upsert(
          u,
          memory("apple", "数据库 水果", { memory_type: "fact", keywords: [{ keyword: "Äpfel", weight: 1 }] }),
        );
        await sleep(10);
        const late = await store.upsert(
          u,
          memory("event", "数据库 迁移", {
            memory_type: "event",
            keywords: [
              { keyword: "postgresql", weight: 1 },
              { keyword: "迁移", weight: 0.5 },
            ],
          }),
        );
        const search = (filters: Parameters<MemoryStore["keywordSearch"]>[2], limit = 10) =>
          keys(store, u, ["数据库"], filters, limit).then((k) => k.sort());

        expect(await search({})).toEqual(["apple", "event", "fact", "pref"]);
        expect(await search({ memory_types: ["preference", "event"] })).toEqual(["event", "pref"]);
        expect(await search({ created_since: late.record.created_at })).toEqual(["event"]);
        expect(await search({ keywords: ["POSTGRESQL"] })).toEqual(["event", "pref"]);
        expect(await search({ keywords: ["redis", "not-a-keyword"] })).toEqual(["fact"]);
        expect(await search({ keywords: ["äPFEL"] })).toEqual(["apple"]);
        expect(await search({ keywords: ["迁移"] })).toEqual(["event"]);
        expect(await search({ memory_types: ["preference"], keywords: ["postgresql"] })).toEqual(["pref"]);
        expect(await search({ memory_types: ["fact"], created_since: late.record.created_at })).toEqual([]);
        // An empty list is no filter, as an empty repeated field in a request.
        expect(await search({ memory_types: [], keywords: [] })).toEqual(["apple", "event", "fact", "pref"]);
        expect(await search({}, 2)).toHaveLength(2);
        expect(await search({}, 0)).toEqual([]);
      });

      it("keeps only memories stated by the stated_by time, with the other filters", async () => {
        const u = user("kw-stated");
        const day = (d: number) => new Date(Date.UTC(2025, 0, d, 12));
        await store.upsert(u, memory("d1", "数据库 一", { stated_at: day(1) }));
        await store.upsert(u, memory("d3", "数据库 三", { stated_at: day(3), memory_type: "event" }));
        await store.upsert(u, memory("d5", "数据库 五", { stated_at: day(5) }));
        // Stated now: after every day above.
        await store.upsert(u, memory("now", "数据库 现在"));
        const search = (filters: Parameters<MemoryStore["keywordSearch"]>[2]) =>
          keys(store, u, ["数据库"], filters).then((k) => k.sort());

        expect(await search({})).toEqual(["d1", "d3", "d5", "now"]);
        expect(await search({ stated_by: day(4) })).toEqual(["d1", "d3"]);
        // At or before: a memory stated exactly then is kept.
        expect(await search({ stated_by: day(3) })).toEqual(["d1", "d3"]);
        expect(await search({ stated_by: new Date(day(3).getTime() - 1) })).toEqual(["d1"]);
        expect(await search({ stated_by: day(0) })).toEqual([]);
        expect(await search({ stated_by: new Date(Date.now() + 60_000) })).toEqual(["d1", "d3", "d5", "now"]);
        expect(await search({ stated_by: day(4), memory_types: ["fact"] })).toEqual(["d1"]);
        // Re-stated later, it is no longer found as of the earlier time.
        await store.upsert(u, memory("d1", "数据库 一", { stated_at: day(6) }));
        expect(await search({ stated_by: day(4) })).toEqual(["d3"]);
      });

      it("searches tokens with quotes, brackets, operators and SQL literally", async () => {
        const u = user("kw-literal");
        await store.upsert(u, memory("odd", "o'brien node.js c++ salt or pepper"));
        expect(await keys(store, u, ["o'brien"])).toEqual(["odd"]);
        expect(await keys(store, u, ["node.js"])).toEqual(["odd"]);
        expect(await keys(store, u, ["OR"])).toEqual(["odd"]);
        // A colon is not a column filter: the word before it is searched.
        expect(await keys(store, u, ["salt:"])).toEqual(["odd"]);

        const hostile = [
          '"',
          "'",
          "''",
          "(",
          ")",
          "*",
          "pepp*",
          ":",
          "\\",
          "\\'",
          "a:b",
          "NEAR(x y)",
          "x AND y",
          "NOT",
          "!",
          "&",
          "|",
          "<->",
          ":*",
          "^",
          "col:x",
          "'; DROP TABLE memories; --",
          '") AND NOT ("',
          "1=1",
        ];
        for (const token of hostile) expect(await keys(store, u, [token]), token).toEqual([]);
        expect(await keys(store, u, [...hostile, "pepper"])).toEqual(["odd"]);
        expect(await store.count(u)).toBe(1);
      });
    });

    it("returns every embedding of the user intact, with search text, type, times (stated_at too) and keywords", async () => {
      const u = user("vectors");
      const exact = Float32Array.from([0.1, -0.5, 1e-7, 3.4028234663852886e38, -0, 0.333333343267, 1, -1]);
      const wide = unit(Float32Array.from({ length: 512 }, (_, i) => Math.sin(i * 1.7)));
      const a = await store.upsert(
        u,
        memory("a", "甲", {
          embedding: exact,
          memory_type: "event",
          stated_at: new Date("2025-07-08T09:10:11.123Z"),
          keywords: [
            { keyword: "Alpha", weight: 1 },
            { keyword: "阿尔法", weight: 0.5 },
          ],
        }),
      );
      const b = await store.upsert(u, memory("b", "乙", { embedding: wide }));

      const vectors = (await store.vectors(u)).sort((x, y) => x.memory_key.localeCompare(y.memory_key));
      expect(vectors.map((v) => v.memory_key)).toEqual(["a", "b"]);
      const va = vectors[0]!;
      const vb = vectors[1]!;
      expect(va.embedding).toBeInstanceOf(Float32Array);
      expect(Array.from(va.embedding)).toEqual(Array.from(exact));
      expect(Array.from(vb.embedding)).toEqual(Array.from(wide));
      expect(va.memory_type).toBe("event");
      expect(va.search_text).toBe("甲");
      expect(va.created_at.getTime()).toBe(a.record.created_at.getTime());
      expect(va.updated_at.getTime()).toBe(a.record.updated_at.getTime());
      expect(va.keywords).toEqual(["Alpha", "阿尔法"]);
      expect(va.stated_at).toEqual(new Date("2025-07-08T09:10:11.123Z"));
      expect(vb.stated_at.getTime()).toBe(b.record.stated_at.getTime());
    });

    it("round-trips nested unicode metadata and a 100 KB content", async () => {
      const u = user("roundtrip");
      const metadata = {
        source: "对话 🗣️",
        nested: { list: [1, 2.5, -3, true, null, "x"], deep: { emoji: "🙂👍🏽", quotes: `"'\\`, empty: {}, none: [] } },
        rtl: "שלום",
      };
      const content = "记忆内容 memory content 🌟 ".repeat(4000).slice(0, 102_400);
      expect(Buffer.byteLength(content)).toBeGreaterThan(100 * 1024);
      await store.upsert(u, memory("big", "大", { metadata, content }));
      const back = await store.get(u, "big");
      expect(back?.metadata).toEqual(metadata);
      expect(back?.content).toBe(content);
    });

    it("takes the readiness probe's write on a writable store, changing no user's memories", async () => {
      const u = user("probe");
      await store.upsert(u, memory("kept", "探针 不 改 记忆"));
      await store.checkWritable();
      await store.checkWritable();
      expect((await store.vectors(u)).map((v) => v.memory_key)).toEqual(["kept"]);
    });

    it("makes a write visible to a second store on the same database as soon as upsert resolves", async () => {
      const u = user("durable");
      const second = await make();
      try {
        await store.upsert(u, memory("now", "持久 durable", { content: "committed" }));
        expect((await second.get(u, "now"))?.content).toBe("committed");
        expect(await keys(second, u, ["durable"])).toEqual(["now"]);
        expect(await second.delete(u, "now")).toBe(true);
        expect(await store.get(u, "now")).toBeUndefined();
      } finally {
        await second.close();
      }
    });
  });
}

/** A memory whose search text is `searchText`; the rest is filler unless given. */
function memory(key: string, searchText: string, over: Partial<MemoryWrite> = {}): MemoryWrite {
  return {
    memory_key: key,
    memory_type: "fact",
    summary: `summary of ${key}`,
    content: `content of ${key}`,
    content_truncated: false,
    keywords: [],
    metadata: { source: "test" },
    search_text: searchText,
    embedding: unit(Float32Array.from([1, 2, 3, 4])),
    ...over,
  };
}

async function keys(
  store: MemoryStore,
  userId: string,
  tokens: string[],
  filters: Parameters<MemoryStore["keywordSearch"]>[2] = {},
  limit = 10,
): Promise<string[]> {
  return (await store.keywordSearch(userId, tokens, filters, limit)).map((h) => h.memory_key);
}

function unit(v: Float32Array): Float32Array {
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
