import { HANDOVER_MS, yieldToEventLoop } from "../core/time-slice";
import { Turns } from "../core/turns";
import { text } from "../errors/text";
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
 * How long one turn of the event loop may spend starting calls, ms. Past it,
 * calls wait for the next turn, so the loop also accepts connections, reads
 * and writes sockets, answers probes and fires timers at least this often
 * (plus the length of one call).
 */
const SLICE_MS = HANDOVER_MS;

/**
 * Admission control: at most `maxInFlight` calls in progress in this process,
 * and calls started for at most SLICE_MS in one turn of the event loop; the
 * next ones wait, at most `maxQueued` of them and each at most `maxWaitMs`,
 * then are refused RESOURCE_EXHAUSTED with a time to retry after. A waiting
 * call whose caller gives up (deadline, cancel, shutdown) leaves the queue
 * with the caller's reason.
 *
 * Waiting is fair between callers (accounts): each caller has its own
 * first-in first-out queue and the queues take turns, one call each, so a
 * caller with a thousand calls waiting (a flood, an MCP batch) delays another
 * caller's call by one of its calls, not by all of them; and one caller may
 * hold at most half of `maxQueued`, so it cannot fill the queue for everyone.
 *
 * Why both bounds. Most calls never wait for I/O (the embedded engine,
 * SQLite and the in-process session store answer synchronously), so they run
 * start to end inside the turn that read them: a bound on calls in progress
 * alone never fills, and one turn runs every call whose request arrived —
 * 200 clients made each turn take half a second, and a call that needed a few
 * turns waited that long each time (the 30-second silences of issue 14). The
 * time slice bounds each turn instead; the count bounds calls that do wait
 * (platform, LLM, PostgreSQL, Redis), which hold a slot while they wait.
 * The waiting and the turns are core/turns.ts's, as the listener's ingress.
 */
export class Admission {
  private running = 0;
  private readonly turns = new Turns<Waiter>(
    SLICE_MS,
    (waiter) => {
      this.running++;
      waiter.admit(this.releaser());
    },
    () => this.settings.maxInFlight - this.running,
  );

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
    return this.turns.waiting;
  }

  /** The most calls one caller may have waiting. */
  private get perCaller(): number {
    return Math.ceil(this.settings.maxQueued / 2);
  }

  /**
   * A slot for one call: at once when one is free, nobody waits and this
   * turn's slice has time left, else after the calls before it. Rejects with
   * RESOURCE_EXHAUSTED (reason OVERLOADED, retryAfterMs set) when the queue is
   * full or the wait passes maxWaitMs, and with `signal.reason` when the
   * signal aborts first. `caller` (an account) decides whose turn it is among
   * waiting calls.
   */
  enter(signal: AbortSignal, caller: string): Promise<Release> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = this.tryEnter();
    if (now !== undefined) return Promise.resolve(now);
    if (this.turns.waiting >= this.settings.maxQueued || this.turns.waitingOf(caller) >= this.perCaller) {
      this.observer.refused("queue_full");
      return Promise.reject(this.overloaded());
    }
    const started = performance.now();
    return new Promise<Release>((resolve, reject) => {
      const leave = (reason: unknown) => {
        this.turns.remove(caller, waiter);
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        // Hundreds leave at once (their timers share a millisecond; a flood's clients hang up together), and
        // each refusal costs its protocol about a millisecond: they are answered in the turns' shared budget.
        void yieldToEventLoop().then(() => reject(reason));
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
      this.turns.push(caller, waiter);
    });
  }

  /**
   * A slot at once, when one is free, nobody waits and no call has started
   * in this turn yet (what enter does first); else undefined, and the call
   * must enter() to wait. Saves the common case a promise and a turn of the
   * microtask queue.
   *
   * Only the turn's first call: calls that arrive in one read (an MCP batch,
   * many HTTP/2 streams in one packet) ask for their slots before any of
   * them has run, so the slice's clock cannot have moved yet; admitted at
   * once, a hundred of them all ran in that turn's microtasks (a 600 ms
   * turn). The others start from the pump, each seeing the time the ones
   * before it took.
   */
  tryEnter(): Release | undefined {
    if (!this.turns.startNow()) return undefined;
    this.running++;
    return this.releaser();
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.turns.wake();
    };
  }

  /** The refusal: RESOURCE_EXHAUSTED, retry after about one queue wait (jittered so retries do not arrive together). */
  private overloaded(): ToolError {
    const retryAfterMs = Math.ceil((this.settings.maxWaitMs * (1 + Math.random())) / 100) * 100;
    return new ToolError({
      code: "resource_exhausted",
      reason: "OVERLOADED",
      message: text(
        `the service is at its limit of ${this.settings.maxInFlight} calls in progress and ${this.turns.waiting} waiting; retry in ${retryAfterMs} ms`,
        `服务已达上限：${this.settings.maxInFlight} 个调用正在进行，${this.turns.waiting} 个在等待；请在 ${retryAfterMs} 毫秒后重试`,
      ),
      metadata: { retry_after_ms: String(retryAfterMs) },
      retryAfterMs,
      hint: {
        message: text(
          `Retry the same call after ${retryAfterMs} ms (or on another replica); the call was not started, so retrying is safe.`,
          `${retryAfterMs} 毫秒后（或在另一个副本上）重试同一调用；这次调用没有开始执行，重试是安全的。`,
        ),
      },
    });
  }
}
