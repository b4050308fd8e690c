import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { atMostEvery } from "../../src/server/probes";
import { sleep } from "../helpers/load";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * /readyz checks that the memory store takes writes, not only that it
 * answers: a store that reads but refuses writes fails every StoreMemory, and
 * the probe says which dependency it is (the reason in the log only).
 */

const SQLITE_CHECK = "memory-store (sqlite)";
const POSTGRES_CHECK = "memory-store (postgres)";
const MEMORY = { memoryKey: "probe_test", summary: "就绪检查", content: "the store takes writes again" };

async function readyz(server: TestServer): Promise<{ status: number; body: { checks: Record<string, string> } }> {
  const res = await fetch(`${server.baseUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, string> } };
}

/** Probes until the check says `want` (the write probe runs at most once a second); the last answer. */
async function readyzUntil(server: TestServer, check: string, want: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answer = await readyz(server);
    if (answer.body.checks[check] === want || Date.now() > deadline) return answer;
    await sleep(200);
  }
}

describe("the write probe's rate", () => {
  it("runs once for a burst of probes, which share its outcome, and again once the interval has passed", async () => {
    let runs = 0;
    const check = atMostEvery(200, async () => {
      runs++;
      if (runs === 1) throw new Error("not writable");
    });
    const burst = await Promise.allSettled(Array.from({ length: 50 }, () => check(AbortSignal.timeout(2000))));
    expect(runs).toBe(1);
    expect(burst.every((o) => o.status === "rejected")).toBe(true);
    await sleep(250);
    await check(AbortSignal.timeout(2000));
    expect(runs).toBe(2);
  });
});

/**
 * Root passes over file modes (chmod 0444 stops nothing here), and an open
 * file stays writable through its descriptor whatever its mode. What stops
 * root is the immutable attribute (`chattr +i`, CAP_LINUX_IMMUTABLE) on a file
 * system that has it (ext4, xfs, btrfs; not overlayfs): true when it can be
 * set in the temporary directory.
 */
function canMakeImmutable(dir: string): boolean {
  const file = join(dir, "attribute-probe");
  writeFileSync(file, "");
  try {
    execFileSync("chattr", ["+i", file], { stdio: "ignore" });
    execFileSync("chattr", ["-i", file], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

const immutable = (path: string, on: boolean) => execFileSync("chattr", [on ? "+i" : "-i", path], { stdio: "ignore" });

const dir = mkdtempSync(join(tmpdir(), "store-readiness-"));
const chattr = canMakeImmutable(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The WAL is what a write appends to (in WAL mode the database file itself is
 * written only at checkpoints), so the WAL made immutable while the service
 * runs is what makes every write fail (SQLITE_IOERR_WRITE) while reads go on.
 * The shared-memory file stays as it is: SQLite maps it, and a mapping that
 * cannot be written ends the process (SIGBUS).
 */
describe.skipIf(!chattr)("SQLite memory store readiness (needs chattr +i: root on ext4/xfs)", () => {
  let server: TestServer;
  const path = join(dir, "memories.sqlite");
  const wal = `${path}-wal`;
  beforeAll(async () => {
    server = await startServer({ SQLITE_PATH: path, LOG_LEVEL: "warn" });
  });
  afterAll(async () => {
    immutable(wal, false);
    await server?.close();
  });

  it("says the memory store is failing while its file cannot be written, and ok once it can again", async () => {
    const memories = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-ready-${randomUUID()}` });
    expect(await readyz(server)).toMatchObject({ status: 200, body: { checks: { [SQLITE_CHECK]: "ok" } } });

    immutable(wal, true);
    try {
      const failing = await readyzUntil(server, SQLITE_CHECK, "failing");
      expect(failing).toMatchObject({ status: 503, body: { checks: { [SQLITE_CHECK]: "failing", server: "ok" } } });
      // The probe answers anyone: no path, no SQLite words.
      expect(JSON.stringify(failing.body)).not.toMatch(/sqlite\b.*\/|IOERR|memories\.sqlite/);
      // ...the reason is in the log.
      const logged = server.logs.find((l) => l.msg === "readiness check failing" && l["check"] === SQLITE_CHECK);
      expect(JSON.stringify(logged)).toMatch(/SQLITE_IOERR/);
      // What the probe says is what a write meets.
      expect((await failure(memories.storeMemory(MEMORY))).code).toBe(Code.Unavailable);
    } finally {
      immutable(wal, false);
    }

    expect(await readyzUntil(server, SQLITE_CHECK, "ok")).toMatchObject({
      status: 200,
      body: { checks: { [SQLITE_CHECK]: "ok" } },
    });
    expect(await memories.storeMemory(MEMORY)).toMatchObject({ memoryKey: MEMORY.memoryKey });
  });
});

