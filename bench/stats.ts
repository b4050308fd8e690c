/** Small helpers shared by the benchmarks: timing and the printed lines. */

/** Runs `fn` `n` times and returns each run's time in microseconds. */
export async function timeEach(n: number, fn: (i: number) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn(i);
    out.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return out;
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** "12.3 µs", "4.56 ms", "1.23 s". */
export function formatMicros(us: number): string {
  if (us < 1000) return `${us.toFixed(1)} µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/** One result line: a fixed-width label, then the facts. */
export function line(label: string, facts: string): void {
  process.stdout.write(`${label.padEnd(44)} ${facts}\n`);
}
