import { Agent, request } from "node:http";

/** How one request ended: the HTTP status, or why there was none. */
export interface Answer {
  status: number | "no answer" | "error";
  ms: number;
}

/**
 * A keep-alive HTTP/1.1 pool of its own, so that one side's requests (an
 * attacker's, the probe's) never wait for a socket another side holds.
 */
export function pool(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets });
}

/**
 * One request over `agent`, the answer read to its end. It resolves, never
 * rejects: "no answer" after `timeoutMs` or on `signal`, "error" when the
 * connection failed or was cut.
 */
export function send(
  agent: Agent,
  url: string,
  opts: {
    method?: "GET" | "POST";
    headers?: Record<string, string>;
    body?: string;
    timeoutMs: number;
    signal?: AbortSignal;
  },
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (status: Answer["status"]) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, ms: performance.now() - started });
    };
    const req = request(url, {
      agent,
      method: opts.method ?? "GET",
      headers: opts.headers,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const timer = setTimeout(() => {
      done("no answer");
      req.destroy();
    }, opts.timeoutMs);
    req.on("response", (res) => {
      res.on("data", () => {});
      res.on("end", () => done(res.statusCode ?? "error"));
      res.on("error", () => done("error"));
    });
    req.on("error", () => done(opts.signal?.aborted ? "no answer" : "error"));
    req.end(opts.body);
  });
}

/** How many requests ended each way, printed "200 12, 429 3", most frequent first. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(outcome: Answer["status"] | string): void {
    this.counts.set(String(outcome), (this.counts.get(String(outcome)) ?? 0) + 1);
  }

  get total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  toString(): string {
    return (
      [...this.counts]
        .sort((a, b) => b[1] - a[1])
        .map(([s, n]) => `${s} ${n}`)
        .join(", ") || "none"
    );
  }
}
