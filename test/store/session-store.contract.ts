import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SessionStore, sessionKey } from "../../src/store/session-store";

/**
 * The session store's contract, run against every implementation. `make`
 * builds a store whose values are capped at 4 KiB.
 */
export function describeSessionStoreContract(name: string, make: () => SessionStore): void {
  describe(`session store contract: ${name}`, () => {
    let store: SessionStore;
    // A fresh namespace per run: tests on a shared Redis never see each other's keys.
    const run = randomUUID();
    const key = (k: string) => sessionKey(`acct-${run}`, "s1", k);
    beforeAll(() => {
      store = make();
    });
    afterAll(() => store.close());

    it("returns what was stored, and undefined for a key never written", async () => {
      await store.setJson(key("schema"), { object_types: ["disease"], round: 1 });
      expect(await store.getJson(key("schema"))).toEqual({ object_types: ["disease"], round: 1 });
      expect(await store.getJson(key("never"))).toBeUndefined();
    });

    // Times leave hundreds of milliseconds of margin: CI machines pause under load.
    it("forgets an entry after its time to live", async () => {
      await store.setJson(key("short"), "x", 400);
      expect(await store.getJson(key("short"))).toBe("x");
      await new Promise((r) => setTimeout(r, 700));
      expect(await store.getJson(key("short"))).toBeUndefined();
    });

    it("keeps a list in the order it was appended", async () => {
      expect(await store.append(key("rounds"), { round: 1 })).toBe(1);
      expect(await store.append(key("rounds"), { round: 2 })).toBe(2);
      expect(await store.list(key("rounds"))).toEqual([{ round: 1 }, { round: 2 }]);
      expect(await store.list(key("no-list"))).toEqual([]);
    });

    it("gives each set member to exactly one claimer, even when claims race", async () => {
      expect(await store.claim(key("seen"), ["a", "b"])).toEqual(["a", "b"]);
      expect(await store.claim(key("seen"), ["b", "c"])).toEqual(["c"]);
      const members = Array.from({ length: 30 }, (_, i) => `m${i}`);
      const claims = await Promise.all(Array.from({ length: 10 }, () => store.claim(key("race"), members)));
      const won = claims.flat();
      expect(won.sort()).toEqual([...members].sort());
    });

    it("counts", async () => {
      expect(await store.counter(key("count"))).toBe(0);
      expect(await store.increment(key("count"))).toBe(1);
      expect(await store.increment(key("count"))).toBe(2);
      expect(await store.counter(key("count"))).toBe(2);
    });

    it("restarts the time to live of an entry on touch", async () => {
      await store.setJson(key("touched"), "x", 1000);
      await new Promise((r) => setTimeout(r, 500));
      await store.touch([key("touched"), key("never-written")], 3000);
      // Past the first time to live: only the touch keeps it.
      await new Promise((r) => setTimeout(r, 800));
      expect(await store.getJson(key("touched"))).toBe("x");
      expect(await store.getJson(key("never-written"))).toBeUndefined();
    });

    it("deletes", async () => {
      await store.setJson(key("gone"), 1);
      await store.delete([key("gone")]);
      expect(await store.getJson(key("gone"))).toBeUndefined();
    });

    it("keeps the first 80% and the last 20% of a list over the size limit, as valid JSON", async () => {
      const items = Array.from({ length: 400 }, (_, i) => ({ i, text: "长".repeat(10) }));
      await store.setJson(key("big"), items);
      const kept = (await store.getJson<{ i: number }[]>(key("big")))!;
      expect(kept.length).toBeGreaterThan(10);
      expect(kept.length).toBeLessThan(400);
      expect(kept[0]!.i).toBe(0);
      expect(kept[kept.length - 1]!.i).toBe(399);
      const firstGap = kept.findIndex((x, j) => x.i !== j);
      const head = firstGap;
      expect(head / kept.length).toBeGreaterThan(0.7);
      expect(JSON.stringify(kept).length).toBeLessThanOrEqual(4096);
    });

    it("cuts the middle of a long string over the size limit", async () => {
      const text = `开头${"中".repeat(5000)}结尾`;
      await store.setJson(key("text"), text);
      const kept = (await store.getJson<string>(key("text")))!;
      expect(kept.startsWith("开头")).toBe(true);
      expect(kept.endsWith("结尾")).toBe(true);
      expect(kept).toContain("…");
    });

    it("never lets one account's or session's keys meet another's", () => {
      expect(sessionKey("a:b", "c", "x")).not.toBe(sessionKey("a", "b:c", "x"));
      expect(sessionKey("a}", "c", "x")).not.toBe(sessionKey("a", "}c", "x"));
    });
  });
}