/**
 * A database and a role of this test's own on the shared PostgreSQL (created
 * and dropped here; the shared `test` database's settings are never touched).
 */
describe("PostgreSQL memory store readiness", () => {
  const ADMIN_URL = "postgres://postgres@127.0.0.1:5432/test";
  const name = `readiness_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const url = (user: string) => `postgres://${user}@127.0.0.1:5432/${name}`;
  let admin: pg.Client;
  /** A statement on the test's own database, as its owner. */
  const inDatabase = async (sql: string) => {
    const c = new pg.Client({ connectionString: url("postgres") });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  const servers: TestServer[] = [];
  const start = async (user: string) => {
    const server = await startServer({ MEMORY_STORE: "postgres", DATABASE_URL: url(user), LOG_LEVEL: "warn" });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`CREATE ROLE ${name} LOGIN`);
    // The schema, as the owner: a server that starts migrates it.
    servers.push(await start("postgres"));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${name}`);
    await admin.end();
  });

  it("says the memory store is failing for a role that may read but not write, and ok once it is granted", async () => {
    // CREATE on the schema: start-up's migration checks its tables with CREATE TABLE IF NOT EXISTS.
    await inDatabase(
      `GRANT CREATE ON SCHEMA public TO ${name}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${name}`,
    );
    const server = await start(name);
    const memories = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-ready-${randomUUID()}` });

    const failing = await readyz(server);
    expect(failing).toMatchObject({ status: 503, body: { checks: { [POSTGRES_CHECK]: "failing" } } });
    expect(JSON.stringify(failing.body)).not.toContain(name);
    const logged = server.logs.find((l) => l.msg === "readiness check failing" && l["check"] === POSTGRES_CHECK);
    expect(JSON.stringify(logged)).toMatch(/SQLSTATE 42501/);
    // Reads work; the write the probe stands for is refused UNAVAILABLE, its message naming no server.
    expect((await memories.searchMemories({ query: "就绪检查" })).results).toEqual([]);
    const refused = await failure(memories.storeMemory(MEMORY));
    expect(refused.code).toBe(Code.Unavailable);
    expect(refused.rawMessage).not.toMatch(/127\.0\.0\.1|readiness_/);

    await inDatabase(`GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${name}`);
    expect(await readyzUntil(server, POSTGRES_CHECK, "ok")).toMatchObject({
      status: 200,
      body: { checks: { [POSTGRES_CHECK]: "ok" } },
    });
    expect(await memories.storeMemory(MEMORY)).toMatchObject({ memoryKey: MEMORY.memoryKey });
  });

  it("says the memory store is failing once its database turns read-only (default_transaction_read_only, as a standby)", async () => {
    const server = await start("postgres");
    const memories = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-ready-${randomUUID()}` });
    expect(await readyz(server)).toMatchObject({ status: 200, body: { checks: { [POSTGRES_CHECK]: "ok" } } });
    await admin.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    try {
      // The setting applies to new sessions: the server's are ended, as a failover to a standby would.
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'memrecall-memory-store'",
        [name],
      );
      const failing = await readyzUntil(server, POSTGRES_CHECK, "failing");
      expect(failing).toMatchObject({ status: 503, body: { checks: { [POSTGRES_CHECK]: "failing" } } });
      const logged = server.logs.find((l) => l.msg === "readiness check failing" && l["check"] === POSTGRES_CHECK);
      expect(JSON.stringify(logged)).toMatch(/SQLSTATE 25006/);
      expect((await failure(memories.storeMemory(MEMORY))).code).toBe(Code.Unavailable);
    } finally {
      await admin.query(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
    }
  });
});
