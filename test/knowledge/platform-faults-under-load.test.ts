import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { handoffInit } from "../helpers/fixtures";
import { type Load, sleep, startLoad } from "../helpers/load";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * The platform's services slow, then failing (the simulator's fault
 * settings), while clients keep calling both the knowledge RPCs that need the
 * platform and the MemRecall RPCs that do not.
 */
const UPSTREAM_TIMEOUT_MS = 1500;
/** Longer than any call's sequence of upstream round trips, each cut at UPSTREAM_TIMEOUT_MS. */
const PLATFORM_DELAY_MS = 6000;
const PHASE_MS = 1500;

let sim: Simulator;
let server: TestServer;
let load: Load;
const marks = { slow: 0, failing: 0, healed: 0, end: 0 };

beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  server = await startServer({
    ONTOLOGY_MANAGER_URL: sim.url,
    ONTOLOGY_QUERY_URL: sim.url,
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    LOG_LEVEL: "silent",
  });
  const knowledge = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-platform-faults" });
  const memories = clientWith(MemRecallService, server.baseUrl, { "x-account-id": "u-platform-faults" });
  const kn = [{ knowledgeNetworkId: "kn_medical" }];
  const schema = (c: number) => (n: number) =>
    knowledge.retrieveSchema({ query: "肺炎有哪些症状", knIds: kn, sessionId: `s-${c}-${n}` });
  // Once each before the clock starts: the first calls build indexes and load dictionaries.
  await schema(0)(0);
  await knowledge.knSearch({ query: "上气道梗阻有哪些症状", knIds: kn });
  await memories.searchMemories({ query: "平台故障" });
  load = startLoad({
    "platform-schema-1": schema(1),
    "platform-schema-2": schema(2),
    "platform-schema-3": schema(3),
    "platform-kn-search": () => knowledge.knSearch({ query: "上气道梗阻有哪些症状", knIds: kn }),
    "other-handoff": () => memories.handoff(handoffInit),
    "other-store": (n) => memories.storeMemory({ memoryKey: `m_${n}`, summary: "平台故障演练", content: `第 ${n} 次` }),
    "other-search": () => memories.searchMemories({ query: "平台故障", minRelevanceScore: 0 }),
  });
  await sleep(PHASE_MS);
  marks.slow = performance.now();
  sim.setFaults({ latencyMs: PLATFORM_DELAY_MS });
  // Room for each platform client's calls to time out a few times wholly within the phase, on a loaded machine too.
  await sleep(PHASE_MS + 4 * UPSTREAM_TIMEOUT_MS);
  marks.failing = performance.now();
  sim.setFaults({ latencyMs: 0, errorRate: 1 });
  await sleep(PHASE_MS);
  marks.healed = performance.now();
  sim.setFaults({ errorRate: 0 });
  await sleep(PHASE_MS);
  marks.end = performance.now();
  await load.stop();
}, 60_000);

afterAll(async () => {
  await load?.stop();
  await server?.close();
  await sim?.close();
});

/** Calls of one group that started at or after `from` and ended before `to`: wholly within one phase. */
const within = (group: string, from: number, to: number) =>
  load.outcomes.filter((o) => o.client.startsWith(group) && o.at >= from && o.at + o.ms < to);

describe("the platform slow or failing while other RPCs are called", () => {
  it("answers every call while the platform is well", () => {
    const well = load.outcomes.filter((o) => o.at + o.ms < marks.slow);
    expect(well.length).toBeGreaterThan(10);
    expect(well.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("gives up on a slow platform at the upstream timeout: DEADLINE_EXCEEDED, never INTERNAL or a long wait", () => {
    const slow = within("platform", marks.slow, marks.failing);
    expect(slow.length).toBeGreaterThan(3);
    for (const o of slow) {
      expect(o.code).toBe("deadline_exceeded");
      expect(o.ms).toBeLessThan(PLATFORM_DELAY_MS);
    }
  });

  it("answers UNAVAILABLE at once while the platform fails, saying which service", () => {
    const failing = within("platform", marks.failing, marks.healed);
    expect(failing.length).toBeGreaterThan(3);
    for (const o of failing) {
      expect(o.code, JSON.stringify(o)).toBe("unavailable");
      expect(o.message).toMatch(/ontology/);
    }
  });

  it("keeps every other RPC answered, and quickly, while the platform is slow or failing", () => {
    const during = within("other", marks.slow, marks.healed);
    expect(during.length).toBeGreaterThan(20);
    expect(during.filter((o) => o.code !== "ok")).toEqual([]);
    // They never wait behind the platform's calls (which take the upstream timeout).
    expect(Math.max(...during.map((o) => o.ms))).toBeLessThan(UPSTREAM_TIMEOUT_MS);
  });

  it("serves the platform's RPCs again once it is well, without a restart", () => {
    const healed = within("", marks.healed, marks.end);
    expect(healed.filter((o) => o.client.startsWith("platform")).length).toBeGreaterThan(3);
    expect(healed.filter((o) => o.code !== "ok")).toEqual([]);
  });
});
