import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const mainJs = join(root, "dist", "main.js");
let built = false;

/** `npm run build`, once per bench process: the benches run the compiled service, as `npm start` does. */
function buildOnce(): void {
  if (built) return;
  const run = spawnSync("npm", ["run", "-s", "build"], { cwd: root, stdio: "inherit" });
  if (run.status !== 0) throw new Error(`npm run build failed (exit ${run.status ?? run.signal})`);
  built = true;
}
/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ; 100 on every Linux Node runs on). */
const TICKS_PER_SECOND = 100;

/** The real service in a child process, as `npm start` runs it, with its resources read from /proc. */
export interface ServerProcess {
  pid: number;
  port: number;
  baseUrl: string;
  /** Resident set size now, MiB. */
  rssMiB(): number;
  /** CPU time (user + system) the process has used so far, ms. */
  cpuMs(): number;
  /** GET /metrics as text. */
  metrics(): Promise<string>;
  /** SIGTERM, then waits for the exit (SIGKILL after `waitMs`); resolves with the exit code. */
  stop(waitMs?: number): Promise<number | null>;
  /** Where its log lines went. */
  logPath: string;
}

/**
 * Builds dist/ (once) and starts dist/main.js as `npm start` does (with source maps), on a free
 * loopback port with the defaults plus `env`
 * (SQLite in a temporary directory, removed on stop), logs to a file there,
 * and resolves once /readyz answers 200. `nodeArgs` go before the script
 * (for example --cpu-prof).
 */
export async function startServerProcess(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), "load-"));
  const port = await freePort();
  const logPath = join(dir, "server.log");
  const out = openSync(logPath, "a");
  buildOnce();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, "--enable-source-maps", mainJs], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      SQLITE_PATH: join(dir, "memories.sqlite"),
      ...env,
    },
    stdio: ["ignore", out, out],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  // A benchmark that fails or is interrupted does not leave its server running.
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}; see ${logPath}`);
    const ready = await fetch(`${baseUrl}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the server was not ready within 30 s; see ${logPath}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = child.pid!;
  return {
    pid,
    port,
    baseUrl,
    logPath,
    rssMiB: () => {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
      return kib / 1024;
    },
    cpuMs: () => {
      // Fields after the command name (which is in parentheses and may hold spaces): utime is the 12th, stime the 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    },
    metrics: () => fetch(`${baseUrl}/metrics`).then((r) => r.text()),
    async stop(waitMs = 15_000) {
      if (child.exitCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), waitMs);
      const code = await exited;
      clearTimeout(timer);
      process.off("exit", orphaned);
      rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

/** A TCP port nothing listens on now (the kernel's pick). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
