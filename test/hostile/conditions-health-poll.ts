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
  /** The slowest /healthz answer in the BASELINE_MS before the call, ms: what the machine's load alone costs now. */
  baselineWorstMs: number;
}

/** How long /healthz is polled before the call, for the baseline. */
const BASELINE_MS = 500;
/**
 * The bound on the slowest /healthz while a call runs: HEALTH_FACTOR times the
 * slowest before it, and never under HEALTH_FLOOR_MS. On an idle machine
 * /healthz answers in a few ms and the floor rules; on a loaded one (two cores
 * shared with other work) a poll can wait 150 ms for the CPU without the
 * service being at fault, and the baseline measured in the same run says so.
 * A service that holds its loop for the call (a recall or a scan not done in
 * slices, a backtracking regex) keeps /healthz waiting for the call's whole
 * work, seconds under load: past either.
 */
const HEALTH_FLOOR_MS = 400;
const HEALTH_FACTOR = 4;

/** The slowest /healthz a call may cause: see HEALTH_FLOOR_MS. */
export function healthBoundMs(p: Polled<unknown>): number {
  return Math.max(HEALTH_FLOOR_MS, HEALTH_FACTOR * p.baselineWorstMs);
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
let baselineWorst = 0;
// Polls before "call" make the baseline; after it, the call's. A poll sent before the call (or the mark) is
// not counted: it may have waited on work the mark excludes (decoding the request).
let calling = false;
let markedAt = Infinity;
parentPort.on("message", (m) => {
  if (m === "call" || m === "mark") {
    calling = true;
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
    } else if (!calling) baselineWorst = Math.max(baselineWorst, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  parentPort.postMessage({ worst, polls, baselineWorst });
})();
`;

/**
 * Runs `call` while a worker thread polls the server's /healthz one request
 * after another, and reports the slowest health answer: a call that holds
 * the server's event loop shows as a slow /healthz. A call may `mark` the
 * moment from which it is measured (a stream's first answer: the server has
 * read the request and the handler is running). The slowest answer in the
 * BASELINE_MS before the call is reported too: healthBoundMs() bounds the
 * call's against it.
 */
export async function withHealthPoll<T>(
  server: { baseUrl: string },
  call: (mark: () => void) => Promise<T>,
): Promise<Polled<T>> {
  const worker = new Worker(POLLER, { eval: true, workerData: { url: `${server.baseUrl}/healthz` } });
  const messages: { worst?: number; polls?: number; baselineWorst?: number }[] = [];
  let resolveNext: (() => void) | undefined;
  worker.on("message", (m: { worst?: number; polls?: number; baselineWorst?: number }) => {
    messages.push(m);
    resolveNext?.();
  });
  const next = () => new Promise<void>((resolve) => (resolveNext = resolve));
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  try {
    await Promise.race([next(), failed]);
    // The baseline: the polls before the call starts.
    await new Promise((resolve) => setTimeout(resolve, BASELINE_MS));
    worker.postMessage("call");
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
    const { worst = 0, polls = 0, baselineWorst = 0 } = messages.at(-1)!;
    return { outcome, tookMs, worstHealthMs: worst, polls, baselineWorstMs: baselineWorst };
  } finally {
    await worker.terminate();
  }
}
