import { Worker } from "node:worker_threads";

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
 * The poller, in a worker thread of its own: its clock and its requests do
 * not wait for the test's thread, so what it sees is how fast the server
 * answers, whatever else the test does meanwhile.
 */
const POLLER = `
const { parentPort, workerData } = require("node:worker_threads");
let done = false;
let worst = 0;
let polls = 0;
// A poll sent before the mark is not counted: it may have waited on work the mark excludes (decoding the request).
let markedAt = 0;
parentPort.on("message", (m) => {
  if (m === "mark") {
    worst = 0;
    polls = 0;
    markedAt = performance.now();
  } else done = true;
});
(async () => {
  // The first request of a thread sets up its HTTP client: not part of what is measured.
  await (await fetch(workerData.url)).arrayBuffer();
  parentPort.postMessage({ started: true });
  while (!done) {
    const started = performance.now();
    const res = await fetch(workerData.url);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error("/healthz answered " + res.status);
    if (started >= markedAt) {
      worst = Math.max(worst, performance.now() - started);
      polls++;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  parentPort.postMessage({ worst, polls });
})();
`;

/**
 * Runs `call` while a worker thread polls the server's /healthz one request
 * after another, and reports the slowest health answer: a call that holds
 * the server's event loop shows as a slow /healthz. A call may `mark` the
 * moment from which it is measured (a stream's first answer: the server has
 * read the request and the handler is running).
 */
export async function withHealthPoll<T>(
  server: { baseUrl: string },
  call: (mark: () => void) => Promise<T>,
): Promise<Polled<T>> {
  const worker = new Worker(POLLER, { eval: true, workerData: { url: `${server.baseUrl}/healthz` } });
  const messages: { worst?: number; polls?: number }[] = [];
  let resolveNext: (() => void) | undefined;
  worker.on("message", (m: { worst?: number; polls?: number }) => {
    messages.push(m);
    resolveNext?.();
  });
  const next = () => new Promise<void>((resolve) => (resolveNext = resolve));
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  try {
    await Promise.race([next(), failed]);
    // Let the first polls go before the call starts.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const started = performance.now();
    let outcome: Polled<T>["outcome"];
    try {
      outcome = { ok: true, value: await call(() => worker.postMessage("mark")) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const tookMs = performance.now() - started;
    const report = next();
    worker.postMessage("stop");
    await Promise.race([report, failed]);
    const { worst = 0, polls = 0 } = messages.at(-1)!;
    return { outcome, tookMs, worstHealthMs: worst, polls };
  } finally {
    await worker.terminate();
  }
}
