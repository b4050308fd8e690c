import { HANDOVER_MS } from "../core/time-slice";

/**
 * How long one turn of the event loop may spend handing requests to the
 * handler, ms. Past it, requests wait for the next turn, so the loop also
 * reads sockets, accepts connections and answers probes at least this often.
 */
const SLICE_MS = HANDOVER_MS;
/** Waiting requests looked at per turn at most. */
const MAX_PER_TURN = 256;

/**
 * Hands requests to the handler a turn's worth at a time, taking turns
 * between callers (the listener's key: who a request says it comes from, else
 * its connection).
 *
 * One read of an HTTP/2 connection can hold a hundred new streams, and Node
 * emits them all in that one callback: a thousand health watches arriving
 * that way made a turn of almost a second before admission control or any
 * budget could look at the clock, and a flood of keep-alive clients did the
 * same with one request each. So only a turn's first request goes to the
 * handler at once; the others wait, each caller in its own first-in
 * first-out queue, the queues taking turns one request each (a thousand
 * connections of one account wait in one queue), and are handed
 * over from setImmediate callbacks, one per callback (Node runs each
 * callback's promise chain before the next, so each sees the time the ones
 * before it took), for at most SLICE_MS per turn.
 *
 * Nothing is refused here: the requests that can wait are bounded by the
 * open-stream limits (STREAMS_MAX_OPEN, HTTP2_MAX_CONCURRENT_STREAMS), and a
 * request whose client left while it waited is dropped unhandled.
 */
export class Ingress {
  private readonly queues = new Map<unknown, (() => void)[]>();
  private waiting = 0;
  private sliceStart: number | undefined;
  private pumps = 0;

  /** Requests waiting for their turn now. */
  get queued(): number {
    return this.waiting;
  }

  /** Runs `dispatch` now when it is the turn's first and nobody waits, else in a later callback, in `caller`'s turn. */
  admit(caller: unknown, dispatch: () => void): void {
    if (this.waiting === 0 && this.sliceStart === undefined) {
      this.open();
      dispatch();
      return;
    }
    let queue = this.queues.get(caller);
    if (queue === undefined) {
      queue = [];
      this.queues.set(caller, queue);
    }
    queue.push(dispatch);
    this.waiting++;
    this.schedule();
  }

  private open(): void {
    if (this.sliceStart !== undefined) return;
    this.sliceStart = performance.now();
    setImmediate(() => {
      this.sliceStart = undefined;
    });
  }

  private spent(): boolean {
    return this.sliceStart !== undefined && performance.now() - this.sliceStart >= SLICE_MS;
  }

  private schedule(): void {
    if (this.pumps > 0 || this.waiting === 0) return;
    this.pumps = Math.min(this.waiting, MAX_PER_TURN);
    for (let i = this.pumps; i > 0; i--) setImmediate(this.pump);
  }

  /** The first request of the caller whose turn it is; that caller moves to the back. */
  private next(): (() => void) | undefined {
    for (const [caller, queue] of this.queues) {
      this.queues.delete(caller);
      const first = queue.shift();
      if (queue.length > 0) this.queues.set(caller, queue);
      if (first !== undefined) this.waiting--;
      return first;
    }
    return undefined;
  }

  private readonly pump = (): void => {
    this.pumps--;
    if (this.waiting > 0 && !this.spent()) {
      this.open();
      this.next()?.();
    }
    if (this.pumps === 0) this.schedule();
  };
}
