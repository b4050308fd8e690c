/** Waiting items looked at per round of callbacks at most. */
const MAX_PER_ROUND = 256;

/**
 * Work that waits its turn, shared by the listener's ingress (requests handed
 * to the handlers) and admission control (calls started):
 *
 * - each key (a caller) has its own first-in first-out queue, and the keys
 *   take turns one item each, so a key with a thousand items waiting delays
 *   another key's item by one of its items, not by all of them;
 * - items start for at most `budgetMs` of one turn of the event loop, the
 *   clock opened by the turn's first start; past it they wait for the next
 *   turn, so the loop also accepts connections, reads sockets and fires
 *   timers that often (see HANDOVER_MS in time-slice.ts);
 * - waiting items start from setImmediate callbacks, one per callback: Node
 *   finishes each callback's promise chain before the next, so each start
 *   sees the time the ones before it took;
 * - only a turn's first item may start at once (`startNow`): items arriving
 *   in one read (an MCP batch, a hundred HTTP/2 streams in one packet) come
 *   before any of them ran, so the clock cannot have moved yet, and started
 *   at once they all ran in that turn.
 *
 * `room` bounds how many may start (admission's free slots); the owner calls
 * `wake()` when room frees.
 */
export class Turns<T> {
  /** The waiting items by key, each key's first come first (a Set lets an item leave from anywhere); keys in turn order. */
  private readonly queues = new Map<unknown, Set<T>>();
  private count = 0;
  /** When this turn's budget began; undefined between turns. */
  private turnStart: number | undefined;
  /** setImmediate callbacks scheduled to start waiting items and not run yet. */
  private pumps = 0;

  constructor(
    private readonly budgetMs: number,
    /** Starts an item that waited (the turn is open and counted). */
    private readonly start: (item: T) => void,
    /** How many more items may start now; unbounded by default. */
    private readonly room: () => number = () => Number.POSITIVE_INFINITY,
  ) {}

  /** Items waiting now. */
  get waiting(): number {
    return this.count;
  }

  /** Items `key` has waiting. */
  waitingOf(key: unknown): number {
    return this.queues.get(key)?.size ?? 0;
  }

  /** True, and the turn opened, when an item may start at once: room, nothing waiting, and nothing started yet this turn. */
  startNow(): boolean {
    if (this.room() <= 0 || this.count > 0 || this.turnStart !== undefined) return false;
    this.open();
    return true;
  }

  /** Queues `item` behind `key`'s others and schedules the starts. */
  push(key: unknown, item: T): void {
    let queue = this.queues.get(key);
    if (queue === undefined) {
      queue = new Set();
      this.queues.set(key, queue);
    }
    queue.add(item);
    this.count++;
    this.wake();
  }

  /** Takes a waiting item out (it left: timed out, its caller gone); false when it was not waiting. */
  remove(key: unknown, item: T): boolean {
    const queue = this.queues.get(key);
    if (queue === undefined || !queue.delete(item)) return false;
    this.count--;
    if (queue.size === 0) this.queues.delete(key);
    return true;
  }

  /** Schedules one callback per item that could start now; with none, or some already scheduled, nothing. */
  wake(): void {
    const startable = Math.min(this.count, this.room(), MAX_PER_ROUND);
    if (this.pumps > 0 || startable <= 0) return;
    this.pumps = startable;
    for (let i = startable; i > 0; i--) setImmediate(this.pump);
  }

  private open(): void {
    if (this.turnStart !== undefined) return;
    this.turnStart = performance.now();
    // Closes the turn at the next check phase: this turn's, or the next one's when opened in one.
    setImmediate(() => {
      this.turnStart = undefined;
    });
  }

  private spent(): boolean {
    return this.turnStart !== undefined && performance.now() - this.turnStart >= this.budgetMs;
  }

  /** The first item of the key whose turn it is; that key moves to the back. */
  private next(): T | undefined {
    for (const [key, queue] of this.queues) {
      const [first] = queue;
      this.queues.delete(key);
      if (first === undefined) continue;
      queue.delete(first);
      this.count--;
      if (queue.size > 0) this.queues.set(key, queue);
      return first;
    }
    return undefined;
  }

  private readonly pump = (): void => {
    this.pumps--;
    if (this.count > 0 && this.room() > 0 && !this.spent()) {
      const item = this.next();
      if (item !== undefined) {
        this.open();
        this.start(item);
      }
    }
    if (this.pumps === 0) this.wake();
  };
}
