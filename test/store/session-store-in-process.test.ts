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
});
