import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { handoffInit } from "../helpers/fixtures";
import { type Load, sleep, startLoad } from "../helpers/load";
import { type PostgresProcess, startPostgres } from "../helpers/processes";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * PostgreSQL (MEMORY_STORE=postgres) crashes and starts again while clients
 * store and search memories and call other RPCs. The cluster is the test's
 * own (initdb in a temporary directory, its own port), stopped with pg_ctl
 * by its pid file — never the shared one.
 */
const PHASE_MS = 1500;

let pg: PostgresProcess;
let server: TestServer;
let load: Load;
const marks = { stopping: 0, stopped: 0, restarted: 0, recovered: 0, end: 0 };
const readiness: { phase: string; status: number; store: string }[] = [];
const acknowledged: string[] = [];

async function ready(phase: string): Promise<number> {
  const res = await fetch(`${server.baseUrl}/readyz`);
  const body = (await res.json()) as { checks: Record<string, string> };
  readiness.push({ phase, status: res.status, store: body.checks["memory-store (postgres)"] ?? "" });
  return res.status;
}

beforeAll(async () => {
  pg = await startPostgres();
  server = await startServer({ MEMORY_STORE: "postgres", DATABASE_URL: pg.url, LOG_LEVEL: "silent" });
  const memories = (i: number) => clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-pg-restart-${i}` });
  const knowledge = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-pg-restart" });
  const store = (i: number) => async (n: number) => {
    const memoryKey = `m_${i}_${n}`;
    await memories(i).storeMemory({ memoryKey, summary: `部署记录 ${n}`, content: `PostgreSQL 重启演练 ${i} ${n}` });
    // Only what was answered OK counts as accepted.
    acknowledged.push(`${i}/${memoryKey}`);
  };
  load = startLoad({
    "store-0": store(0),
    "store-1": store(1),
    "store-2": store(2),
    "search-0": () => memories(0).searchMemories({ query: "部署记录", searchMode: "keyword", minRelevanceScore: 0 }),
    // A new user each call: no index of theirs is in memory, so every search reads the database.
    "search-cold": (n) =>
      clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-pg-cold-${n}` }).searchMemories({
        query: "部署记录",
        searchMode: "keyword",
      }),
    "other-handoff": () => memories(3).handoff(handoffInit),
    "other-schema": (n) =>
      knowledge.retrieveSchema({
        query: "肺炎有哪些症状",
        knIds: [{ knowledgeNetworkId: "kn_medical" }],
        sessionId: `s-${n}`,
      }),
  });
  await sleep(PHASE_MS);
  await ready("before");
  marks.stopping = performance.now();
  await pg.stop("immediate");
  // Once it is down: calls from here on find it gone.
  marks.stopped = performance.now();
  await sleep(PHASE_MS);
  await ready("during");
  marks.restarted = performance.now();
  await pg.start();
  for (let i = 0; i < 100 && (await ready("after")) !== 200; i++) await sleep(100);
  marks.recovered = performance.now();
  await sleep(PHASE_MS);
  marks.end = performance.now();
  await load.stop();
}, 90_000);

afterAll(async () => {
  await load?.stop();
  await server?.close();
  await pg?.destroy();
});

describe("PostgreSQL crashing and starting again under memory load", () => {
  it("answers every call before the crash", () => {
    const before = load.outcomes.filter((o) => o.at + o.ms < marks.stopping);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("ends memory calls that need the database UNAVAILABLE with a hint while it is down, without waiting long", () => {
    const during = load.between(marks.stopped + 300, marks.restarted).filter((o) => !o.client.startsWith("other"));
    // A search of a user whose index is in memory at the current version needs no database read and may
    // still be answered; writes and searches of users not in memory must fail.
    const needDatabase = during.filter((o) => o.client !== "search-0");
    expect(needDatabase.filter((o) => o.client.startsWith("store")).length).toBeGreaterThan(5);
    // Each cold search opens a new client: on a loaded machine only one or two fit in the window.
    expect(needDatabase.filter((o) => o.client === "search-cold").length).toBeGreaterThan(0);
    for (const o of during) {
      if (o.client === "search-0" && o.code === "ok") continue;
      expect({ client: o.client, code: o.code }).toEqual({ client: o.client, code: "unavailable" });
      expect(o.message).toMatch(/^the memory store could not /);
      expect(o.message).not.toContain("127.0.0.1");
      expect(o.hint).toMatch(/Retry the same call/);
      // Refused connections fail at once; nothing waits for the 5-second connection timeout (bound wide, for a loaded machine).
      expect(o.ms).toBeLessThan(4000);
    }
  });

  it("keeps answering the other RPCs while the database is down", () => {
    const others = load.between(marks.stopped, marks.restarted).filter((o) => o.client.startsWith("other"));
    expect(others.length).toBeGreaterThan(10);
    expect(others.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("says the memory store is failing in /readyz while it is down, and ready again once it is back", () => {
    expect(readiness.find((r) => r.phase === "before")).toMatchObject({ status: 200, store: "ok" });
    expect(readiness.find((r) => r.phase === "during")).toMatchObject({
      status: 503,
      store: "failing",
    });
    expect(readiness.at(-1)).toMatchObject({ phase: "after", status: 200, store: "ok" });
  });

  it("recovers without a restart of the service: every call after the database is back succeeds", () => {
    const after = load.between(marks.recovered + 100, marks.end);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("loses no write it acknowledged: every memory answered OK is read back after the crash", async () => {
    expect(acknowledged.length).toBeGreaterThan(20);
    for (const entry of acknowledged) {
      const [i, memoryKey] = entry.split("/") as [string, string];
      const client = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-pg-restart-${i}` });
      expect((await client.getMemoryDetail({ memoryKey })).memoryKey).toBe(memoryKey);
    }
  });
});
