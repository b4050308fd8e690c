/**
 * npm run bench -- unary [--profile] [--rounds=10] [--seconds=2]
 *
 * Handoff over gRPC against the service (src/main.ts as `npm start` runs it,
 * logging to a file) and against a bare connect-node server answering the same
 * method with the same reply (bench/unary/bare-server.ts: decode, validate,
 * handoff, encode, nothing of ours around it), each in a process of its own;
 * the client (@grpc/grpc-js, 32 calls in flight) in this one. What it shows is
 * what our listener, authentication, RPC handler, interceptors (trace id,
 * identity, log line, metrics) and admission control cost per call.
 *
 * After a warm-up, `rounds` rounds of `seconds` each, alternating which server
 * goes first, so drift on a shared machine falls on both alike; it prints each
 * round, the medians and their spread, the server CPU per call, and the ratio
 * (the median of the rounds' ratios) against the target of 0.9.
 *
 * `--profile` starts both servers with --cpu-prof (profiles in
 * bench/profiles/unary-<time>/) and prints the self time per call of the
 * busiest functions and of each area of code during the measured rounds only.
 * Loopback only; it stops the two processes it started (by their pid) when
 * done, on Ctrl-C, or after a time bound.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "./load/server-process";
import { line } from "./stats";
import { type BareProcess, startBareProcess } from "./unary/bare-process";
import { CONCURRENCY, type HandoffClient, handoffClient } from "./unary/client";
import { monotonicMicros } from "./unary/proc";
import { printProfiles, saveMeasured, type Window } from "./unary/profile";

const TARGET = 0.9;
const WARM_UP_MS = 5_000;

const option = (name: string, fallback: number) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};

interface Side {
  label: string;
  client: HandoffClient;
  cpuMs(): number;
  rates: number[];
  cpuPerCallUs: number[];
  windows: Window[];
  calls: number;
}

export async function benchUnary(): Promise<void> {
  const rounds = option("rounds", 10);
  const roundMs = option("seconds", 2) * 1000;
  const profile = process.argv.includes("--profile");
  const profileDir = join("bench", "profiles", `unary-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  const profArgs = (name: string) => {
    if (!profile) return [];
    mkdirSync(join(profileDir, name), { recursive: true });
    return ["--cpu-prof", "--cpu-prof-dir", join(profileDir, name)];
  };

  let service: ServerProcess | undefined;
  let bare: BareProcess | undefined;
  const stopAll = () => Promise.all([service?.stop(), bare?.stop()]);
  // Bounded: whatever happens, the two processes are gone and this one ends within the bound.
  const boundMs = 120_000 + WARM_UP_MS * 2 + rounds * roundMs * 2;
  const watchdog = setTimeout(() => {
    process.stderr.write(`unary: not done within ${boundMs / 1000} s; stopping\n`);
    void stopAll().finally(() => process.exit(1));
  }, boundMs);
  watchdog.unref();
  const onSignal = () => void stopAll().finally(() => process.exit(130));
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  const sides: Side[] = [];
  try {
    // One after the other, so a failure to start leaves nothing running that stopAll would not know of.
    service = await startServerProcess({}, profArgs("service"));
    bare = await startBareProcess(profArgs("bare"));
    const ours: Side = side("the service", handoffClient(service.port), service.cpuMs);
    const theirs: Side = side("bare connect-node", handoffClient(bare.port), bare.cpuMs);
    sides.push(ours, theirs);
    line(
      "unary: setup",
      `the service (src/main.ts, pid ${service.pid}) and bare connect-node (pid ${bare.pid}) in their own processes; ` +
        `grpc-js client here, ${CONCURRENCY} in flight; ${rounds} rounds of ${roundMs / 1000} s, alternating${profile ? "; --cpu-prof on" : ""}`,
    );
    for (const s of sides) await s.client.run(WARM_UP_MS);

    const clientCpu = process.cpuUsage();
    const clientStarted = performance.now();
    for (let r = 0; r < rounds; r++) {
      for (const s of r % 2 === 0 ? [ours, theirs] : [theirs, ours]) await measure(s, roundMs);
      const i = ours.rates.length - 1;
      line(
        `unary: round ${r + 1}`,
        `the service ${ours.rates[i]!.toFixed(0)} calls/s, bare ${theirs.rates[i]!.toFixed(0)} calls/s, ratio ${(ours.rates[i]! / theirs.rates[i]!).toFixed(2)}`,
      );
    }
    const used = process.cpuUsage(clientCpu);
    const clientShare = (used.user + used.system) / 1000 / (performance.now() - clientStarted);

    for (const s of [theirs, ours]) {
      line(
        `unary: Handoff over gRPC, ${s.label}`,
        `median ${median(s.rates).toFixed(0)} calls/s (${range(s.rates, 0)}), server CPU ${median(s.cpuPerCallUs).toFixed(0)} µs per call (${range(s.cpuPerCallUs, 0)})`,
      );
    }
    const ratios = ours.rates.map((r, i) => r / theirs.rates[i]!);
    const ratio = median(ratios);
    line(
      "unary: the service / bare connect-node",
      `${ratio.toFixed(2)}x (rounds ${range(ratios, 2)}; CPU per call ${(median(theirs.cpuPerCallUs) / median(ours.cpuPerCallUs)).toFixed(2)}x) | target >= ${TARGET}x: ${ratio >= TARGET ? "met" : "NOT met"}`,
    );
    line("unary: client (grpc-js, this process)", `${(clientShare * 100).toFixed(0)} % of a core during the rounds`);
  } finally {
    clearTimeout(watchdog);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    for (const s of sides) s.client.close();
    await stopAll();
  }
  if (profile) {
    const measured = sides.map((s, i) => ({
      name: i === 0 ? "service" : "bare",
      label: s.label,
      calls: s.calls,
      windows: s.windows,
    }));
    saveMeasured(profileDir, measured);
    printProfiles(profileDir, measured);
    line("unary profile: written to", `${profileDir} (npx tsx bench/unary/profile.ts ${profileDir} prints this again)`);
  }
}

function side(label: string, client: HandoffClient, cpuMs: () => number): Side {
  return { label, client, cpuMs, rates: [], cpuPerCallUs: [], windows: [], calls: 0 };
}

async function measure(s: Side, ms: number): Promise<void> {
  const cpu = s.cpuMs();
  const from = monotonicMicros();
  const started = performance.now();
  const calls = await s.client.run(ms);
  const elapsed = performance.now() - started;
  s.windows.push({ from, to: monotonicMicros() });
  s.rates.push(calls / (elapsed / 1000));
  s.cpuPerCallUs.push(((s.cpuMs() - cpu) * 1000) / calls);
  s.calls += calls;
}

/** The middle value; with an even count, the mean of the two middle ones. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function range(values: readonly number[], digits: number): string {
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
}
