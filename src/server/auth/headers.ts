import { ToolError } from "../../errors/tool-error";
import { callerFromHeaders } from "../caller";
import type { NodeServerRequest } from "../node-types";
import { type Authenticator, type AuthResult, headerGetter } from "./result";

/**
 * AUTH_MODE=headers: the caller is whoever the identity headers say, from any
 * client. For a service only a trusted gateway can reach (or a local run).
 */
export function headersAuthenticator(): Authenticator {
  return { authenticate: (req: NodeServerRequest) => identityFromHeaders(headerGetter(req)) };
}

/** The caller the identity headers name, or the INVALID_ARGUMENT that says which header is unusable. */
export function identityFromHeaders(headers: Pick<Headers, "get">): AuthResult {
  try {
    return { ok: true, caller: callerFromHeaders(headers) };
  } catch (err) {
    if (err instanceof ToolError) return { ok: false, error: err };
    throw err;
  }
}
