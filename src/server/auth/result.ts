import type { Caller } from "../../core/call-context";
import type { ToolError } from "../../errors/tool-error";
import type { NodeServerRequest } from "../node-types";

/** What authenticating one request yields: the verified caller, or why there is none. */
export type AuthResult = { ok: true; caller: Caller } | { ok: false; error: ToolError };

/** One authentication mode: it reads the raw request (headers, TLS socket), never its body. */
export interface Authenticator {
  /** Synchronous when the mode needs no I/O (headers, mtls), so the common path costs no extra turn. */
  authenticate(req: NodeServerRequest): AuthResult | Promise<AuthResult>;
}

/**
 * The request's headers as the `get` of fetch's Headers (repeated values
 * joined with ", "), for callerFromHeaders, without copying them all.
 */
export function headerGetter(req: NodeServerRequest): { get(name: string): string | null } {
  return new NodeHeaderGetter(req);
}

/** A class, so a request costs one small object and no closure. */
class NodeHeaderGetter {
  constructor(private readonly req: NodeServerRequest) {}

  get(name: string): string | null {
    const value = this.req.headers[name];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }
}
