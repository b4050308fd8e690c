import { randomFillSync } from "node:crypto";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace id of a call: taken from a W3C `traceparent` header when the
 * caller sent a valid one (so our logs join the caller's trace), else new.
 */
export function traceIdFromHeaders(headers: Pick<Headers, "get">): string {
  const traceparent = headers.get("traceparent");
  if (traceparent === null) return newCallTraceId();
  const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (match?.[1] && !/^0+$/.test(match[1])) return match[1];
  return newCallTraceId();
}

/** Random bytes for trace ids, drawn from the system's generator 256 ids at a time. */
const pool = Buffer.alloc(16 * 256);
let used = pool.length;

/**
 * A new W3C trace id (32 hex) from the same generator as core/ids.ts's
 * newTraceId, with the bytes drawn in blocks: one call into the generator per
 * 256 calls of ours, not one (and a Buffer) per call, as crypto.randomUUID does.
 */
export function newCallTraceId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return pool.toString("hex", used - 16, used);
}
