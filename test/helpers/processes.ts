import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * Redis and PostgreSQL servers a fault test starts for itself, on free
 * loopback ports, and stops and starts again by their own process ids: never
 * the shared instances on 6379 and 5432. Each is removed when the test ends.
 */

/** A TCP port nothing listens on now (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port; rejects after `ms`. */
async function listening(port: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: "127.0.0.1" });
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface RedisProcess {
  port: number;
  url: string;
  /** Stops it (SIGTERM to its pid; SIGKILL after 5 s); nothing it held survives, as with `--save ""`. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/** A redis-server of the test's own, without persistence. */
export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "no"],
      { stdio: "ignore" },
    );
    await listening(port, 5000);
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((r) => running.once("exit", r));
    running.kill("SIGTERM");
    const timer = setTimeout(() => running.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, stop, start };
}

export interface PostgresProcess {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** Stops the postmaster this test started (pg_ctl, by its pid file): "immediate" is a crash (WAL recovery at the next start). */
  stop(mode: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** Stops it if it runs and removes its data directory. */
  destroy(): Promise<void>;
}

/** The directory of PostgreSQL's programs (initdb, pg_ctl), newest version first; undefined when none is installed. */
export function postgresBin(): string | undefined {
  const base = "/usr/lib/postgresql";
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(base, v, "bin")).find((dir) => existsSync(join(dir, "pg_ctl")));
}

/**
 * A PostgreSQL cluster of the test's own: initdb in a temporary directory,
 * trust authentication on loopback, its socket in that directory. PostgreSQL
 * refuses to run as root, so as root its programs run as the postgres user.
 */
export async function startPostgres(): Promise<PostgresProcess> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl)");
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pg-fault-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
  }
  // Not execFileSync: the test's clients keep calling while PostgreSQL stops and starts.
  const run = async (program: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]]
      : [join(bin, program), args];
    await promisify(execFile)(file, argv, { timeout: 60_000 });
  };
  await run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  let running = false;
  const start = async () => {
    await run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]);
    running = true;
  };
  const stop = async (mode: "fast" | "immediate") => {
    if (!running) return;
    await run("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "30", "stop"]);
    running = false;
  };
  await start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    async destroy() {
      try {
        await stop("immediate");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
