/**
 * Long synchronous work (a scan of many rows, the words of a long
 * conversation) done in slices: between two slices the event loop runs, so
 * health checks, timers and other calls wait at most about one slice, not for
 * the whole work. Only code already on an async path can use it.
 */

/** How long work runs before it lets the event loop run: a health check needs a few turns of the loop, each waiting up to one slice, and must answer within 100 ms. */
export const DEFAULT_SLICE_MS = 5;

/** Resolves after the event loop has handled what was waiting (I/O, timers), via setImmediate. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One piece of work's clock: call `pace()` at the boundaries of small steps and await what it returns. */
export class TimeSlice {
  private started = performance.now();

  constructor(private readonly sliceMs = DEFAULT_SLICE_MS) {}

  /** Undefined while the slice lasts (no await needed, nothing allocated); else a promise that yields once. */
  pace(): Promise<void> | undefined {
    if (performance.now() - this.started < this.sliceMs) return undefined;
    return yieldToEventLoop().then(() => {
      this.started = performance.now();
    });
  }
}
