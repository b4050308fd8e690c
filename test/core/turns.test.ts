import { describe, expect, it } from "vitest";
import { Turns } from "../../src/core/turns";

/** Waits for the event loop to turn `n` times. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("Turns: keys take turns, one item each, a budget per turn of the event loop", () => {
  it("starts the turn's first item at once and the next ones from later callbacks, keys alternating", async () => {
    const started: string[] = [];
    const queue = new Turns<string>(5, (item) => started.push(item));
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        expect(queue.startNow()).toBe(true);
        // The turn is open: the next item waits even though nothing else does.
        expect(queue.startNow()).toBe(false);
        for (const item of ["a1", "a2", "a3"]) queue.push("a", item);
        queue.push("b", "b1");
        expect(queue.waiting).toBe(4);
        expect(queue.waitingOf("a")).toBe(3);
        resolve();
      }),
    );
    await turns(3);
    expect(started).toEqual(["a1", "b1", "a2", "a3"]);
    expect(queue.waiting).toBe(0);
  });

  it("never starts an item taken out while it waited", async () => {
    const started: string[] = [];
    const queue = new Turns<string>(5, (item) => started.push(item));
    queue.startNow();
    queue.push("a", "kept");
    queue.push("a", "left");
    expect(queue.remove("a", "left")).toBe(true);
    expect(queue.remove("a", "left")).toBe(false);
    await turns(3);
    expect(started).toEqual(["kept"]);
  });

  it("starts no more than its room allows, and the rest once woken with room again", async () => {
    let room = 1;
    const started: string[] = [];
    const queue = new Turns<string>(
      5,
      (item) => {
        started.push(item);
        room--;
      },
      () => room,
    );
    queue.startNow();
    room = 0;
    for (const item of ["x", "y", "z"]) queue.push("k", item);
    await turns(3);
    expect(started).toEqual([]);
    room = 2;
    queue.wake();
    await turns(3);
    expect(started).toEqual(["x", "y"]);
    expect(queue.waiting).toBe(1);
  });
});
