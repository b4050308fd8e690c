import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { transformSync } from "esbuild";
import { line } from "../stats";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The parts of a V8 .cpuprofile (--cpu-prof) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time of one function over the measured windows. */
export interface Frame {
  /** "name (file:line)", the file relative to the repository ("node:…" for Node's own). */
  name: string;
  /** Who the code belongs to (see areaOf). */
  area: string;
  /** Self time, µs. */
  selfUs: number;
}

/** A window of time on the profile's clock (monotonicMicros), µs. */
export interface Window {
  from: number;
  to: number;
}

/**
 * The main thread's .cpuprofile among those --cpu-prof wrote into `dir`
 * (tsx's module loader thread writes one too): CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile.
 */
export function readProfile(dir: string): CpuProfile {
  const main = readdirSync(dir).filter((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (main.length !== 1) throw new Error(`expected one main-thread .cpuprofile in ${dir}, found ${main.length}`);
  return JSON.parse(readFileSync(join(dir, main[0]!), "utf8")) as CpuProfile;
}

/**
 * Self time per function over the samples taken inside `windows` (the rounds
 * measured: start-up and warm-up left out), largest first, with the total.
 */
export function selfTimes(profile: CpuProfile, windows: readonly Window[]): { frames: Frame[]; totalUs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, Frame>();
  let at = profile.startTime;
  let totalUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (!windows.some((w) => at >= w.from && at < w.to)) continue;
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(profile.samples[i]!)!;
    const where = fileOf(frame.url);
    const name = `${frame.functionName || "(anonymous)"}${where ? ` (${where}:${sourceLine(frame)})` : ""}`;
    const entry = self.get(name) ?? { name, area: areaOf(frame.url, frame.functionName), selfUs: 0 };
    entry.selfUs += us;
    self.set(name, entry);
    totalUs += us;
  }
  return { frames: [...self.values()].sort((a, b) => b.selfUs - a.selfUs), totalUs };
}

/** Self time per area, largest first. */
export function byArea(frames: readonly Frame[]): { area: string; selfUs: number }[] {
  const sums = new Map<string, number>();
  for (const f of frames) sums.set(f.area, (sums.get(f.area) ?? 0) + f.selfUs);
  return [...sums].map(([area, selfUs]) => ({ area, selfUs })).sort((a, b) => b.selfUs - a.selfUs);
}

const maps = new Map<string, SourceMap | undefined>();

/**
 * The line in the source file of a frame of TypeScript that tsx compiled: tsx
 * runs esbuild with minifyWhitespace and keepNames, so the code V8 runs is one
 * line; compiled again here with the same options, its source map gives the
 * line. Other files: V8's line.
 */
function sourceLine(frame: { url: string; lineNumber: number; columnNumber: number }): number {
  if (!frame.url.startsWith("file://") || !/\.[cm]?ts$/.test(frame.url)) return frame.lineNumber + 1;
  const path = fileURLToPath(frame.url);
  if (!maps.has(path)) {
    try {
      const out = transformSync(readFileSync(path, "utf8"), {
        loader: "ts",
        sourcefile: path,
        sourcemap: "external",
        minifyWhitespace: true,
        keepNames: true,
        target: `node${process.versions.node}`,
        format: "esm",
      });
      maps.set(path, new SourceMap(JSON.parse(out.map)));
    } catch {
      maps.set(path, undefined);
    }
  }
  const entry = maps.get(path)?.findEntry(frame.lineNumber, frame.columnNumber);
  return entry && "originalLine" in entry ? entry.originalLine + 1 : frame.lineNumber + 1;
}

function fileOf(url: string): string {
  if (url === "") return "";
  if (url.startsWith("node:")) return url;
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  // A package by its name wherever node_modules is (a copy of the tree may link to this one's).
  const packages = path.lastIndexOf("/node_modules/");
  if (packages !== -1) return path.slice(packages + "/node_modules/".length);
  return relative(root, path);
}

/**
 * Whose code a frame is: ours (src/server, src/…), generated code, the
 * libraries by package, Node's own JavaScript, or V8's (garbage collector,
 * native code, idle).
 */
export function areaOf(url: string, functionName: string): string {
  if (url === "") {
    if (functionName === "(idle)") return "idle";
    if (functionName === "(garbage collector)") return "garbage collector";
    return "V8 and native (program, builtins)";
  }
  if (url.startsWith("node:")) return "node (http2, streams, timers)";
  const file = fileOf(url);
  if (file.startsWith("src/server/")) return "ours: src/server";
  if (file.startsWith("src/")) return `ours: ${file.split("/").slice(0, 2).join("/")}`;
  if (file.startsWith("gen/")) return "gen";
  const pkg = /^(@[^/]+\/[^/]+|[^/]+)/.exec(file)?.[1] ?? file;
  return pkg;
}

/** What was measured of one server: its calls and the windows of its rounds (saved as measured.json beside the profiles). */
export interface Measured {
  /** "service" or "bare": the profile's folder under the run's folder. */
  name: string;
  label: string;
  calls: number;
  windows: Window[];
}

/** Frames listed per table. */
const TOP = 15;

/** Writes what printProfiles needs besides the profiles, so a run can be read again later. */
export function saveMeasured(dir: string, sides: readonly Measured[]): void {
  writeFileSync(join(dir, "measured.json"), `${JSON.stringify(sides, null, 2)}\n`);
}

/**
 * Prints, per server, the busy time per call (idle left out) during the
 * measured rounds; then per area of code and per function, the first server
 * (the service) beside the second (bare connect-node, or the service without
 * tracing), µs per call: the areas, the first's busiest functions, its busiest
 * functions of our code, and the functions where it spends the most more than
 * the second.
 */
export function printProfiles(dir: string, pair: readonly [Measured, Measured]): void {
  const [ours, bare] = pair.map((s) => {
    const { frames } = selfTimes(readProfile(join(dir, s.name)), s.windows);
    const busy = frames.filter((f) => f.area !== "idle");
    const perCall = new Map(busy.map((f) => [f.name, f.selfUs / s.calls]));
    const busyUs = busy.reduce((sum, f) => sum + f.selfUs, 0) / s.calls;
    line(
      `unary profile: ${s.label}`,
      `${s.calls} calls, ${busyUs.toFixed(0)} µs busy per call (samples in the rounds, idle left out)`,
    );
    return { s, busy, perCall, busyUs };
  }) as [Side, Side];
  type Side = { s: Measured; busy: Frame[]; perCall: Map<string, number>; busyUs: number };
  const us = (v: number | undefined) => (v ?? 0).toFixed(1).padStart(6);
  const areas = (side: Side) => new Map(byArea(side.busy).map((a) => [a.area, a.selfUs / side.s.calls]));
  const [oursAreas, bareAreas] = [areas(ours), areas(bare)];
  const against = `${ours.s.label}, ${bare.s.label}`;
  line("unary profile: per area", `µs per call: ${against}, difference`);
  for (const [area, v] of oursAreas)
    line(`  ${area}`, `${us(v)} ${us(bareAreas.get(area))} ${signed(v - (bareAreas.get(area) ?? 0))}`);
  const table = (title: string, frames: readonly Frame[]) => {
    line(`unary profile: ${title}`, `µs per call: ${against}, function`);
    for (const f of frames.slice(0, TOP))
      line(`  ${f.area}`, `${us(ours.perCall.get(f.name))} ${us(bare.perCall.get(f.name))}  ${f.name}`);
  };
  table(`${ours.s.label}, busiest`, ours.busy);
  table(
    `${ours.s.label}, busiest of our code`,
    ours.busy.filter((f) => f.area.startsWith("ours")),
  );
  const more = [...ours.busy].sort(
    (a, b) =>
      b.selfUs / ours.s.calls -
      (bare.perCall.get(b.name) ?? 0) -
      (a.selfUs / ours.s.calls - (bare.perCall.get(a.name) ?? 0)),
  );
  table(`${ours.s.label}, most more than ${bare.s.label}`, more);
}

/**
 * The tables of a run: the service beside bare connect-node, then (a run with
 * the traced service too) the service with tracing on beside tracing off.
 */
export function printPairs(dir: string, sides: readonly Measured[]): void {
  const named = (name: string) => sides.find((s) => s.name === name);
  const [service, bare, traced] = [named("service"), named("bare"), named("traced")];
  if (service && bare) printProfiles(dir, [service, bare]);
  if (traced && service) printProfiles(dir, [traced, service]);
}

function signed(v: number): string {
  return `${v >= 0 ? "+" : ""}${v.toFixed(1)}`.padStart(7);
}

// npx tsx bench/unary/profile.ts bench/profiles/unary-<time>: the tables of a run with --profile, again.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = process.argv[2];
  if (!dir) throw new Error("usage: npx tsx bench/unary/profile.ts bench/profiles/unary-<time>");
  printPairs(dir, JSON.parse(readFileSync(join(dir, "measured.json"), "utf8")) as Measured[]);
}
