import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { MemoryFileError, SqliteMemoryStore } from "../../src/store/memories/sqlite-memory-store";
import { describeMemoryStoreContract } from "./memory-store.contract";

const log = pino({ level: "silent" });
const dir = mkdtempSync(join(tmpdir(), "memory-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A directory that does not exist yet: the store creates it.
describeMemoryStoreContract(
  "sqlite",
  async () => new SqliteMemoryStore({ path: join(dir, "contract", "memories.db"), log }),
);

describe("sqlite memory store", () => {
  it("keeps a memory in its file after the store is closed and opened again", async () => {
    const path = join(dir, "reopen.db");
    const first = new SqliteMemoryStore({ path, log });
    await first.migrate();
    await first.upsert("u1", {
      memory_key: "kept",
      memory_type: "fact",
      summary: "重启 之后 还在",
      content: "survives a restart",
      content_truncated: false,
      keywords: [{ keyword: "restart", weight: 1 }],
      metadata: {},
      search_text: "重启 restart",
      embedding: Float32Array.from([0.6, 0.8]),
    });
    await first.close();

    const second = new SqliteMemoryStore({ path, log });
    await second.migrate();
    expect((await second.get("u1", "kept"))?.content).toBe("survives a restart");
    expect((await second.keywordSearch("u1", ["重启"], { keywords: ["RESTART"] }, 5)).map((h) => h.memory_key)).toEqual(
      ["kept"],
    );
    expect(Array.from((await second.vectors("u1"))[0]!.embedding)).toEqual(Array.from(Float32Array.from([0.6, 0.8])));
    await second.close();
  });

  it("upgrades a version-2 file: its memories read back as not sensitive and stated when created, new ones keep both", async () => {
    const path = join(dir, "upgrade.db");
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
    const first = new SqliteMemoryStore({ path, log });
    await first.migrate();
    await first.upsert("u", { ...write, memory_key: "old" });
    await first.close();
    // Back to what version 2 had: no sensitive or stated_at column, no probe table.
    const raw = new Database(path);
    raw.exec("ALTER TABLE memories DROP COLUMN sensitive");
    raw.exec("ALTER TABLE memories DROP COLUMN stated_at");
    raw.exec("DROP TABLE readiness_probe");
    raw.pragma("user_version = 2");
    raw.close();

    const second = new SqliteMemoryStore({ path, log });
    await second.migrate();
    const old = await second.get("u", "old");
    expect(old?.sensitive).toBe(false);
    expect(old?.stated_at.getTime()).toBe(old?.created_at.getTime());
    const stated = new Date("2026-10-01T08:00:00Z");
    await second.upsert("u", { ...write, memory_key: "new", sensitive: true, stated_at: stated });
    expect((await second.get("u", "new"))?.sensitive).toBe(true);
    expect((await second.get("u", "new"))?.stated_at).toEqual(stated);
    await second.close();
  });

  it("refuses to open a file under a path that is no directory, naming the file and the setting (a start-up problem)", () => {
    const notADirectory = join(dir, "plain-file");
    writeFileSync(notADirectory, "x");
    const path = join(notADirectory, "memories.db");
    expect(() => new SqliteMemoryStore({ path, log })).toThrow(
      new MemoryFileError(
        `the SQLite memory store ${path} cannot be opened for writing (EEXIST: a part of its directory path is a file, not a directory); make the file and its directory writable by this user, or set SQLITE_PATH to a writable file`,
      ),
    );
  });

  it("takes the readiness probe's write while another connection holds the write lock, without waiting for it", async () => {
    const path = join(dir, "locked.db");
    const store = new SqliteMemoryStore({ path, log });
    await store.migrate();
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      const started = performance.now();
      await store.checkWritable();
      // Not the 5 s busy timeout of a write: the probe holds the event loop for no one.
      expect(performance.now() - started).toBeLessThan(2500);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    await store.checkWritable();
    await store.close();
  });
});
