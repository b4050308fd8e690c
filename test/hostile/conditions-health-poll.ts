import type { TestServer } from "../helpers/server";

/** What happened to a call while /healthz was polled beside it. */
export interface Polled<T> {
  /** The call's answer, or what it threw. */
  outcome: { ok: true; value: T } | { ok: false; error: unknown };
  /** How long the call took, ms. */
  tookMs: number;
  /** The slowest /healthz answer while the call ran, ms. */
  worstHealthMs: number;
  /** /healthz answers seen (at least one: the poll is not vacuous). */
  polls: number;
}

/**
 * Runs `call` while polling the server's /healthz one request after another,
 * and reports the slowest health answer: a call that holds the event loop
 * shows as a slow /healthz (the test and the server share one process, so
 * the poll is delayed by exactly what blocks the server).
 */
export async function withHealthPoll<T>(server: TestServer, call: () => Promise<T>): Promise<Polled<T>> {
  let done = false;
  let worstHealthMs = 0;
  let polls = 0;
  const poll = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await fetch(`${server.baseUrl}/healthz`);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      worstHealthMs = Math.max(worstHealthMs, performance.now() - started);
      polls++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  // Let the first poll start before the call does.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const started = performance.now();
  let outcome: Polled<T>["outcome"];
  try {
    outcome = { ok: true, value: await call() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  const tookMs = performance.now() - started;
  done = true;
  await poll;
  return { outcome, tookMs, worstHealthMs, polls };
}
