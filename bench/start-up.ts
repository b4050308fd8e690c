import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/helpers/processes";
import { line, percentile } from "./stats";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../node_modules/tsx/dist/esm/index.mjs", import.meta.url));
const npmCli = join(process.execPath, "..", "..", "lib", "node_modules", "npm", "bin", "npm-cli.js");
const ROUNDS = 5;
/** How long a started service is left alone before its RSS is read. */
const IDLE_MS = 3000;
const POLL_MS = 20;

/** How the service is started: the compiled build as the image runs it, `npm start` (build, then that), and tsx. */
const WAYS: { name: string; args: string[]; underNpm?: true }[] = [
  { name: "node dist/main.js (compiled)", args: ["--enable-source-maps", "dist/main.js"] },
  { name: "npm start (esbuild, then the above)", args: [npmCli, "start", "--silent"], underNpm: true },
  { name: "node --import tsx src/main.ts", args: ["--import", tsxLoader, "src/main.ts"] },
];

interface Sample {
  readyMs: number;
  /** CPU time (user + system) the process and its children had used when /readyz first answered 200. */
  cpuMs: number;
  rssMiB: number;
}

/**
 * Issue 32: the time from spawning the service to a 200 from /readyz (wall clock, and the CPU time
 * it took, which a busy machine distorts less), and its resident memory after
 * IDLE_MS idle, for the compiled build (`npm run build`, run by plain node), `npm start` (which
 * rebuilds first when esbuild is installed) and tsx compiling src/ at start, as `npm start` did.
 * Rounds alternate the three, so that a busy machine slows each alike. RSS is of the node process
 * that serves (npm's own process is not counted).
 */
export async function benchStartUp(): Promise<void> {
  execFileSync(process.execPath, [npmCli, "run", "-s", "build"], { cwd: root, stdio: "inherit" });
  const samples = new Map<string, Sample[]>(WAYS.map((w) => [w.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const way of WAYS) samples.get(way.name)!.push(await startOnce(way.args, way.underNpm === true));
  }
  const median = (name: string, key: keyof Sample) =>
    percentile(
      samples.get(name)!.map((s) => s[key]),
      50,
    );
  for (const way of WAYS) {
    const all = samples.get(way.name)!;
    line(
      way.name,
      `ready in ${median(way.name, "readyMs").toFixed(0)} ms median (${all.map((s) => s.readyMs.toFixed(0)).join(", ")}), ` +
        `CPU ${median(way.name, "cpuMs").toFixed(0)} ms; idle RSS ${median(way.name, "rssMiB").toFixed(0)} MiB median`,
    );
  }
  const [compiled, , tsx] = WAYS.map((w) => w.name) as [string, string, string];
  line(
    "compiled vs tsx",
    `start-up ×${(median(tsx, "readyMs") / median(compiled, "readyMs")).toFixed(2)} faster ` +
      `(CPU ×${(median(tsx, "cpuMs") / median(compiled, "cpuMs")).toFixed(2)}), ` +
      `idle RSS ${(median(tsx, "rssMiB") - median(compiled, "rssMiB")).toFixed(0)} MiB less (${ROUNDS} rounds of each, alternated)`,
  );
}

async function startOnce(args: string[], underNpm: boolean): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), "start-up-"));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      SQLITE_PATH: join(dir, "m.sqlite"),
    },
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (performance.now() - started > 60_000) throw new Error(`${args.join(" ")} was not ready within 60 s`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const readyMs = performance.now() - started;
    const cpuMs = cpuOfTree(child.pid!);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    return { readyMs, cpuMs, rssMiB: rssMiB(underNpm ? childrenOf(child.pid!).at(-1)! : child.pid!) };
  } finally {
    // npm start execs node in its shell: the service is npm's child; SIGTERM to npm reaches it too.
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ; 100 on every Linux Node runs on). */
const TICKS_PER_SECOND = 100;

function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
}

/**
 * CPU time of `pid`, of its children that ended (npm's build before start, counted by the kernel
 * once reaped) and of those still running (the service under npm, esbuild's service under tsx), ms.
 */
function cpuOfTree(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (in parentheses, may hold spaces): utime, stime, cutime, cstime are the 12th to 15th.
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number);
  const ticks = f[11]! + f[12]! + f[13]! + f[14]!;
  return (ticks * 1000) / TICKS_PER_SECOND + childrenOf(pid).reduce((sum, c) => sum + cpuOfTree(c), 0);
}

/** VmRSS of `pid` (the node process serving: for npm start, npm's child), MiB. */
function rssMiB(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  return kib / 1024;
}
