import { ToolError } from "../errors/tool-error";

/** How many calls run at once, how many may wait, and for how long (ADMISSION_* settings). */
export interface AdmissionSettings {
  /** Calls in progress at most. */
  maxInFlight: number;
  /** Calls waiting for a slot at most; past it a call is refused at once. */
  maxQueued: number;
  /** How long a call may wait for a slot before it is refused, ms. */
  maxWaitMs: number;
}

/** What the metrics read: the state now, and each refusal and wait as it happens. */
export interface AdmissionObserver {
  refused(reason: "queue_full" | "waited_too_long"): void;
  waited(ms: number): void;
}

/** Gives back the slot a call held; calling it again does nothing. */
export type Release = () => void;

interface Waiter {
  admit(release: Release): void;
}

/**
 * Admission control: at most `maxInFlight` calls in progress in this process;
 * the next ones wait in one first-in first-out queue, at most `maxQueued` of
 * them and each at most `maxWaitMs`, then are refused RESOURCE_EXHAUSTED with
 * a time to retry after. A waiting call whose caller gives up (deadline,
 * cancel, shutdown) leaves the queue with the caller's reason.
 *
 * Why: the event loop runs every call that has work at once, so without a
 * bound each turn of the loop takes as long as all the calls in progress need
 * together, and a call that needs a few turns waits that long each time (seen
 * as 30-second silences at 200 clients). With the bound, a turn does the work
 * of at most maxInFlight calls, the others wait their turn in arrival order,
 * and overload shows as quick refusals that say when to come back.
 */
export class Admission {
  private running = 0;
  /** The waiting calls, first come first: a Set keeps insertion order and lets one leave from anywhere at once. */
  private readonly queue = new Set<Waiter>();

  constructor(
    private readonly settings: AdmissionSettings,
    private readonly observer: AdmissionObserver,
  ) {}

  /** Calls in progress now. */
  get inFlight(): number {
    return this.running;
  }

  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.queue.size;
  }

  /**
   * A slot for one call: at once when one is free and nobody waits, else
   * after the calls before it. Rejects with RESOURCE_EXHAUSTED (reason
   * OVERLOADED, retryAfterMs set) when the queue is full or the wait passes
   * maxWaitMs, and with `signal.reason` when the signal aborts first.
   */
  enter(signal: AbortSignal): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.running < this.settings.maxInFlight && this.queue.size === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.queue.size >= this.settings.maxQueued) {
      this.observer.refused("queue_full");
      return Promise.reject(this.overloaded());
    }
    const started = performance.now();
    return new Promise<Release>((resolve, reject) => {
      const leave = (reason: unknown) => {
        this.queue.delete(waiter);
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        reject(reason);
      };
      const onAbort = () => leave(signal.reason);
      const timer = setTimeout(() => {
        this.observer.refused("waited_too_long");
        leave(this.overloaded());
      }, this.settings.maxWaitMs);
      const waiter: Waiter = {
        admit: (release) => {
          clearTimeout(timer);
          signal.removeEventListener("abort", onAbort);
          this.observer.waited(performance.now() - started);
          resolve(release);
        },
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.add(waiter);
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.next();
    };
  }

  /** A slot came free: the longest-waiting call takes it, or it goes back when nobody waits. */
  private next(): void {
    const [first] = this.queue;
    if (first === undefined) {
      this.running--;
      return;
    }
    this.queue.delete(first);
    first.admit(this.releaser());
  }

  /** The refusal: RESOURCE_EXHAUSTED, retry after about one queue wait (jittered so retries do not arrive together). */
  private overloaded(): ToolError {
    const retryAfterMs = Math.ceil((this.settings.maxWaitMs * (1 + Math.random())) / 100) * 100;
    return new ToolError({
      code: "resource_exhausted",
      reason: "OVERLOADED",
      message: `the service is at its limit of ${this.settings.maxInFlight} calls in progress and ${this.queue.size} waiting; retry in ${retryAfterMs} ms`,
      metadata: { retry_after_ms: String(retryAfterMs) },
      retryAfterMs,
      hint: {
        message: `Retry the same call after ${retryAfterMs} ms (or on another replica); the call was not started, so retrying is safe.`,
      },
    });
  }
}
