import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { freePort } from "./processes";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

/** The service as `npm start` runs it (src/main.ts under tsx), in a child process of the test. */
export interface ServiceProcess {
  pid: number;
  port: number;
  baseUrl: string;
  /** Every JSON log line it wrote to stdout so far. */
  lines: Record<string, unknown>[];
  /** Resolves with the exit code once it exited. */
  exited: Promise<number | null>;
  /** Sends a signal to its pid. */
  signal(signal: NodeJS.Signals): void;
  /** Closes the read end of its stdout, as a log shipper that died: its next write to stdout fails (EPIPE). */
  closeOutput(): void;
  /** Stops reading its stdout, as a log shipper that hangs: once the pipe is full, its writes wait (EAGAIN). */
  pauseOutput(): void;
  /** Reads its stdout again, to the end: resolves once every line it wrote is in `lines` (after its exit). */
  readOutputToEnd(): Promise<void>;
  /** SIGKILL if still running, and removes its temporary directory. */
  destroy(): Promise<void>;
}

/**
 * Starts src/main.ts on a free loopback port with `env` (SQLite in a
 * temporary directory unless `env` names a store) and resolves once it logged
 * that it listens. `builtMain`: a compiled main.js (`npm run build`) to run
 * under plain node instead.
 */
export async function startServiceProcess(env: Record<string, string>, builtMain?: string): Promise<ServiceProcess> {
  const dir = mkdtempSync(join(tmpdir(), "service-"));
  const port = await freePort();
  const args = builtMain === undefined ? ["--import", tsxLoader, "src/main.ts"] : ["--enable-source-maps", builtMain];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      SQLITE_PATH: join(dir, "memories.sqlite"),
      DEFAULT_LANGUAGE: "en",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines: Record<string, unknown>[] = [];
  const output = createInterface({ input: child.stdout! });
  const outputEnded = new Promise<void>((resolve) => output.once("close", resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the service did not log 'listening' within 30 s")), 30_000);
    output.on("line", (text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      if (String(line["msg"]).startsWith("listening")) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => reject(new Error(`the service exited early with ${code}`)));
  });
  return {
    pid: child.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    lines,
    exited,
    signal: (signal) => child.kill(signal),
    closeOutput: () => child.stdout!.destroy(),
    pauseOutput: () => child.stdout!.pause(),
    readOutputToEnd() {
      child.stdout!.resume();
      return outputEnded;
    },
    async destroy() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs src/main.ts with `env` (LOG_LEVEL warn and SQLite in a temporary directory unless `env` says
 * otherwise) until it exits, for start-up that must fail: its exit code and what it wrote to stderr.
 * Killed after 30 s.
 */
export function runMainToExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
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
