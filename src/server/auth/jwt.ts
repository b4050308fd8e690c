import { createRemoteJWKSet, errors, type FlattenedJWSInput, type JWSHeaderParameters, jwtVerify } from "jose";
import type { Logger } from "pino";
import { type Text, text } from "../../errors/text";
import type { NodeServerRequest } from "../node-types";
import { bearerToken } from "./bearer";
import { callerFromClaims } from "./claims";
import { TOKEN_WHY, tokenRefused, verifierUnavailable } from "./errors";
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
        return "accountId" in caller ? { ok: true, caller } : { ok: false, error: tokenRefused(caller) };
      } catch (err) {
        if (err instanceof KeySetUnavailable) {
          log.warn({ err: err.cause, jwks_url: settings.jwksUrl }, "cannot fetch the JWT key set");
          return {
            ok: false,
            error: verifierUnavailable(
              text("the identity provider's key set could not be fetched", "无法获取身份提供方的密钥集"),
            ),
          };
        }
        return { ok: false, error: tokenRefused(whyRefused(err)) };
      }
    },
  };
}

/** What is wrong with a token jose refused, in words an agent can pass on. */
function whyRefused(err: unknown): Text {
  if (err instanceof errors.JWTExpired) return TOKEN_WHY.expired;
  if (err instanceof errors.JWTClaimValidationFailed) {
    // The claim's name is the library's, from a fixed set (exp, iss, aud, sub, ...): not the token's text.
    if (err.reason === "missing") return text(`it has no "${err.claim}" claim`, `它没有 "${err.claim}" 声明`);
    if (err.claim === "iss") return TOKEN_WHY.otherIssuer;
    if (err.claim === "aud") return TOKEN_WHY.otherAudience;
    if (err.claim === "nbf") return TOKEN_WHY.notYetValid;
    return text(`its "${err.claim}" claim is not accepted`, `它的 "${err.claim}" 声明不被接受`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) {
    return text("its signature algorithm is not accepted", "它的签名算法不被接受");
  }
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return text("its signature does not verify", "它的签名验证不通过");
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return text("no key of the identity provider's key set verifies it", "身份提供方的密钥集中没有能验证它的密钥");
  }
  if (err instanceof errors.JOSENotSupported)
    return text("its signature algorithm is not supported", "不支持它的签名算法");
  return text("it is not a well-formed signed JWT", "它不是格式正确的已签名 JWT");
}
