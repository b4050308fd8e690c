/**
 * npm run bench -- unary [--profile] [--rounds=10] [--seconds=2]
 *
 * Handoff over gRPC against the service (dist/main.js as `npm start` runs it,
 * logging to a file), against the same service with tracing on (exporting
 * OTLP/HTTP to a sink on loopback in this process, bench/unary/otlp-sink.ts),
 * and against a bare connect-node server answering the same method with the
 * same reply (bench/unary/bare-server.ts: decode, validate, handoff, encode,
 * nothing of ours around it), each in a process of its own; the client
 * (@grpc/grpc-js, 32 calls in flight, each with a sampled traceparent) in this
 * one. What it shows is what our listener, authentication, RPC handler,
 * interceptors (trace id, identity, log line, metrics) and admission control
 * cost per call, and what tracing on adds to that.
 *
 * After a warm-up, `rounds` rounds of `seconds` each per server, the order
 * rotating from round to round, so drift on a shared machine falls on all
 * alike; it prints each round, the medians and their spread, the server CPU
 * per call, the ratios (the median of the rounds' ratios) — tracing off
 * against bare and the target of 0.9, tracing on against bare and against
 * tracing off — and the spans the sink received per call of the traced
 * service (after it stopped, so its last batch is in).
 *
 * `--profile` starts the servers with --cpu-prof (profiles in
 * bench/profiles/unary-<time>/) and prints the self time per call of the
 * busiest functions and of each area of code during the measured rounds only:
 * the service beside bare, then tracing on beside tracing off.
 * Loopback only; it stops the processes it started (by their pid) when done,
 * on Ctrl-C, or after a time bound.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type ServerProcess, startServerProcess } from "./load/server-process";
import { line } from "./stats";
import { type BareProcess, startBareProcess } from "./unary/bare-process";
import { CONCURRENCY, type HandoffClient, handoffClient } from "./unary/client";
import { type OtlpSink, startOtlpSink } from "./unary/otlp-sink";
import { monotonicMicros } from "./unary/proc";
import { printPairs, saveMeasured, type Window } from "./unary/profile";

const TARGET = 0.9;
const WARM_UP_MS = 5_000;

/** The environment variables that turn tracing on; the untraced service runs without them whatever this process has. */
const UNTRACED = {
  OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
} as unknown as Record<string, string>; // spawn leaves out a variable whose value is undefined

const option = (name: string, fallback: number) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
};

interface Side {
  /** The profile's folder under the run's folder. */
  name: string;
  label: string;
  client: HandoffClient;
  cpuMs(): number;
  rates: number[];
  cpuPerCallUs: number[];
  windows: Window[];
  /** Calls answered in the measured rounds. */
  calls: number;
  /** Calls answered in all, warm-up included. */
  allCalls: number;
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

  let sink: OtlpSink | undefined;
  let service: ServerProcess | undefined;
  let traced: ServerProcess | undefined;
  let bare: BareProcess | undefined;
  const stopAll = () => Promise.all([service?.stop(), traced?.stop(), bare?.stop()]);
  // Bounded: whatever happens, the processes are gone and this one ends within the bound.
  const boundMs = 120_000 + WARM_UP_MS * 3 + rounds * roundMs * 3;
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
    sink = await startOtlpSink();
    // One after the other, so a failure to start leaves nothing running that stopAll would not know of.
    service = await startServerProcess(UNTRACED, profArgs("service"));
    traced = await startServerProcess(
      { ...UNTRACED, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_SERVICE_NAME: "context-loader-bench" },
      profArgs("traced"),
    );
    bare = await startBareProcess(profArgs("bare"));
    const ours = side("service", "the service", handoffClient(service.port), service.cpuMs);
    const on = side("traced", "tracing on", handoffClient(traced.port), traced.cpuMs);
    const theirs = side("bare", "bare connect-node", handoffClient(bare.port), bare.cpuMs);
    sides.push(ours, on, theirs);
    line(
      "unary: setup",
      `the service (dist/main.js, pid ${service.pid}; tracing off), the service with tracing on (pid ${traced.pid}; ` +
        `OTLP/HTTP to a sink in this process) and bare connect-node (pid ${bare.pid}) in their own processes; ` +
        `grpc-js client here, ${CONCURRENCY} in flight, a sampled traceparent on every call; ` +
        `${rounds} rounds of ${roundMs / 1000} s each, order rotating${profile ? "; --cpu-prof on" : ""}`,
    );
    for (const s of sides) s.allCalls += await s.client.run(WARM_UP_MS);

