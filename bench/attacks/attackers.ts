/**
 * The attacks of issue 31's "Done when", each started against the service and
 * run until stopped; `stop()` ends it (every connection it opened closed) and
 * says what it sent and what came back.
 */
import { setMaxListeners } from "node:events";
import { connect } from "node:http2";
import { type Answer, pool, send, Tally } from "./http";

export interface Attack {
  stop(): Promise<string>;
}

/** The attacking account; the probe calls as another. */
export const ACCOUNT_A = "attacks-attacker";
/** How long an attacker waits for one answer before it counts as unanswered. */
const ATTACK_TIMEOUT_MS = 30_000;

/**
 * `connections` HTTP/2 connections, each opening `streams` grpc.health.v1.Health/Watch
 * streams (gRPC framing by hand: one empty HealthCheckRequest, the whole server)
 * and holding them open. Counts the streams the service answered with headers,
 * those that got their first status message, and those it reset or ended.
 */
export function healthWatchFlood(baseUrl: string, connections: number, streams: number): Attack {
  const outcome = new Tally();
  const sessions = Array.from({ length: connections }, () => {
    const session = connect(baseUrl);
    session.on("error", () => outcome.add("connection error"));
    session.on("goaway", () => outcome.add("goaway"));
    for (let i = 0; i < streams; i++) {
      const stream = session.request({
        ":method": "POST",
        ":path": "/grpc.health.v1.Health/Watch",
        "content-type": "application/grpc",
        te: "trailers",
      });
      let first = true;
      stream.on("response", () => outcome.add("opened"));
      stream.on("data", () => {
        if (first) outcome.add("status received");
        first = false;
      });
      stream.on("error", () => {});
      stream.on("close", () => {
        if (!session.destroyed) outcome.add(stream.rstCode ? `reset ${stream.rstCode}` : "ended by the service");
      });
      // A message frame: not compressed, 0 bytes long (HealthCheckRequest { service: "" }).
      stream.end(Buffer.alloc(5));
    }
    return session;
  });
  return {
    async stop() {
      for (const s of sessions) s.destroy();
      return `${connections} HTTP/2 connections × ${streams} Watch streams: ${outcome}`;
    },
  };
}

/**
 * `clients` clients, each POSTing to /mcp, one after another, a JSON-RPC batch
 * of `size` tools/call kn_search on the sample network.
 */
export function mcpBatches(baseUrl: string, clients: number, size: number): Attack {
  const batch = JSON.stringify(
    Array.from({ length: size }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: {
        name: "kn_search",
        arguments: { query: "上气道梗阻", kn_ids: [{ knowledge_network_id: "kn_medical" }] },
      },
    })),
  );
  return loop(`${clients} clients POSTing /mcp batches of ${size} kn_search`, clients, (agent, signal) =>
    send(agent, `${baseUrl}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "x-account-id": ACCOUNT_A,
      },
      body: batch,
      timeoutMs: ATTACK_TIMEOUT_MS,
      signal,
    }),
  );
}

/**
 * `clients` clients, each POSTing, one after another, a Connect JSON StoreMemory
 * whose metadata has `keys` keys (~3.5 MB at 200,000).
 */
export function largeJson(baseUrl: string, clients: number, keys: number): Attack {
  const metadata: Record<string, string> = {};
  for (let i = 0; i < keys; i++) metadata[`key${String(i).padStart(6, "0")}`] = "val";
  const body = JSON.stringify({
    memory_key: "attacks_large_json",
    memory_type: "project_fact",
    summary: "large metadata",
    content: "a memory whose metadata is too large",
    metadata,
  });
  const mb = (Buffer.byteLength(body) / 1e6).toFixed(1);
  const what = `${clients} clients POSTing StoreMemory with ${keys} metadata keys (${mb} MB)`;
  return loop(what, clients, (agent, signal) =>
    send(agent, `${baseUrl}/contextloader.memrecall.v1.MemRecallService/StoreMemory`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": ACCOUNT_A },
      body,
      timeoutMs: ATTACK_TIMEOUT_MS,
      signal,
    }),
  );
}

/** One client keeping `concurrency` cheap calls (Connect JSON SearchMemories) of one account in flight. */
export function flood(baseUrl: string, concurrency: number): Attack {
  const body = JSON.stringify({ query: "数据库配置" });
  return loop(
    `1 client, ${concurrency} SearchMemories of one account in flight`,
    concurrency,
    (agent, signal) =>
      send(agent, `${baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": ACCOUNT_A },
        body,
        timeoutMs: ATTACK_TIMEOUT_MS,
        signal,
      }),
    true,
  );
}

/** Several attacks at once; stopping stops each. */
export function together(attacks: Attack[]): Attack {
  return {
    async stop() {
      return (await Promise.all(attacks.map((a) => a.stop()))).join("; ");
    },
  };
}

/**
 * `n` loops, each sending `call` again as soon as it is answered, until stopped;
 * each loop on its own connection, or all on one pool of `n` when `shared`.
 */
function loop(
  what: string,
  n: number,
  call: (agent: ReturnType<typeof pool>, signal: AbortSignal) => Promise<Answer>,
  shared = false,
): Attack {
  const stopping = new AbortController();
  // Every request in flight listens to it.
  setMaxListeners(0, stopping.signal);
  const outcome = new Tally();
  const common = shared ? pool(n) : undefined;
  const agents = Array.from({ length: n }, () => common ?? pool(1));
  const loops = agents.map(async (agent) => {
    while (!stopping.signal.aborted) {
      const answer = await call(agent, stopping.signal);
      outcome.add(stopping.signal.aborted ? "still waiting at the end" : answer.status);
      // A refused connection (the service gone) answers at once: not a busy loop meanwhile.
      if (answer.status === "error") await new Promise((r) => setTimeout(r, 50));
    }
  });
  return {
    async stop() {
      stopping.abort();
      await Promise.all(loops);
      for (const a of new Set(agents)) a.destroy();
      return `${what}: ${outcome.total} answers: ${outcome}`;
    },
  };
}
