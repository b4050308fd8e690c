import type { Interceptor } from "@connectrpc/connect";

/**
 * Who is calling, sent as headers on every call of a transport. The service reads identity from
 * headers only, never from request bodies (docs/calling.md, "Identity and tracing").
 */
export interface Identity {
  /** `x-account-id`: the caller's account. Every MemRecall call needs one; memories are scoped to it. */
  accountId?: string;
  /** `x-account-type`: `user` (the service's default when unset), `app` or `anonymous`. */
  accountType?: "user" | "app" | "anonymous";
  /** `x-account-scopes`: the permissions a gateway granted, e.g. `["memories:sensitive"]`. */
  accountScopes?: readonly string[];
  /** `x-kn-id`: the knowledge network for KnowledgeToolsService and the resolver when a request's `kn_id` is empty. */
  knId?: string;
  /**
   * `authorization: Bearer <token>`, for a service run with AUTH_MODE=jwt or introspection (the account then
   * comes from the token). A function is called before each call, so a refreshed token is picked up.
   */
  token?: string | (() => string | Promise<string>);
  /** Any other headers for every call, e.g. `traceparent` or `accept-language`. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * An interceptor that adds the identity's headers to every call. A header the call sets itself
 * (`callOptions.headers`) wins, so one call can act for another account without a second transport.
 */
export function identityInterceptor(identity: Identity): Interceptor {
  const fixed: [string, string][] = Object.entries(identity.headers ?? {});
  if (identity.accountId !== undefined) fixed.push(["x-account-id", identity.accountId]);
  if (identity.accountType !== undefined) fixed.push(["x-account-type", identity.accountType]);
  if (identity.accountScopes !== undefined) fixed.push(["x-account-scopes", identity.accountScopes.join(" ")]);
  if (identity.knId !== undefined) fixed.push(["x-kn-id", identity.knId]);
  const { token } = identity;
  return (next) => async (req) => {
    for (const [name, value] of fixed) {
      if (!req.header.has(name)) req.header.set(name, value);
    }
    if (token !== undefined && !req.header.has("authorization")) {
      req.header.set("authorization", `Bearer ${typeof token === "string" ? token : await token()}`);
    }
    return next(req);
  };
}
