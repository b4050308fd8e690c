import { describe, expect, it } from "vitest";
import { Ingress } from "../../src/server/ingress";

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Waits for the event loop to turn `n` times. */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

describe("Ingress: requests reach the handler a turn's worth at a time, connections taking turns", () => {
  it("hands over the first request of a turn at once, and those that arrive with it in later callbacks, at most a slice per turn", async () => {
    const ingress = new Ingress();
    let turn = 0;
    const ticker = setInterval(() => turn++, 1);
    const handled: number[] = [];
    const connection = {};
    // A hundred streams in one read of one HTTP/2 connection, each costing 2 ms to set up.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        for (let i = 0; i < 100; i++)
          ingress.admit(connection, () => {
            handled.push(turn);
            busy(2);
          });
        expect(handled).toHaveLength(1);
        expect(ingress.queued).toBe(99);
        resolve();
      }),
    );
    while (handled.length < 100) await turns(1);
    clearInterval(ticker);
    const perTurn = new Map<number, number>();
    for (const t of handled) perTurn.set(t, (perTurn.get(t) ?? 0) + 1);
    // 5 ms a turn: three 2 ms setups, never the hundred of the read.
    expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(4);
    expect(ingress.queued).toBe(0);
  });

  it("lets another connection's request through before the rest of a busy connection's", async () => {
    const ingress = new Ingress();
    const order: string[] = [];
    const flood = {};
    const other = {};
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        for (let i = 0; i < 50; i++) ingress.admit(flood, () => order.push("flood"));
        ingress.admit(other, () => order.push("other"));
        resolve();
      }),
    );
    while (order.length < 51) await turns(1);
    // The flood's first went at once; then the queues take turns: the other connection's is second or third.
    expect(order.indexOf("other")).toBeLessThanOrEqual(2);
  });

  it("keeps one caller's thousand connections in one queue: another caller waits for one of their requests, not all", async () => {
    const ingress = new Ingress();
    const order: string[] = [];
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        // One account's flood over many connections, keyed by who the requests say they come from.
        for (let i = 0; i < 200; i++) ingress.admit("account-a", () => order.push("a"));
        ingress.admit("account-b", () => order.push("b"));
        resolve();
      }),
    );
    while (order.length < 201) await turns(1);
    expect(order.indexOf("b")).toBeLessThanOrEqual(2);
  });
});
