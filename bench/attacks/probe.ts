import { Worker } from "node:worker_threads";
import { percentile } from "../stats";
import type { Answer } from "./http";

/** How often the probe asks, and how long it waits for an answer (a miss counts as this long). */
const EVERY_MS = 100;
const PROBE_TIMEOUT_MS = 10_000;
/** The other account: not one an attack uses. */
export const ACCOUNT_B = "attacks-bystander";

/** What one kind of probe saw. */
export interface Seen {
  n: number;
  p99: number;
  max: number;
  /** When the slowest one was sent, ms after the probe started (a warm-up spike or the steady state). */
  worstAt: number;
  /** Answers other than 200 ("429 3, no answer 1"), or "" when every one was 200. */
  failed: string;
}

export interface ProbeReport {
  healthz: Seen;
  bystander: Seen;
}

/**
 * The sampler, in a worker thread of its own (as test/hostile/conditions-health-poll.ts):
 * its clock and requests do not wait for the attackers' loop in the main thread,
 * so what it sees is how fast the service answers. Every EVERY_MS, without
 * waiting for the previous answers: GET /healthz, and SearchMemories as another
 * account, each over a keep-alive pool of its own.
 */
const SAMPLER = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const { baseUrl, account, everyMs, timeoutMs } = workerData;
const agents = { healthz: new http.Agent({ keepAlive: true }), bystander: new http.Agent({ keepAlive: true }) };
const answers = { healthz: [], bystander: [] };
const origin = performance.now();
function send(kind, path, method, headers, body) {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (status) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, ms: performance.now() - started, at: started - origin });
    };
    const req = http.request(baseUrl + path, { agent: agents[kind], method, headers });
    const timer = setTimeout(() => { done("no answer"); req.destroy(); }, timeoutMs);
    req.on("response", (res) => {
      res.on("data", () => {});
      res.on("end", () => done(res.statusCode));
      res.on("error", () => done("error"));
    });
    req.on("error", () => done("error"));
    req.end(body);
  });
}
const tick = () => {
  answers.healthz.push(send("healthz", "/healthz", "GET", {}));
  answers.bystander.push(send("bystander", "/contextloader.memrecall.v1.MemRecallService/SearchMemories", "POST",
    { "content-type": "application/json", "x-account-id": account }, JSON.stringify({ query: "数据库配置" })));
};
tick();
const timer = setInterval(tick, everyMs);
parentPort.once("message", async () => {
  clearInterval(timer);
  const healthz = await Promise.all(answers.healthz);
  const bystander = await Promise.all(answers.bystander);
  agents.healthz.destroy();
  agents.bystander.destroy();
  parentPort.postMessage({ healthz, bystander });
});
`;

/**
 * Starts sampling `/healthz` and another account's cheap call (Connect JSON
 * SearchMemories as ACCOUNT_B) every EVERY_MS. `stop()` waits for the answers
 * still out and returns what was seen.
 */
export function startProbe(baseUrl: string): { stop(): Promise<ProbeReport> } {
  const worker = new Worker(SAMPLER, {
    eval: true,
    workerData: { baseUrl, account: ACCOUNT_B, everyMs: EVERY_MS, timeoutMs: PROBE_TIMEOUT_MS },
  });
  const failed = new Promise<never>((_, reject) => worker.once("error", reject));
  return {
    async stop() {
      const report = new Promise<{ healthz: (Answer & { at: number })[]; bystander: (Answer & { at: number })[] }>(
        (resolve) => worker.once("message", resolve),
      );
      worker.postMessage("stop");
      try {
        const { healthz, bystander } = await Promise.race([report, failed]);
        return { healthz: seen(healthz), bystander: seen(bystander) };
      } finally {
        await worker.terminate();
      }
    },
  };
}

function seen(answers: (Answer & { at: number })[]): Seen {
  const ms = answers.map((a) => a.ms);
  const worst = answers.reduce((w, a) => (a.ms > w.ms ? a : w), answers[0]!);
  const failed = new Map<string, number>();
  for (const a of answers) if (a.status !== 200) failed.set(String(a.status), (failed.get(String(a.status)) ?? 0) + 1);
  return {
    n: answers.length,
    p99: percentile(ms, 99),
    max: worst.ms,
    worstAt: worst.at,
    failed: [...failed].map(([s, n]) => `${s} ${n}`).join(", "),
  };
}
