import { Code, ConnectError } from "@connectrpc/connect";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";

/** One call made by a load client: what it was, when it started, how long it took, how it ended. */
export interface Outcome {
  client: string;
  /** performance.now() when the call started. */
  at: number;
  ms: number;
  /** "ok", or the Connect code name ("unavailable", "resource_exhausted", ...). */
  code: string;
  /** The error's message and AgentHint, when it failed. */
  message?: string;
  hint?: string;
  /** What the call returned, when it succeeded (the client decides). */
  value?: unknown;
}

export interface Load {
  outcomes: Outcome[];
  /** Outcomes of calls that started at or after `from` (performance.now()) and before `to`. */
  between(from: number, to?: number): Outcome[];
  /** Stops the clients after their call in progress and waits for them. */
  stop(): Promise<void>;
}

/**
 * Clients calling in a loop until stopped, each its own `call` (a pause of
 * `pauseMs` between calls keeps the test's own CPU low on a shared machine).
 * Every call is recorded; a failure is recorded by its code, never thrown.
 */
export function startLoad(clients: Record<string, (i: number) => Promise<unknown>>, pauseMs = 20): Load {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Object.entries(clients).map(async ([client, call]) => {
    for (let i = 0; running; i++) {
      const at = performance.now();
      try {
        const value = await call(i);
        outcomes.push({ client, at, ms: performance.now() - at, code: "ok", value });
      } catch (err) {
        const e = ConnectError.from(err);
        outcomes.push({
          client,
          at,
          ms: performance.now() - at,
          code: Code[e.code].replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase(),
          message: e.rawMessage,
          hint: e.findDetails(AgentHintSchema)[0]?.message,
        });
      }
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  });
  return {
    outcomes,
    between: (from, to = Infinity) => outcomes.filter((o) => o.at >= from && o.at < to),
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Waits `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
