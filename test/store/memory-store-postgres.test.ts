import { randomUUID } from "node:crypto";
import pg from "pg";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors/tool-error";
import { PostgresMemoryStore } from "../../src/store/memories/postgres-memory-store";
import { describeMemoryStoreContract } from "./memory-store.contract";

// The real PostgreSQL on this machine (CI starts it).
const DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";
const log = pino({ level: "silent" });

describeMemoryStoreContract(
  "postgres",
  async () => new PostgresMemoryStore({ connectionString: DATABASE_URL, log, maxConnections: 4 }),
);

describe("postgres memory store", () => {
  it("reports UNAVAILABLE, not an empty result, when PostgreSQL does not answer, naming the server for the log only", async () => {
    const store = new PostgresMemoryStore({ connectionString: "postgres://postgres:secret@127.0.0.1:1/test", log });
    for (const call of [
      () => store.migrate(),
      () => store.get("u", "k"),
      () => store.keywordSearch("u", ["数据库"], {}, 5),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolError);
      expect((err as ToolError).code).toBe("unavailable");
      expect((err as ToolError).reason).toBe("MEMORY_STORE_UNAVAILABLE");
      expect((err as ToolError).message).toMatch(/^the memory store could not .+; retry shortly$/);
      expect((err as ToolError).message).not.toContain("127.0.0.1");
      expect((err as ToolError).privateDetail).toContain("127.0.0.1:1/test");
      expect((err as ToolError).privateDetail).toContain("ECONNREFUSED");
      expect((err as ToolError).privateDetail).not.toContain("secret");
    }
    await store.close();
  });

  it("upgrades a version-2 database: its memories read back as not sensitive and stated when created, new ones keep both", async () => {
    const schema = `upgrade_${randomUUID().replaceAll("-", "")}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const first = new PostgresMemoryStore({ connectionString: url, log });
    const write = {
      memory_type: "fact",
      summary: "s",
      content: "c",
      content_truncated: false,
      keywords: [],
      metadata: {},
      search_text: "升级",
      embedding: Float32Array.from([1]),
    };
    try {
      await first.migrate();
      await first.upsert("u", { ...write, memory_key: "old" });
      // Back to what version 2 had: no sensitive or stated_at column, no probe table, two migrations recorded.
      await admin.query(`ALTER TABLE ${schema}.memories DROP COLUMN sensitive, DROP COLUMN stated_at`);
      await admin.query(`DROP TABLE ${schema}.readiness_probe`);
      await admin.query(`DELETE FROM ${schema}.schema_migrations WHERE version >= 3`);
      await first.migrate();
      const old = await first.get("u", "old");
      expect(old?.sensitive).toBe(false);
      expect(old?.stated_at.getTime()).toBe(old?.created_at.getTime());
      const stated = new Date("2026-10-01T08:00:00Z");
      await first.upsert("u", { ...write, memory_key: "new", sensitive: true, stated_at: stated });
      expect((await first.get("u", "new"))?.sensitive).toBe(true);
      expect((await first.get("u", "new"))?.stated_at).toEqual(stated);
    } finally {
      await first.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });

  it("lets two replicas migrate a fresh database at the same time", async () => {
    // A schema of its own stands in for a fresh database: both stores find no tables at all.
    const schema = `migrate_${randomUUID().replaceAll("-", "")}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const replicas = [1, 2].map(() => new PostgresMemoryStore({ connectionString: url, log }));
    try {
      await Promise.all(replicas.map((r) => r.migrate()));
      const versions = await admin.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(versions.rows).toEqual([{ version: 1 }, { version: 2 }, { version: 3 }, { version: 4 }, { version: 5 }]);
      await replicas[0]!.upsert("u", {
        memory_key: "k",
        memory_type: "fact",
        summary: "s",
        content: "c",
        content_truncated: false,
        keywords: [],
        metadata: {},
        search_text: "迁移",
        embedding: Float32Array.from([1]),
      });
      expect((await replicas[1]!.keywordSearch("u", ["迁移"], {}, 5)).map((h) => h.memory_key)).toEqual(["k"]);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});
