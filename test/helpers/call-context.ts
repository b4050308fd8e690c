import { pino } from "pino";
import type { CallContext } from "../../src/core/call-context";

/** A CallContext for calling domain code and clients directly in tests. */
export function testContext(overrides: Partial<CallContext> = {}): CallContext {
  return {
    caller: { accountId: "u-test", accountType: "user" },
    traceId: "0af7651916cd43dd8448eb211c80319c",
    language: "en",
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    remainingMs: () => undefined,
    ...overrides,
  };
}
