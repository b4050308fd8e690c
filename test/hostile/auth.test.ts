import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { AUDIENCE, ISSUER, type Jwks, rpcClients, startJwks } from "../server/auth-helpers";

/**
 * Forged identities against AUTH_MODE=jwt: every way a caller might pass for
 * someone else without the identity provider's signature is UNAUTHENTICATED
 * (401 on REST) and reaches no handler. A genuine token of the same account
 * is accepted, so each refusal is the forgery's, not the setup's.
 */

let jwks: Jwks;
let server: TestServer;
const victim = `victim-${randomUUID()}`;
beforeAll(async () => {
  jwks = await startJwks();
  server = await startServer({
    AUTH_MODE: "jwt",
    AUTH_JWKS_URL: jwks.url,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_CLOCK_SKEW_S: "30",
    LOG_LEVEL: "info",
  });
  const [, c] = rpcClients(MemRecallService, server.baseUrl, {
    authorization: `Bearer ${await jwks.sign({ sub: victim })}`,
  })[0]!;
  await c.storeMemory({ memoryKey: "secret", content: "the victim's secret" });
});
afterAll(async () => {
  await server.close();
  await jwks.close();
});

const now = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

/** Each forgery: the headers it sends and what the refusal says. */
const forgeries: [string, () => Promise<Record<string, string>>, string, RegExp][] = [
  ["identity headers alone", async () => ({ "x-account-id": victim }), "AUTH_REQUIRED", /no authorization header/],
  [
    "an expired token",
    async () => bearer(await jwks.sign({ sub: victim, exp: now() - 120 })),
    "AUTH_TOKEN_INVALID",
    /expired/,
  ],
  [
    "another issuer",
    async () => bearer(await jwks.sign({ sub: victim, iss: "https://evil.test/" })),
    "AUTH_TOKEN_INVALID",
    /issuer/,
  ],
  [
    "another audience",
    async () => bearer(await jwks.sign({ sub: victim, aud: "another-service" })),
    "AUTH_TOKEN_INVALID",
    /audience/,
  ],
  [
    'alg "none" (unsigned)',
    async () =>
      bearer(
        `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: victim, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })}.`,
      ),
    "AUTH_TOKEN_INVALID",
    /algorithm|well-formed/,
  ],
  [
    "HS256 keyed with a public value (algorithm confusion)",
    async () =>
      bearer(
        await new SignJWT({ sub: victim })
          .setProtectedHeader({ alg: "HS256", kid: "k1" })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime("1h")
          .sign(new TextEncoder().encode(jwks.url)),
      ),
    "AUTH_TOKEN_INVALID",
    /algorithm/,
  ],
  [
    "a key the set does not hold, under its key id",
    async () => bearer(await jwks.signWithStrangerKey({ sub: victim })),
    "AUTH_TOKEN_INVALID",
    /signature/,
  ],
  [
    "an unknown key id",
    async () => bearer(await jwks.sign({ sub: victim }, { kid: "k-unknown" })),
    "AUTH_TOKEN_INVALID",
    /no key/,
  ],
  [
    "a genuine token with its subject swapped",
    async () => {
      const [h, , s] = (await jwks.sign({ sub: "mallory" })).split(".");
      return bearer(`${h}.${b64({ sub: victim, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })}.${s}`);
    },
    "AUTH_TOKEN_INVALID",
    /signature/,
  ],
  [
    "a token without exp",
    async () => bearer(await jwks.signExactly({ sub: victim, iss: ISSUER, aud: AUDIENCE })),
    "AUTH_TOKEN_INVALID",
    /"exp"/,
  ],
  [
    "a token not valid yet",
    async () => bearer(await jwks.sign({ sub: victim, nbf: now() + 3600 })),
    "AUTH_TOKEN_INVALID",
    /not valid yet/,
  ],
  ["a token without a subject", async () => bearer(await jwks.sign({ sub: "" })), "AUTH_TOKEN_INVALID", /"sub" claim/],
  ["garbage", async () => bearer("a.b.c"), "AUTH_TOKEN_INVALID", /well-formed/],
  [
    "another scheme",
    async () => ({ authorization: `Basic ${Buffer.from(`${victim}:x`).toString("base64")}` }),
    "AUTH_TOKEN_INVALID",
    /Bearer <token>/,
  ],
  ["a 9 KB token", async () => bearer("a".repeat(9 * 1024)), "AUTH_TOKEN_INVALID", /longer than 8192 bytes/],
];

describe("forged identities", () => {
  it.each(forgeries)(
    "%s: UNAUTHENTICATED on Connect and gRPC, 401 on REST, the victim's memory untouched",
    async (_name, headers, reason, why) => {
      const sent = await headers();
      for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, { ...sent, "x-account-id": victim })) {
        const err = await failure(c.getMemoryDetail({ memoryKey: "secret" }));
        expect(err.code, name).toBe(Code.Unauthenticated);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason, name).toBe(reason);
        expect(err.rawMessage, name).toMatch(why);
        expect(err.rawMessage).not.toContain("the victim's secret");
      }
      const rest = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: { "content-type": "application/json", ...sent },
        body: "{}",
      });
      expect(rest.status).toBe(401);
      expect(rest.headers.get("www-authenticate")).toMatch(/^Bearer realm="context-loader"/);
    },
  );

  it("the genuine token of the same account gets through, and no token ever reaches the logs", async () => {
    const token = await jwks.sign({ sub: victim });
    const [, c] = rpcClients(MemRecallService, server.baseUrl, bearer(token))[1]!;
    expect((await c.getMemoryDetail({ memoryKey: "secret" })).content).toBe("the victim's secret");
    const logged = JSON.stringify(server.logs);
    expect(logged).not.toContain(token.split(".")[2]);
    expect(logged).not.toContain("Bearer ");
  });
});

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
