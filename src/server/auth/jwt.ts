import { createRemoteJWKSet, errors, type FlattenedJWSInput, type JWSHeaderParameters, jwtVerify } from "jose";
import type { Logger } from "pino";
import type { NodeServerRequest } from "../node-types";
import { bearerToken } from "./bearer";
import { callerFromClaims } from "./claims";
import { tokenRefused, verifierUnavailable } from "./errors";
import type { Authenticator, AuthResult } from "./result";
import type { JwtSettings } from "./settings";

/** The key set could not be fetched or read: the provider's trouble, not the caller's. */
class KeySetUnavailable extends Error {}

/**
 * AUTH_MODE=jwt: `authorization: Bearer <JWT>` verified against the key set
 * at AUTH_JWKS_URL (fetched when first needed, kept 10 minutes, fetched again
 * at once for a key id it does not hold, at most every 30 s): signature with an
 * allowed algorithm, issuer, audience, expiry and not-before within the clock
 * skew. The caller comes from the token's claims only.
 */
export function jwtAuthenticator(settings: JwtSettings, log: Logger): Authenticator {
  const remote = createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: settings.timeoutMs });
  const keys = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    try {
      return await remote(header, token);
    } catch (err) {
      // A token naming a key or algorithm the set does not have is the token's fault.
      if (
        err instanceof errors.JWKSNoMatchingKey ||
        err instanceof errors.JWKSMultipleMatchingKeys ||
        err instanceof errors.JOSENotSupported
      ) {
        throw err;
      }
      throw new KeySetUnavailable("key set unavailable", { cause: err });
    }
  };
  const options = {
    issuer: settings.issuer,
    audience: settings.audience,
    algorithms: settings.algorithms,
    clockTolerance: settings.clockSkewS,
    requiredClaims: ["exp"],
  };
  return {
    async authenticate(req: NodeServerRequest): Promise<AuthResult> {
      const token = bearerToken(req);
      if (typeof token !== "string") return { ok: false, error: token };
      try {
        const { payload } = await jwtVerify(token, keys, options);
        const caller = callerFromClaims(payload, settings.claims);
        return typeof caller === "string" ? { ok: false, error: tokenRefused(caller) } : { ok: true, caller };
      } catch (err) {
        if (err instanceof KeySetUnavailable) {
          log.warn({ err: err.cause, jwks_url: settings.jwksUrl }, "cannot fetch the JWT key set");
          return { ok: false, error: verifierUnavailable("the identity provider's key set could not be fetched") };
        }
        return { ok: false, error: tokenRefused(whyRefused(err)) };
      }
    },
  };
}

/** What is wrong with a token jose refused, in words an agent can pass on. */
function whyRefused(err: unknown): string {
  if (err instanceof errors.JWTExpired) return "it has expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.reason === "missing") return `it has no "${err.claim}" claim`;
    if (err.claim === "iss") return "it was issued by another issuer";
    if (err.claim === "aud") return "it was issued for another audience";
    if (err.claim === "nbf") return "it is not valid yet";
    return `its "${err.claim}" claim is not accepted`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return "its signature algorithm is not accepted";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return "no key of the identity provider's key set verifies it";
  }
  if (err instanceof errors.JOSENotSupported) return "its signature algorithm is not supported";
  return "it is not a well-formed signed JWT";
}
