import { type Text, text } from "../../errors/text";
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

const BEARER_HINT = text(
  "Send the header `authorization: Bearer <access token>` (grpcurl and buf curl: -H 'authorization: Bearer <token>'; " +
    'MCP clients: headers {"Authorization": "Bearer <token>"}). The account comes from the token: x-account-id, ' +
    "x-account-type and x-account-scopes are not read in this mode.",
  "发送请求头 `authorization: Bearer <access token>`（grpcurl 和 buf curl：-H 'authorization: Bearer <token>'；" +
    'MCP 客户端：headers {"Authorization": "Bearer <token>"}）。账号取自令牌：此模式下不读取 x-account-id、' +
    "x-account-type 和 x-account-scopes。",
);

/** UNAUTHENTICATED: a bearer mode and no token at all (RFC 6750: the challenge then carries no error code). */
export function tokenRequired(): ToolError {
  const err = new ToolError({
    code: "unauthenticated",
    reason: "AUTH_REQUIRED",
    message: text(
      "this service needs a bearer token: the call carried no authorization header",
      "本服务需要 bearer 令牌：这次调用没有带 authorization 请求头",
    ),
    hint: { message: BEARER_HINT },
  });
  challenges.set(err, `Bearer realm="${REALM}"`);
  return err;
}

/** Why a token is refused, the reasons both verifiers give. */
export const TOKEN_WHY = {
  expired: text("it has expired", "它已过期"),
  notYetValid: text("it is not valid yet", "它尚未生效"),
  otherIssuer: text("it was issued by another issuer", "它由另一个签发方签发"),
  otherAudience: text("it was issued for another audience", "它是为另一个受众签发的"),
};

/** UNAUTHENTICATED: the token was looked at and refused; `why` says what is wrong with it (never the token itself). */
export function tokenRefused(why: Text): ToolError {
  const err = new ToolError({
    code: "unauthenticated",
    reason: "AUTH_TOKEN_INVALID",
    message: text(`the bearer token was refused: ${why.en}`, `bearer 令牌被拒绝：${why.zh}`),
    hint: {
      message: text(
        `Get a new access token and send it again. ${BEARER_HINT.en}`,
        `获取新的访问令牌后再发送。${BEARER_HINT.zh}`,
      ),
    },
  });
  // A header value: printable ASCII, so the English.
  challenges.set(err, `Bearer realm="${REALM}", error="invalid_token", error_description="${quotable(why.en)}"`);
  return err;
}

/** UNAUTHENTICATED: mtls mode and a client without a certificate the client CA signed. */
export function certificateRequired(): ToolError {
  return new ToolError({
    code: "unauthenticated",
    reason: "AUTH_CLIENT_CERTIFICATE_REQUIRED",
    message: text(
      "this service needs a TLS client certificate signed by its client CA; the connection presented none that verifies",
      "本服务需要由其客户端 CA 签发的 TLS 客户端证书；这个连接没有出示能通过验证的证书",
    ),
    hint: {
      message: text(
        "Call through the gateway, or connect with a client certificate the service's client CA (TLS_CLIENT_CA) signed. " +
          "Identity headers (x-account-id, x-account-type, x-account-scopes) are honoured only from such a client.",
        "请经网关调用，或用服务的客户端 CA（TLS_CLIENT_CA）签发的客户端证书连接。" +
          "只有这样的客户端发来的身份请求头（x-account-id、x-account-type、x-account-scopes）才会被采信。",
      ),
    },
  });
}

/**
 * UNAVAILABLE: the token could not be checked because the identity provider
 * (key set, introspection endpoint) did not answer usably. Retryable; what the
 * provider said is logged, never returned.
 */
export function verifierUnavailable(what: Text): ToolError {
  return new ToolError({
    code: "unavailable",
    reason: "AUTH_PROVIDER_UNAVAILABLE",
    message: text(
      `the bearer token could not be checked: ${what.en}; retry shortly`,
      `无法检查 bearer 令牌：${what.zh}；请稍后重试`,
    ),
    hint: {
      message: text(
        "Retry the call in a few seconds; the token was not refused.",
        "几秒后重试这次调用；令牌并没有被拒绝。",
      ),
    },
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
    message: text(
      `${path} is a public route and needs an access token, which this service (AUTH_MODE=headers) does not check`,
      `${path} 是公开路由，需要访问令牌，而本服务（AUTH_MODE=headers）不检查令牌`,
    ),
    hint: {
      message: text(
        "Call the internal route instead (/api/agent-retrieval/in/v1/… or /mcp, with x-account-id and x-account-type), " +
          "or run the service with AUTH_MODE=jwt or introspection (or mtls behind the gateway) to serve the public routes.",
        "请改调内部路由（/api/agent-retrieval/in/v1/… 或 /mcp，带 x-account-id 和 x-account-type），" +
          "或以 AUTH_MODE=jwt 或 introspection（或在网关后用 mtls）运行服务来提供公开路由。",
      ),
    },
  });
}
