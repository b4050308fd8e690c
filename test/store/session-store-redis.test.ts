import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors/tool-error";
import { RedisSessionStore } from "../../src/store/redis-session-store";
import { describeSessionStoreContract } from "./session-store.contract";

// The real Redis on this machine (CI starts it).
const REDIS_URL = "redis://127.0.0.1:6379";
const log = pino({ level: "silent" });

describeSessionStoreContract(
  "redis",
  () => new RedisSessionStore({ url: REDIS_URL, cluster: false, maxValueBytes: 4096, commandTimeoutMs: 2000, log }),
);

describe("redis session store", () => {
  it("reports UNAVAILABLE, not an empty session, when Redis does not answer", async () => {
    const store = new RedisSessionStore({
      url: "redis://127.0.0.1:1",
      cluster: false,
      maxValueBytes: 4096,
      commandTimeoutMs: 300,
      log,
    });
    const err = await store.getJson("k").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolError);
    expect((err as ToolError).code).toBe("unavailable");
    expect((err as ToolError).reason).toBe("SESSION_STORE_UNAVAILABLE");
    await store.close();
  });
});
