import { describe, expect, it } from "vitest";
import { traceIdFromHeaders } from "../../src/server/trace";

describe("the trace id of a call", () => {
  it("is the caller's from a valid traceparent, in lower case", () => {
    const headers = new Headers({ traceparent: " 00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01 " });
    expect(traceIdFromHeaders(headers)).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("is new without a traceparent, or with an invalid or all-zero one: 32 hex digits, never the same twice", () => {
    const ids = new Set<string>();
    // Past the 256 ids drawn at a time, so the pool is drawn again.
    for (let i = 0; i < 1000; i++) ids.add(traceIdFromHeaders(new Headers()));
    ids.add(
      traceIdFromHeaders(new Headers({ traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01" })),
    );
    ids.add(traceIdFromHeaders(new Headers({ traceparent: "garbage" })));
    expect(ids.size).toBe(1002);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
  });
});
