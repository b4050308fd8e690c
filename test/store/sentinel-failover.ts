import { afterAll, beforeAll, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { type Load, sleep, startLoad } from "../helpers/load";
import { type SentinelSet, startSentinelSet } from "../helpers/processes";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * A failover behind Sentinel while clients call, shared by the Sentinel test
 * files (each its own fault): a master, a replica and three sentinels of the
 * test's own (startSentinelSet), the service started once with REDIS_SENTINELS,
 * six clients writing sessions, the fault done to the master, then calls and
 * /readyz recorded until the replica is promoted and the service is ready again.
 * The service is never restarted.
 */
export const COMMAND_TIMEOUT_MS = 500;
const PHASE_MS = 1500;

export interface Failover {
  set: SentinelSet;
  server: TestServer;
  load: Load;
  /** performance.now() of: the fault; the last moment the replica was still a replica; /readyz 200 again; the end. */
  marks: { fault: number; stillReplica: number; recovered: number; end: number };
  readiness: { phase: string; status: number; redis: string }[];
}

/** The service's Sentinel settings for `set`. */
export function sentinelSettings(set: SentinelSet): Record<string, string> {
  return {
    REDIS_SENTINELS: set.sentinels,
    REDIS_SENTINEL_MASTER: set.masterName,
    REDIS_SENTINEL_PASSWORD: set.sentinelPassword,
    REDIS_PASSWORD: set.password,
    REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
  };
}

/** Registers the run (beforeAll) and the stop of every process it started (afterAll); the run, once done. */
export function useFailover(fault: (set: SentinelSet) => Promise<void> | void): () => Failover {
  const run: Partial<Failover> = {};
  beforeAll(async () => {
    const set = (run.set = await startSentinelSet());
    const server = (run.server = await startServer({ ...sentinelSettings(set), LOG_LEVEL: "silent" }));
    const readiness: Failover["readiness"] = (run.readiness = []);
    const marks = (run.marks = { fault: 0, stillReplica: 0, recovered: 0, end: 0 });
    const ready = async (phase: string) => {
      const res = await fetch(`${server.baseUrl}/readyz`);
      const body = (await res.json()) as { checks: Record<string, string> };
      readiness.push({ phase, status: res.status, redis: body.checks["redis"] ?? "" });
      return res.status;
    };
    const knowledge = (i: number) =>
      clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": `u-sentinel-${i}` });
    // Each call writes its session's schema to Redis.
    const schema = (i: number) => (n: number) =>
      knowledge(i).retrieveSchema({
        query: "肺炎有哪些症状",
        knIds: [{ knowledgeNetworkId: "kn_medical" }],
        sessionId: `s-${i}-${n}`,
      });
    const load = (run.load = startLoad(Object.fromEntries([1, 2, 3, 4, 5, 6].map((i) => [`schema-${i}`, schema(i)]))));
    await sleep(PHASE_MS);
    await ready("before");
    // Marked as the fault begins: killing the master waits for its exit, and a call the kill cut off can end
    // before that wait does (seen in CI on a loaded machine), which would count it as a call before the fault.
    marks.fault = performance.now();
    await fault(set);
    // Until the replica says it is master no master exists: `stillReplica` is the last moment it was asked and
    // was not. Asked from the fault on, beside the rest, so a slow moment of this process does not skip the
    // time without a master.
    const promoted = (async () => {
      for (let i = 0; i < 300; i++) {
        const asked = performance.now();
        if (await set.isMaster(set.replicaPort)) return;
        marks.stillReplica = asked;
        await sleep(50);
      }
    })();
    await sleep(300);
    await ready("during");
    await promoted;
    for (let i = 0; i < 100 && (await ready("after")) !== 200; i++) await sleep(100);
    marks.recovered = performance.now();
    await sleep(PHASE_MS);
    marks.end = performance.now();
    await load.stop();
  }, 60_000);
  afterAll(async () => {
    await run.load?.stop();
    await run.server?.close();
    await run.set?.destroy();
  });
  return () => run as Failover;
}

/** What every failover must show: clean UNAVAILABLE while there is no master, /readyz following, recovery. */
export function failoverChecks(failover: () => Failover): void {
  it("answers every call before the fault", () => {
    const { load, marks } = failover();
    const before = load.outcomes.filter((o) => o.at + o.ms < marks.fault);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("ends calls UNAVAILABLE with a hint, within a few command timeouts, until the replica is promoted", () => {
    const { load, marks } = failover();
    // Calls wholly between the fault (plus the moment the client takes to see it) and the last moment the
    // replica was seen a replica: no master exists then, so none can succeed.
    // A call that started then may still be waiting when the replica is promoted (a hung master holds it for a
    // command timeout, and a switch can take barely longer) and rightly answer OK; every other one fails cleanly.
    const started = load.between(marks.fault + 200, marks.stillReplica);
    const failed = started.filter((o) => o.code !== "ok");
    const wholly = started.filter((o) => o.at + o.ms < marks.stillReplica);
    // The marks in the message: on a failure, how long the switch took and where the calls fell. How many calls
    // fall in the window depends on how long Sentinel takes and how loaded the machine is (two on a busy one):
    // what must hold is that some did, and failed cleanly.
    expect(failed.length, JSON.stringify(marks)).toBeGreaterThan(0);
    expect(wholly.filter((o) => o.code === "ok")).toEqual([]);
    for (const o of failed) {
      expect(o.code).toBe("unavailable");
      expect(o.message).toMatch(/session store \(Redis\)/);
      expect(o.hint).toMatch(/Retry the same call/);
    }
    // No call hangs through the switch: each ends within a few command timeouts (on a loaded machine), the
    // ones still open when the replica was promoted included.
    const switching = load.between(marks.fault, marks.recovered);
    expect(switching.filter((o) => o.ms >= 5 * COMMAND_TIMEOUT_MS)).toEqual([]);
  });

  it("says Redis is failing in /readyz during the switch, and ready once the replica is master", () => {
    const { readiness } = failover();
    expect(readiness.find((r) => r.phase === "before")).toMatchObject({ status: 200, redis: "ok" });
    expect(readiness.find((r) => r.phase === "during")).toMatchObject({ status: 503, redis: "failing" });
    expect(readiness.at(-1)).toMatchObject({ phase: "after", status: 200, redis: "ok" });
  });

  it("succeeds again on the promoted replica without a restart", () => {
    const { load, marks } = failover();
    const after = load.between(marks.recovered + 100, marks.end);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.code !== "ok")).toEqual([]);
  });
}

/**
 * A session that needs Redis: RetrieveSchema stores the schema under `sessionId`, and keyword context
 * reads it back (from the master Sentinel named). Resolves with the first instance keyword context found.
 */
export async function sessionRoundTrip(baseUrl: string, account: string, sessionId: string) {
  const client = clientWith(KnowledgeRetrievalService, baseUrl, { "x-account-id": account });
  await client.retrieveSchema({
    query: "上气道梗阻有哪些症状",
    knIds: [{ knowledgeNetworkId: "kn_medical" }],
    sessionId,
    compactFormat: false,
  });
  const context = await client.retrieveKeywordContext({
    query: "上气道梗阻",
    knIds: [{ knowledgeNetworkId: "kn_medical" }],
    sessionId,
    objectTypeId: "disease",
    compactFormat: false,
  });
  return context.keywordContext!.instances[0];
}
