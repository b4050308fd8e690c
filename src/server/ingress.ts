import { HANDOVER_MS } from "../core/time-slice";
import { Turns } from "../core/turns";

/**
 * How long one turn of the event loop may spend handing requests to the
 * handler, ms. Past it, requests wait for the next turn, so the loop also
 * reads sockets, accepts connections and answers probes at least this often.
 */
const SLICE_MS = HANDOVER_MS;

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
 * connections of one account wait in one queue), handed over for at most
 * SLICE_MS per turn (core/turns.ts, as admission control).
 *
 * Nothing is refused here: the requests that can wait are bounded by the
 * open-stream limits (STREAMS_MAX_OPEN, HTTP2_MAX_CONCURRENT_STREAMS), and a
 * request whose client left while it waited is dropped unhandled.
 */
export class Ingress {
  private readonly turns = new Turns<() => void>(SLICE_MS, (dispatch) => dispatch());

  /** Requests waiting for their turn now. */
  get queued(): number {
    return this.turns.waiting;
  }

  /** Runs `dispatch` now when it is the turn's first and nobody waits, else in a later callback, in `caller`'s turn. */
  admit(caller: unknown, dispatch: () => void): void {
    if (this.turns.startNow()) dispatch();
    else this.turns.push(caller, dispatch);
  }
}
