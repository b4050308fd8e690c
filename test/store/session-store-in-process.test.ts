import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { InProcessSessionStore } from "../../src/store/in-process-session-store";
import { describeSessionStoreContract } from "./session-store.contract";

const log = pino({ level: "silent" });
describeSessionStoreContract(
  "in-process",
  () => new InProcessSessionStore({ maxValueBytes: 4096, maxEntries: 10_000, log }),
);

describe("in-process session store", () => {
  it("drops the least recently used entries past its capacity", async () => {
    const store = new InProcessSessionStore({ maxValueBytes: 4096, maxEntries: 3, log });
    for (const k of ["a", "b", "c"]) await store.setJson(k, k);
    await store.getJson("a");
    await store.setJson("d", "d");
    expect(await store.getJson("b")).toBeUndefined();
    expect(await store.getJson("a")).toBe("a");
    await store.close();
  });

  it("drops the least recently used entries past maxBytes of values, and counts what it holds", async () => {
    const store = new InProcessSessionStore({ maxValueBytes: 4096, maxEntries: 1000, maxBytes: 3100, log });
    const value = "x".repeat(800);
    for (const k of ["a", "b", "c"]) await store.setJson(k, value);
    expect(store.usage.entries).toBe(3);
    await store.getJson("a");
    await store.append("d", value);
    expect(await store.getJson("b")).toBeUndefined();
    expect(await store.getJson("a")).toBe(value);
    expect(await store.list("d")).toEqual([value]);
    expect(store.usage.bytes).toBeLessThanOrEqual(3100);
    await store.delete(["a", "c", "d"]);
    expect(store.usage).toEqual({ entries: 0, bytes: 0 });
    await store.close();
  });

  it("hands every reader the value as stored, frozen: no reader can change what the next one reads", async () => {
    const store = new InProcessSessionStore({ maxValueBytes: 4096, maxEntries: 10, log });
    await store.append("rounds", { types: [{ id: "disease", score: 0.5 }] });
    const [round] = await store.list<{ types: { id: string; score: number }[] }>("rounds");
    expect(() => {
      round!.types[0]!.score = 1;
    }).toThrow(TypeError);
    expect(await store.list("rounds")).toEqual([{ types: [{ id: "disease", score: 0.5 }] }]);
    // Stored as JSON reads it back: a Date becomes its ISO text, as from Redis.
    await store.setJson("when", { at: new Date(0) });
    expect(await store.getJson("when")).toEqual({ at: "1970-01-01T00:00:00.000Z" });
    await store.close();
  });
});
