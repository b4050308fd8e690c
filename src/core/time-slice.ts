/**
 * Long synchronous work (a scan of many rows, the words of a long
 * conversation) done in slices: between two slices the event loop runs, so
 * health checks, timers and other calls wait at most about one slice, not for
 * the whole work. Only code already on an async path can use it.
 *
 * The slices of every piece of work in the process share one clock per turn
 * of the event loop. Each piece timing only itself let sixty-four calls in
 * progress run five milliseconds each in the same turn: a probe waited for
 * all of them. Now a piece yields once the turn's budget (TURN_MS, counted
 * from the first look at the clock in the turn) is spent, and pieces waiting
 * to resume take turns in the order they yielded.
 */

/** How long work runs before it lets the event loop run: a health check needs a few turns of the loop, each waiting up to one slice, and must answer within 100 ms. */
export const DEFAULT_SLICE_MS = 5;
/**
 * How long one turn of the event loop may spend handing requests to the
 * handlers (server/ingress.ts) and, apart, starting calls
 * (server/admission.ts), ms. Short because the loop takes one new
 * connection per turn: libuv (1.45 on, libuv/libuv#3696) accepts once per
 * poll and leaves the rest of the kernel's queue for the next turn. With
 * 20 ms turns, 1,200 connections of one flooding client took about 3 s to
 * accept, and another caller's new connection waited behind them for 3 to
 * 6 s; with 5 ms turns it waited about 0.1 s (bench/attacks.ts flood).
 */
export const HANDOVER_MS = 5;
/** How long sliced work may run in one turn of the event loop, all pieces together. */
const TURN_MS = 10;
/** However spent the turn, a piece runs this long before it yields: every start and resume makes progress. */
const MIN_RUN_MS = 1;
/** Waiting pieces looked at per turn at most. */
const MAX_PER_TURN = 256;

/** When this turn's sliced work began; undefined once the check phase closed it. */
let turnStart: number | undefined;
/** Pieces waiting to resume, first yielded first (a queue read from `head`). */
let waiting: (() => void)[] = [];
let head = 0;
/** setImmediate callbacks scheduled to resume pieces and not run yet. */
let scheduled = 0;

function turnSpent(): boolean {
  return turnStart !== undefined && performance.now() - turnStart >= TURN_MS;
}

function openTurn(): void {
  if (turnStart !== undefined) return;
  turnStart = performance.now();
  setImmediate(() => {
    turnStart = undefined;
  });
}

function schedule(): void {
  const pending = waiting.length - head;
  if (scheduled > 0 || pending === 0) return;
  scheduled = Math.min(pending, MAX_PER_TURN);
  for (let i = scheduled; i > 0; i--) setImmediate(resumeOne);
}

/**
 * One resume per setImmediate callback: Node runs the resumed piece's
 * microtasks before the next callback, so each callback sees the time the
 * ones before it took. The first callback of a round resumes a piece even in
 * a spent turn, so waiting work always moves.
 */
let firstOfRound = true;
function resumeOne(): void {
  scheduled--;
  if (head < waiting.length && (firstOfRound || !turnSpent())) {
    firstOfRound = false;
    openTurn();
    const resume = waiting[head]!;
    head++;
    if (head === waiting.length) {
      waiting = [];
      head = 0;
    }
    resume();
  }
  if (scheduled === 0) {
    firstOfRound = true;
    schedule();
  }
}

/** Resolves once the event loop has handled what was waiting (I/O, timers) and the pieces that yielded before this one have run. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/** One piece of work's clock: call `pace()` at the boundaries of small steps and await what it returns. */
export class TimeSlice {
  private started = performance.now();

  constructor(private readonly sliceMs = DEFAULT_SLICE_MS) {}

  /** Undefined while the slice lasts (no await needed, nothing allocated); else a promise that yields once. */
  pace(): Promise<void> | undefined {
    openTurn();
    const ran = performance.now() - this.started;
    if (ran < this.sliceMs && (ran < MIN_RUN_MS || !turnSpent())) return undefined;
    return yieldToEventLoop().then(() => {
      this.started = performance.now();
    });
  }
}
