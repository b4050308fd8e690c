import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { loadConfig } from "../../src/config";
import { checkSentinels, RedisSentinelError } from "../../src/store/redis-connection";
import { type Load, sleep, startLoad } from "../helpers/load";
import { freePort, type SentinelSet, startRedis, startSentinelSet } from "../helpers/processes";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Sessions in Redis behind Sentinel (REDIS_SENTINELS), the master killed
 * (SIGKILL, by its pid) while clients call: a master and a replica and three
 * sentinels of the test's own, on their own ports, declaring the master down
 * after 1 s. The service is not restarted.
 */
const COMMAND_TIMEOUT_MS = 500;
const PHASE_MS = 1500;

let set: SentinelSet;
let server: TestServer;
let load: Load;
const marks = { killed: 0, stillReplica: 0, recovered: 0, end: 0 };
const readiness: { phase: string; status: number; redis: string }[] = [];

async function ready(phase: string): Promise<number> {
  const res = await fetch(`${server.baseUrl}/readyz`);
  const body = (await res.json()) as { checks: Record<string, string> };
  readiness.push({ phase, status: res.status, redis: body.checks["redis"] ?? "" });
  return res.status;
}

const settings = () => ({
  REDIS_SENTINELS: set.sentinels,
  REDIS_SENTINEL_MASTER: set.masterName,
  REDIS_SENTINEL_PASSWORD: set.sentinelPassword,
  REDIS_PASSWORD: set.password,
  REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
});

beforeAll(async () => {
  set = await startSentinelSet();
  server = await startServer({ ...settings(), LOG_LEVEL: "silent" });
  const knowledge = (i: number) =>
    clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": `u-sentinel-${i}` });
  // Each call writes the session's schema to Redis; the next round of the same session reads it back.
  const schema = (i: number) => (n: number) =>
    knowledge(i).retrieveSchema({
      query: "肺炎有哪些症状",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
      sessionId: `s-${i}-${n}`,
    });
  load = startLoad({ "schema-1": schema(1), "schema-2": schema(2), "schema-3": schema(3) });
  await sleep(PHASE_MS);
  await ready("before");
  await set.killMaster();
  marks.killed = performance.now();
  await sleep(300);
  await ready("during");
  // Until the replica says it is master, no master exists: `stillReplica` is the last moment it was asked and was not.
  for (let i = 0; i < 200; i++) {
    const asked = performance.now();
    if (await set.isMaster(set.replicaPort)) break;
    marks.stillReplica = asked;
    await sleep(100);
  }
  for (let i = 0; i < 100 && (await ready("after")) !== 200; i++) await sleep(100);
  marks.recovered = performance.now();
  await sleep(PHASE_MS);
  marks.end = performance.now();
  await load.stop();
}, 60_000);

afterAll(async () => {
  await load?.stop();
  await server?.close();
  await set?.destroy();
});

