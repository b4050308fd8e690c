import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { cpuMsOf } from "./proc";

const root = fileURLToPath(new URL("../..", import.meta.url));
const tsxLoader = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

/** The bare connect-node server (bare-server.ts) in a child process. */
export interface BareProcess {
  pid: number;
  port: number;
  /** CPU time (user + system) the process has used so far, ms. */
  cpuMs(): number;
  /** SIGTERM to its pid, then waits for the exit (SIGKILL after `waitMs`); resolves with the exit code. */
  stop(waitMs?: number): Promise<number | null>;
}

/** Starts bare-server.ts (`nodeArgs` before the script, e.g. --cpu-prof) and resolves once it printed its port. */
export async function startBareProcess(nodeArgs: string[] = []): Promise<BareProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [...nodeArgs, "--import", tsxLoader, "bench/unary/bare-server.ts"],
    {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const orphaned = () => child.kill("SIGKILL");
  process.once("exit", orphaned);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error("the bare connect-node server did not print its port within 30 s"));
    }, 30_000);
    createInterface({ input: child.stdout! }).once("line", (text) => {
      clearTimeout(timer);
      resolve((JSON.parse(text) as { port: number }).port);
    });
    void exited.then((code) => reject(new Error(`the bare connect-node server exited early with ${code}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    port,
    cpuMs: () => cpuMsOf(pid),
    async stop(waitMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), waitMs);
      const code = await exited;
      clearTimeout(timer);
      process.off("exit", orphaned);
      return code;
    },
  };
}
