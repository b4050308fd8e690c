import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

/** Runs src/main.ts to its end; its exit code and what it wrote to stderr. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), "start-up-"));
  const child = spawn(process.execPath, ["--import", tsxLoader, "src/main.ts"], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: "warn", SQLITE_PATH: join(dir, "memories.sqlite"), ...env },
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

describe("start-up problems are one line and exit code 2", () => {
  let running: ServiceProcess;
  beforeAll(async () => {
    running = await startServiceProcess({});
  });
  afterAll(() => running.destroy());

  it("says the port is in use and which setting to change, without a stack trace", async () => {
    const { code, stderr } = await runMain({ PORT: String(running.port), HOST: "127.0.0.1" });
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(
      `context-loader cannot start: 127.0.0.1:${running.port} is already in use; stop what listens there or set PORT to another port`,
    );
  });

  it("says a HOST that is no address of this machine is the setting to fix", async () => {
    const { code, stderr } = await runMain({ PORT: "0", HOST: "192.0.2.1" });
    expect(code).toBe(2);
    expect(stderr.trim()).toMatch(
      /^context-loader cannot start: 192\.0\.2\.1 is not an address of this machine; set HOST/,
    );
  });
});