    const clientCpu = process.cpuUsage();
    const clientStarted = performance.now();
    for (let r = 0; r < rounds; r++) {
      const first = r % sides.length;
      for (const s of [...sides.slice(first), ...sides.slice(0, first)]) await measure(s, roundMs);
      const i = ours.rates.length - 1;
      line(
        `unary: round ${r + 1}`,
        `the service ${ours.rates[i]!.toFixed(0)} calls/s, tracing on ${on.rates[i]!.toFixed(0)}, bare ${theirs.rates[i]!.toFixed(0)}; ` +
          `ratios ${(ours.rates[i]! / theirs.rates[i]!).toFixed(2)} (off/bare), ${(on.rates[i]! / theirs.rates[i]!).toFixed(2)} (on/bare)`,
      );
    }
    const used = process.cpuUsage(clientCpu);
    const clientShare = (used.user + used.system) / 1000 / (performance.now() - clientStarted);

    for (const s of [theirs, ours, on]) {
      line(
        `unary: Handoff over gRPC, ${s.label}`,
        `median ${median(s.rates).toFixed(0)} calls/s (${range(s.rates, 0)}), server CPU ${median(s.cpuPerCallUs).toFixed(0)} µs per call (${range(s.cpuPerCallUs, 0)})`,
      );
    }
    const offBare = ratio(ours, theirs);
    line(
      "unary: the service / bare connect-node",
      `${offBare.text} | target >= ${TARGET}x: ${offBare.median >= TARGET ? "met" : "NOT met"}`,
    );
    line("unary: tracing on / bare connect-node", ratio(on, theirs).text);
    line("unary: tracing on / tracing off", ratio(on, ours).text);
    line("unary: client (grpc-js, this process)", `${(clientShare * 100).toFixed(0)} % of a core during the rounds`);

    // Stopped first, so the traced service exports the spans still in its batch.
    await stopAll();
    const got = sink.received();
    const perCall = got.spans / on.allCalls;
    const problem = sink.problem();
    if (problem !== undefined || got.spans === 0) process.exitCode = 1;
    line(
      "unary: spans exported, tracing on",
      `${got.spans} spans in ${got.requests} OTLP/HTTP exports (${(got.bytes / 1e6).toFixed(1)} MB) for ${on.allCalls} calls: ` +
        `${perCall.toFixed(2)} per call` +
        (problem !== undefined
          ? ` | FAILED: ${problem}`
          : got.spans === 0
            ? " | FAILED: no span reached the sink, so tracing was not on"
            : ""),
    );
  } finally {
    clearTimeout(watchdog);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    for (const s of sides) s.client.close();
    await stopAll();
    await sink?.close();
  }
  if (profile) {
    const measured = sides.map((s) => ({ name: s.name, label: s.label, calls: s.calls, windows: s.windows }));
    saveMeasured(profileDir, measured);
    printPairs(profileDir, measured);
    line("unary profile: written to", `${profileDir} (npx tsx bench/unary/profile.ts ${profileDir} prints this again)`);
  }
}

function side(name: string, label: string, client: HandoffClient, cpuMs: () => number): Side {
  return { name, label, client, cpuMs, rates: [], cpuPerCallUs: [], windows: [], calls: 0, allCalls: 0 };
}

/** `a` against `b`: the median of the rounds' ratios, their range, and the CPU per call ratio (b's over a's). */
function ratio(a: Side, b: Side): { median: number; text: string } {
  const ratios = a.rates.map((r, i) => r / b.rates[i]!);
  const m = median(ratios);
  const cpu = median(b.cpuPerCallUs) / median(a.cpuPerCallUs);
  return { median: m, text: `${m.toFixed(2)}x (rounds ${range(ratios, 2)}; CPU per call ${cpu.toFixed(2)}x)` };
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
  s.allCalls += calls;
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
