import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { type Load, sleep, startLoad } from "../helpers/load";
import { type RedisProcess, startRedis } from "../helpers/processes";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Redis stopped and started again while clients call: sessions live in Redis
 * (REDIS_URL), memories in SQLite. The test's own redis-server, on its own
 * port, is stopped by its pid — never the shared one.
 */
const COMMAND_TIMEOUT_MS = 500;
const PHASE_MS = 1500;

let redis: RedisProcess;
let server: TestServer;
let load: Load;
const marks = { stopping: 0, stopped: 0, restarted: 0, recovered: 0, end: 0 };
const readiness: { phase: string; status: number; redis: string }[] = [];
const stored: string[] = [];

async function ready(phase: string): Promise<number> {
  const res = await fetch(`${server.baseUrl}/readyz`);
  const body = (await res.json()) as { checks: Record<string, string> };
  readiness.push({ phase, status: res.status, redis: body.checks["redis"] ?? "" });
  return res.status;
}

beforeAll(async () => {
  redis = await startRedis();
  server = await startServer({
    REDIS_URL: redis.url,
    REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    LOG_LEVEL: "silent",
  });
  const headers = (i: number) => ({ "x-account-id": `u-redis-outage-${i}` });
  const knowledge = (i: number) => clientWith(KnowledgeRetrievalService, server.baseUrl, headers(i));
  const memories = (i: number) => clientWith(MemRecallService, server.baseUrl, headers(i));
  await memories(0).storeMemory({ memoryKey: "before_outage", summary: "数据库配置", content: "PostgreSQL port 5432" });
  const schema = (i: number) => (n: number) =>
    knowledge(i).retrieveSchema({
      query: "肺炎有哪些症状",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
      sessionId: `s-${i}-${n}`,
    });
  const store = (i: number) => async (n: number) => {
    const memoryKey = `m_${i}_${n}`;
    await memories(i).storeMemory({ memoryKey, summary: `第 ${n} 条配置`, content: `Redis 故障演练 ${i} ${n}` });
    stored.push(`${i}/${memoryKey}`);
  };
  load = startLoad({
    "schema-1": schema(1),
    "schema-2": schema(2),
    "store-0": store(0),
    "store-1": store(1),
    "search-0": () => memories(0).searchMemories({ query: "数据库配置", minRelevanceScore: 0 }),
    "detail-0": () => memories(0).getMemoryDetail({ memoryKey: "before_outage" }),
  });
  await sleep(PHASE_MS);
  await ready("before");
  marks.stopping = performance.now();
  await redis.stop();
  // Once it is down: calls from here on find it gone.
  marks.stopped = performance.now();
  await sleep(PHASE_MS);
  await ready("during");
  marks.restarted = performance.now();
  await redis.start();
  // The client reconnects on its own (backoff up to 2 s): no restart of the service.
  for (let i = 0; i < 100 && (await ready("after")) !== 200; i++) await sleep(100);
  marks.recovered = performance.now();
  // At least PHASE_MS, and on a loaded machine until enough calls have ended after the recovery (bounded).
  await sleep(PHASE_MS);
  for (
    let i = 0;
    i < 100 && load.between(marks.recovered + 100).filter((o) => o.at + o.ms < performance.now()).length <= 10;
    i++
  ) {
    await sleep(100);
  }
  marks.end = performance.now();
  await load.stop();
}, 60_000);

afterAll(async () => {
  await load?.stop();
  await server?.close();
  await redis?.stop();
});

const of = (prefix: string, from: number, to?: number) =>
  load.between(from, to).filter((o) => o.client.startsWith(prefix));

describe("Redis stopped and started again under load", () => {
  it("answers every call before the outage", () => {
    const before = load.outcomes.filter((o) => o.at + o.ms < marks.stopping);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("ends session calls UNAVAILABLE with a hint within the command timeout while Redis is away", () => {
    // Calls that started once the client had seen the connection go (a few ms after the stop) and ended
    // before Redis was started again: one still waiting in a reconnect attempt when Redis came back may
    // rightly answer OK.
    const during = of("schema", marks.stopped + 200, marks.restarted).filter((o) => o.at + o.ms < marks.restarted);
    expect(during.length).toBeGreaterThan(3);
    for (const o of during) {
      expect(o.code).toBe("unavailable");
      expect(o.message).toMatch(/session store \(Redis\)/);
      expect(o.hint).toMatch(/Retry the same call/);
      // Promptly: a call never waits on a Redis that is known to be gone (nor longer than a few command
      // timeouts on a loaded machine; one that waited for Redis to come back would have answered OK).
      expect(o.ms).toBeLessThan(5 * COMMAND_TIMEOUT_MS);
    }
  });

  it("keeps storing, searching and reading memories while Redis is away", () => {
    const during = load.between(marks.stopped, marks.restarted).filter((o) => !o.client.startsWith("schema"));
    expect(during.length).toBeGreaterThan(10);
    expect(during.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("says Redis is failing in /readyz while it is away, and ready again once it is back", () => {
    expect(readiness.find((r) => r.phase === "before")).toMatchObject({ status: 200, redis: "ok" });
    expect(readiness.find((r) => r.phase === "during")).toMatchObject({
      status: 503,
      redis: "failing",
    });
    expect(readiness.at(-1)).toMatchObject({ phase: "after", status: 200, redis: "ok" });
  });

  it("recovers without a restart: every call after Redis is back succeeds", () => {
    const after = load.between(marks.recovered + 100, marks.end);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("loses no memory it acknowledged: each is found by key afterwards", async () => {
    expect(stored.length).toBeGreaterThan(20);
    for (const entry of stored) {
      const [i, memoryKey] = entry.split("/") as [string, string];
      const client = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-redis-outage-${i}` });
      expect((await client.getMemoryDetail({ memoryKey })).memoryKey).toBe(memoryKey);
    }
    // And searches see the memories stored while Redis was away (no cache of the version before them answers).
    const search = clientWith(MemRecallService, server.baseUrl, { "x-account-id": "u-redis-outage-1" });
    const found = await search.searchMemories({
      query: "故障演练",
      searchMode: "keyword",
      limit: 10,
      minRelevanceScore: 0,
    });
    expect(found.totalFound).toBeGreaterThan(0);
  });
});
