import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ; 100 on every Linux Node runs on). */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) process `pid` has used so far, ms, from /proc (10 ms resolution). */
export function cpuMsOf(pid: number): number {
  // Fields after the command name (which is in parentheses and may hold spaces): utime is the 12th, stime the 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Now on the clock of V8's CPU profiles (CLOCK_MONOTONIC, as process.hrtime), µs. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