describe("the Redis master killed behind Sentinel, under load", () => {
  it("answers every call before the master is killed", () => {
    const before = load.outcomes.filter((o) => o.at + o.ms < marks.killed);
    expect(before.length).toBeGreaterThan(10);
    expect(before.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("ends calls UNAVAILABLE with a hint, within a few command timeouts, until the replica is promoted", () => {
    // Calls wholly between the kill (plus the moment the client takes to see the connection go) and the
    // last moment the replica was seen a replica: no master exists then, so none can succeed.
    const during = load.between(marks.killed + 200, marks.stillReplica).filter((o) => o.at + o.ms < marks.stillReplica);
    expect(during.length).toBeGreaterThan(3);
    for (const o of during) {
      expect(o.code).toBe("unavailable");
      expect(o.message).toMatch(/session store \(Redis\)/);
      expect(o.hint).toMatch(/Retry the same call/);
    }
    // No call hangs through the switch: each ends within a few command timeouts (on a loaded machine), the
    // ones still open when the replica was promoted included.
    const switching = load.between(marks.killed, marks.recovered);
    expect(switching.filter((o) => o.ms >= 5 * COMMAND_TIMEOUT_MS)).toEqual([]);
  });

  it("says Redis is failing in /readyz during the switch, and ready once the replica is master", () => {
    expect(readiness.find((r) => r.phase === "before")).toMatchObject({ status: 200, redis: "ok" });
    expect(readiness.find((r) => r.phase === "during")).toMatchObject({ status: 503, redis: "failing" });
    expect(readiness.at(-1)).toMatchObject({ phase: "after", status: 200, redis: "ok" });
  });

  it("succeeds again on the promoted replica without a restart", () => {
    const after = load.between(marks.recovered + 100, marks.end);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((o) => o.code !== "ok")).toEqual([]);
  });

  it("keeps a session across calls on the new master", async () => {
    const client = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-sentinel-after" });
    await client.retrieveSchema({
      query: "上气道梗阻有哪些症状",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
      sessionId: "after-failover",
      compactFormat: false,
    });
    // Keyword context needs the schema this session stored a moment ago: it is read back from the new master.
    const context = await client.retrieveKeywordContext({
      query: "上气道梗阻",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
      sessionId: "after-failover",
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(context.keywordContext!.instances[0]).toMatchObject({ instanceName: "上、下气道梗阻" });
  });
});

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

/** Runs src/main.ts until it exits (or is killed after 30 s); its exit code and what it wrote to stderr. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "sentinel-start-up-"));
  const child = spawn(process.execPath, ["--import", tsxLoader, "src/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      SQLITE_PATH: join(dir, "m.sqlite"),
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stderr });
    }),
  );
}

describe("a Sentinel setting that cannot work stops start-up with one line and exit code 2", () => {
  it("says no sentinel answered at a wrong address, and which setting to fix", async () => {
    const port = await freePort();
    const { code, stderr } = await runMain({ ...settings(), REDIS_SENTINELS: `127.0.0.1:${port}` });
    expect(code).toBe(2);
    expect(stderr).toBe(
      `context-loader cannot start: no sentinel of REDIS_SENTINELS answered (127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}); set REDIS_SENTINELS to the sentinels' host:port\n`,
    );
  });

  /** The start-up check over settings read as the service reads them; what it refuses, as main.ts prints it. */
  async function refusal(env: Record<string, string>): Promise<string> {
    const redis = loadConfig(env).sessions.redis;
    if (!redis || !("sentinel" in redis)) throw new Error("not Sentinel settings");
    const err = await checkSentinels(redis.sentinel, pino({ level: "silent" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisSentinelError);
    return (err as Error).message;
  }

  it("says a Redis server that is no sentinel is not one", async () => {
    const redis = await startRedis();
    try {
      expect(await refusal({ ...settings(), REDIS_SENTINELS: `127.0.0.1:${redis.port}` })).toMatch(
        new RegExp(
          `^no sentinel of REDIS_SENTINELS answered \\(127\\.0\\.0\\.1:${redis.port}: not a sentinel \\(ERR unknown command .+\\)\\); set REDIS_SENTINELS to the sentinels' host:port$`,
        ),
      );
    } finally {
      await redis.stop();
    }
  });

  it("says the sentinels monitor no master of a wrong REDIS_SENTINEL_MASTER", async () => {
    expect(await refusal({ ...settings(), REDIS_SENTINEL_MASTER: "no-such-master" })).toBe(
      `the sentinels at ${set.sentinels.split(",").join(", ")} monitor no master named "no-such-master"; set REDIS_SENTINEL_MASTER to the name in their "sentinel monitor" line`,
    );
  });

  it("says the sentinels refused a wrong REDIS_SENTINEL_PASSWORD, or none given", async () => {
    for (const password of ["wrong", ""]) {
      const message = await refusal({ ...settings(), REDIS_SENTINEL_PASSWORD: password });
      expect(message).toMatch(/^the sentinels refused the password \(127\.0\.0\.1:\d+: (WRONGPASS|NOAUTH)/);
      expect(message).toMatch(/; set REDIS_SENTINEL_PASSWORD to their requirepass$/);
    }
  });

  it("starts when one sentinel of the list is wrong but another names the master", async () => {
    const port = await freePort();
    const started = await startServer({ ...settings(), REDIS_SENTINELS: `127.0.0.1:${port},${set.sentinels}` });
    try {
      expect(started.logs.find((l) => l.msg === "some sentinels did not answer")).toMatchObject({
        sentinels: [`127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`],
      });
      expect((await fetch(`${started.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await started.close();
    }
  });
});
