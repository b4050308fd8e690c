import { text } from "../../errors/text";
import type { ToolError } from "../../errors/tool-error";
import type { NodeServerRequest } from "../node-types";
import { tokenRefused, tokenRequired } from "./errors";

/** Longer tokens are refused before any parsing or network call: real access tokens are a few kilobytes at most. */
export const MAX_TOKEN_BYTES = 8 * 1024;

const BEARER = /^Bearer[ \t]+([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;

/**
 * The bearer token of `authorization: Bearer <token>` (RFC 6750 §2.1), or of
 * `x-authorization` when there is no authorization header (the platform's
 * gateways forward it under that name); or the refusal: no header, another
 * scheme, a malformed or an oversized token. A `?token=` query parameter, which
 * the platform also reads, is not: a token in a URL ends up in access logs.
 */
export function bearerToken(req: NodeServerRequest): string | ToolError {
  const forwarded = req.headers["x-authorization"];
  const header = req.headers.authorization ?? (Array.isArray(forwarded) ? forwarded[0] : forwarded);
  if (header === undefined || header === "") return tokenRequired();
  if (header.length > MAX_TOKEN_BYTES + 16)
    return tokenRefused(text(`it is longer than ${MAX_TOKEN_BYTES} bytes`, `它超过 ${MAX_TOKEN_BYTES} 字节`));
  const match = BEARER.exec(header);
  if (!match?.[1])
    return tokenRefused(
      text('the authorization header must be "Bearer <token>"', 'authorization 请求头必须是 "Bearer <token>"'),
    );
  return match[1];
}
