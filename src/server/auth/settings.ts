/**
 * How the service establishes who is calling (AUTH_MODE), as config.ts reads
 * it. `headers` trusts the identity headers of every caller; the other modes
 * verify a credential first.
 */
export type AuthSettings = AuthModeSettings & {
  /** `none`: /metrics is open like the probes; `same`: it needs what every call needs. */
  metricsAuth: "none" | "same";
};

export type AuthModeSettings =
  | { mode: "headers" }
  /** The client certificate is checked by the TLS listener against TLS_CLIENT_CA (server.tls.clientCa). */
  | { mode: "mtls" }
  | ({ mode: "jwt" } & JwtSettings)
  | ({ mode: "introspection" } & IntrospectionSettings);

/** Where the account, its type and its scopes are read in a token's claims (a name, or a dotted path such as ext.visitor_type). */
export interface ClaimMapping {
  accountId: string;
  /** Unset: every token's caller is a "user". */
  accountType: string | undefined;
  scopes: string;
}

export interface JwtSettings {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** Signature algorithms accepted (asymmetric only: the keys come from a public key set). */
  algorithms: string[];
  clockSkewS: number;
  claims: ClaimMapping;
  /** How long one key set fetch may take, ms. */
  timeoutMs: number;
}

export interface IntrospectionSettings {
  url: string;
  /** Sent as HTTP basic authentication when the endpoint needs it. */
  client: { id: string; secret: string } | undefined;
  /** How long an answer is reused (never past the token's expiry), ms; 0: every call asks. */
  cacheMs: number;
  /** When set, the answer's `iss` must be this. */
  issuer: string | undefined;
  /** When set, the answer's `aud` must name it. */
  audience: string | undefined;
  clockSkewS: number;
  claims: ClaimMapping;
  /** How long one introspection call may take, ms. */
  timeoutMs: number;
}

/** The asymmetric JWS algorithms a key set can verify. */
export const JWT_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
