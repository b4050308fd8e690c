import { newTraceId } from "../core/ids";

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The trace id of a call: taken from a W3C `traceparent` header when the
 * caller sent a valid one (so our logs join the caller's trace), else new.
 */
export function traceIdFromHeaders(headers: Headers): string {
  const match = TRACEPARENT.exec((headers.get("traceparent") ?? "").trim().toLowerCase());
  if (match?.[1] && !/^0+$/.test(match[1])) return match[1];
  return newTraceId();
}
