import { randomBytes } from "node:crypto";

/** A W3C trace id (32 hex). */
export function newTraceId(): string {
  return randomBytes(16).toString("hex");
}

/** A span id (16 hex), e.g. one per resolver property. */
export function newSpanId(): string {
  return randomBytes(8).toString("hex");
}
