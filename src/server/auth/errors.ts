import { ToolError } from "../../errors/tool-error";

/** The realm named in WWW-Authenticate challenges. */
const REALM = "context-loader";

/** The WWW-Authenticate challenge of each refusal issued here (RFC 6750 §3), for HTTP answers. */
const challenges = new WeakMap<ToolError, string>();

/**
 * The headers an HTTP answer carrying `err` adds: `www-authenticate` when the
 * error is a refusal of the authentication step in a bearer mode, nothing otherwise.
 */
export function challengeHeaders(err: ToolError): Record<string, string> {
  const challenge = challenges.get(err);
  return challenge === undefined ? {} : { "www-authenticate": challenge };
}

const BEARER_HINT =
  "Send the header `authorization: Bearer <access token>` (grpcurl and buf curl: -H 'authorization: Bearer <token>'; " +
  'MCP clients: headers {"Authorization": "Bearer <token>"}). The account comes from the token: x-account-id, ' +
  "x-account-type and x-account-scopes are not read in this mode.";

/** UNAUTHENTICATED: a bearer mode and no token at all (RFC 6750: the challenge then carries no error code). */
export function tokenRequired(): ToolError {
  const err = new ToolError({
    code: "unauthenticated",
    reason: "AUTH_REQUIRED",
    message: "this service needs a bearer token: the call carried no authorization header",
    hint: { message: BEARER_HINT },
  });
  challenges.set(err, `Bearer realm="${REALM}"`);
  return err;
}

/** UNAUTHENTICATED: the token was looked at and refused; `why` says what is wrong with it (never the token itself). */
export function tokenRefused(why: string): ToolError {
  const err = new ToolError({
    code: "unauthenticated",
    reason: "AUTH_TOKEN_INVALID",
    message: `the bearer token was refused: ${why}`,
    hint: { message: `Get a new access token and send it again. ${BEARER_HINT}` },
  });
  challenges.set(err, `Bearer realm="${REALM}", error="invalid_token", error_description="${quotable(why)}"`);
  return err;
}

/** UNAUTHENTICATED: mtls mode and a client without a certificate the client CA signed. */
export function certificateRequired(): ToolError {
  return new ToolError({
    code: "unauthenticated",
    reason: "AUTH_CLIENT_CERTIFICATE_REQUIRED",
    message:
      "this service needs a TLS client certificate signed by its client CA; the connection presented none that verifies",
    hint: {
      message:
        "Call through the gateway, or connect with a client certificate the service's client CA (TLS_CLIENT_CA) signed. " +
        "Identity headers (x-account-id, x-account-type, x-account-scopes) are honoured only from such a client.",
    },
  });
}

/**
 * UNAVAILABLE: the token could not be checked because the identity provider
 * (key set, introspection endpoint) did not answer usably. Retryable; what the
 * provider said is logged, never returned.
 */
export function verifierUnavailable(what: string): ToolError {
  return new ToolError({
    code: "unavailable",
    reason: "AUTH_PROVIDER_UNAVAILABLE",
    message: `the bearer token could not be checked: ${what}; retry shortly`,
    hint: { message: "Retry the call in a few seconds; the token was not refused." },
    retryAfterMs: 1000,
  });
}

/** A text safe inside a quoted-string of a header: printable ASCII without quotes or backslashes. */
function quotable(text: string): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, "'");
}

/**
 * UNAUTHENTICATED: a public route (/api/agent-retrieval/v1/…) while the service
 * trusts identity headers. The platform serves those routes to holders of an
 * access token only; answering them on a header anyone can write would make
 * the public surface the open one.
 */
export function publicRouteNeedsToken(path: string): ToolError {
  return new ToolError({
    code: "unauthenticated",
    reason: "AUTH_PUBLIC_ROUTE_NEEDS_TOKEN",
    message: `${path} is a public route and needs an access token, which this service (AUTH_MODE=headers) does not check`,
    hint: {
      message:
        "Call the internal route instead (/api/agent-retrieval/in/v1/… or /mcp, with x-account-id and x-account-type), " +
        "or run the service with AUTH_MODE=jwt or introspection (or mtls behind the gateway) to serve the public routes.",
    },
  });
}
