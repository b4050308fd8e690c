import { describe, expect, it } from "vitest";
import { TimeSlice } from "../../src/core/time-slice";

/** Spins `ms` on the clock, as synchronous work does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("TimeSlice: slices of every piece of work share one budget per turn of the event loop", () => {
  it("runs twenty concurrent pieces at about one budget per turn, not one slice each, and every piece finishes", async () => {
    let turn = 0;
    const ticker = setInterval(() => turn++, 1);
    const workPerTurn = new Map<number, number>();
    const piece = async () => {
      const slice = new TimeSlice();
      for (let step = 0; step < 60; step++) {
        busy(0.25);
        workPerTurn.set(turn, (workPerTurn.get(turn) ?? 0) + 0.25);
        const wait = slice.pace();
        if (wait) await wait;
      }
      return true;
    };
    // Twenty calls in progress at once, each 15 ms of work, as kn_search calls of one MCP batch.
    const done = await Promise.all(Array.from({ length: 20 }, () => new Promise((r) => setImmediate(r)).then(piece)));
    clearInterval(ticker);
    expect(done.every(Boolean)).toBe(true);
    const turns = [...workPerTurn.values()].sort((a, b) => a - b);
    const median = turns[Math.floor(turns.length / 2)]!;
    // One slice per piece per turn was 20 × 5 ms = 100 ms of work in a turn; the shared budget is 10 ms
    // (plus 1 ms for each piece that must move). A loaded machine stretches some turns, not the median.
    expect(median).toBeLessThan(40);
    expect(turns.length).toBeGreaterThan(8);
  });

  it("lets a lone piece run its whole slice before it yields, in a turn nothing else spent", async () => {
    // The budget is wall time: a process descheduled mid-slice may find its turn spent early. Of five tries,
    // each in a fresh turn, at least one runs undisturbed.
    const runs: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      const slice = new TimeSlice(5);
      const started = performance.now();
      while (slice.pace() === undefined && performance.now() - started < 1000) busy(0.1);
      runs.push(performance.now() - started);
    }
    expect(Math.max(...runs)).toBeGreaterThanOrEqual(5);
  });
});
