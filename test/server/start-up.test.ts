import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteMemoryStore } from "../../src/store/memories/sqlite-memory-store";
import { runMainToExit, type ServiceProcess, startServiceProcess } from "../helpers/service-process";

describe("start-up problems are one line and exit code 2", () => {
  let running: ServiceProcess;
  beforeAll(async () => {
    running = await startServiceProcess({});
  });
  afterAll(() => running.destroy());

  it("says the port is in use and which setting to change, without a stack trace", async () => {
    const { code, stderr } = await runMainToExit({ PORT: String(running.port), HOST: "127.0.0.1" });
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(
      `context-loader cannot start: 127.0.0.1:${running.port} is already in use; stop what listens there or set PORT to another port`,
    );
  });

  it("says the SQLite file cannot be opened under a path that is no directory, and which setting to change", async () => {
    // A file where a directory should be stops root too (chmod does not: root passes over file modes).
    const dir = mkdtempSync(join(tmpdir(), "start-up-file-"));
    try {
      writeFileSync(join(dir, "data"), "");
      const path = join(dir, "data", "memories.sqlite");
      const { code, stderr } = await runMainToExit({ PORT: "0", HOST: "127.0.0.1", SQLITE_PATH: path });
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(
        `context-loader cannot start: the SQLite memory store ${path} cannot be opened for writing (EEXIST: a part of its directory path is a file, not a directory); make the file and its directory writable by this user, or set SQLITE_PATH to a writable file`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says an SQLite file that cannot be written is the problem, not a stack trace, when SQLite opens it read-only", async (ctx) => {
    // SQLite opens a file it may not write read-only, without a word, and a schema already current needs
    // no write: the start-up write finds out. The immutable attribute is what makes a file unwritable for
    // root (chattr +i; ext4, xfs, btrfs).
    const dir = mkdtempSync(join(tmpdir(), "start-up-read-only-"));
    const path = join(dir, "memories.sqlite");
    const store = new SqliteMemoryStore({ path, log: pino({ level: "silent" }) });
    await store.migrate();
    await store.close();
    try {
      execFileSync("chattr", ["+i", path], { stdio: "ignore" });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      ctx.skip("chattr +i is not available here (not root, or a file system without the attribute)");
    }
    try {
      const { code, stderr } = await runMainToExit({ PORT: "0", HOST: "127.0.0.1", SQLITE_PATH: path });
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(
        `context-loader cannot start: the SQLite memory store ${path} cannot be opened for writing (SQLITE_READONLY: attempt to write a readonly database); make the file and its directory writable by this user, or set SQLITE_PATH to a writable file`,
      );
    } finally {
      execFileSync("chattr", ["-i", path], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says a HOST that is no address of this machine is the setting to fix", async () => {
    const { code, stderr } = await runMainToExit({ PORT: "0", HOST: "192.0.2.1" });
    expect(code).toBe(2);
    expect(stderr.trim()).toMatch(
      /^context-loader cannot start: 192\.0\.2\.1 is not an address of this machine; set HOST/,
    );
  });
});
