import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { type Text, text } from "../../errors/text";
import type { NodeServerRequest } from "../node-types";
import { bearerToken } from "./bearer";
import { callerFromClaims } from "./claims";
import { TOKEN_WHY, tokenRefused, verifierUnavailable } from "./errors";
import type { Authenticator, AuthResult } from "./result";
import type { IntrospectionSettings } from "./settings";

/** Answers kept at most; the oldest go first. */
const MAX_CACHED_ANSWERS = 10_000;

/** The part of an RFC 7662 answer we check; the rest are claims for the mapping. */
const introspectionAnswer = z.looseObject({
  active: z.boolean(),
  exp: z.number().optional(),
  nbf: z.number().optional(),
  iss: z.string().optional(),
  aud: z.union([z.string(), z.array(z.string())]).optional(),
  token_type: z.string().optional(),
});

/**
 * AUTH_MODE=introspection: `authorization: Bearer <token>` checked by the
 * identity provider's RFC 7662 endpoint (Hydra's /oauth2/introspect, as the
 * platform's own tools do): the answer must be `active`, unexpired, not a
 * refresh token, and name AUTH_ISSUER / AUTH_AUDIENCE when those are set. Each
 * answer is reused for AUTH_INTROSPECTION_CACHE_MS (never past the token's
 * expiry), keyed by a hash of the token; concurrent calls with one token share
 * one request. An endpoint that fails is UNAVAILABLE, never a refusal.
 */
export function introspectionAuthenticator(settings: IntrospectionSettings, log: Logger): Authenticator {
  const cache = new Map<string, { until: number; result: AuthResult }>();
  const pending = new Map<string, Promise<AuthResult>>();
  const authorization =
    settings.client === undefined
      ? undefined
      : `Basic ${Buffer.from(`${encodeURIComponent(settings.client.id)}:${encodeURIComponent(settings.client.secret)}`).toString("base64")}`;

  const remember = (key: string, result: AuthResult, exp: number | undefined) => {
    const now = Date.now();
    const until = Math.min(now + settings.cacheMs, exp === undefined ? Number.POSITIVE_INFINITY : exp * 1000);
    if (until <= now) return;
    cache.delete(key);
    cache.set(key, { until, result });
    if (cache.size > MAX_CACHED_ANSWERS) cache.delete(cache.keys().next().value as string);
  };

  const introspect = async (token: string, key: string): Promise<AuthResult> => {
    let answer: z.output<typeof introspectionAnswer>;
    try {
      const response = await fetch(settings.url, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
          ...(authorization === undefined ? {} : { authorization }),
        },
        body: new URLSearchParams({ token, token_type_hint: "access_token" }),
        redirect: "manual",
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        log.warn({ status: response.status, url: settings.url }, "the token introspection endpoint failed");
        return {
          ok: false,
          error: verifierUnavailable(
            text(`the identity provider answered HTTP ${response.status}`, `身份提供方返回了 HTTP ${response.status}`),
          ),
        };
      }
      const parsed = introspectionAnswer.safeParse(await response.json().catch(() => undefined));
      if (!parsed.success) {
        log.warn({ url: settings.url }, "the token introspection endpoint answered something other than RFC 7662 JSON");
        return {
          ok: false,
          error: verifierUnavailable(
            text("the identity provider's answer could not be read", "无法读取身份提供方的回答"),
          ),
        };
      }
      answer = parsed.data;
    } catch (err) {
      log.warn({ err, url: settings.url }, "cannot reach the token introspection endpoint");
      return {
        ok: false,
        error: verifierUnavailable(text("the identity provider could not be reached", "无法连接身份提供方")),
      };
    }
    const result = judge(answer, settings);
    remember(key, result, result.ok ? answer.exp : undefined);
    return result;
  };

  return {
    authenticate(req: NodeServerRequest): AuthResult | Promise<AuthResult> {
      const token = bearerToken(req);
      if (typeof token !== "string") return { ok: false, error: token };
      const key = createHash("sha256").update(token).digest("base64");
      const cached = cache.get(key);
      if (cached !== undefined) {
        if (cached.until > Date.now()) return cached.result;
        cache.delete(key);
      }
      const inFlight = pending.get(key);
      if (inFlight !== undefined) return inFlight;
      const asked = introspect(token, key).finally(() => pending.delete(key));
      pending.set(key, asked);
      return asked;
    },
  };
}

/** The caller an introspection answer vouches for, or the refusal saying why not. */
function judge(answer: z.output<typeof introspectionAnswer>, settings: IntrospectionSettings): AuthResult {
  const refuse = (why: Text): AuthResult => ({ ok: false, error: tokenRefused(why) });
  if (!answer.active) {
    return refuse(
      text(
        "the identity provider says it is not active (expired, revoked or unknown)",
        "身份提供方说它不是有效令牌（已过期、已吊销或未知）",
      ),
    );
  }
  const now = Date.now() / 1000;
  if (answer.exp !== undefined && answer.exp + settings.clockSkewS < now) return refuse(TOKEN_WHY.expired);
  if (answer.nbf !== undefined && answer.nbf - settings.clockSkewS > now) return refuse(TOKEN_WHY.notYetValid);
  if (answer.token_type !== undefined && answer.token_type.toLowerCase() === "refresh_token") {
    return refuse(text("it is a refresh token; send an access token", "它是刷新令牌；请发送访问令牌"));
  }
  if (settings.issuer !== undefined && answer.iss !== settings.issuer) return refuse(TOKEN_WHY.otherIssuer);
  if (settings.audience !== undefined) {
    const audiences = typeof answer.aud === "string" ? [answer.aud] : (answer.aud ?? []);
    if (!audiences.includes(settings.audience)) return refuse(TOKEN_WHY.otherAudience);
  }
  const caller = callerFromClaims(answer, settings.claims);
  return "accountId" in caller ? { ok: true, caller } : refuse(caller);
}
