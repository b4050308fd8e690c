import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { type IntrospectionEndpoint, mcpResult, mcpToolCall, rpcClients, startIntrospection } from "./auth-helpers";

/**
 * AUTH_MODE=introspection against an RFC 7662 endpoint served on loopback
 * (client credentials required, as Hydra's admin endpoint): an active token
 * is its subject on every protocol, an inactive one is refused, answers are
 * reused within the cache time but never past the token's expiry, and an
 * endpoint that fails makes calls UNAVAILABLE without its text reaching them.
 */

const CLIENT = { id: "context-loader", secret: "s3cret" };
let idp: IntrospectionEndpoint;
let server: TestServer;
beforeAll(async () => {
  idp = await startIntrospection(CLIENT);
  server = await startServer({
    AUTH_MODE: "introspection",
    AUTH_INTROSPECTION_URL: idp.url,
    AUTH_INTROSPECTION_CLIENT_ID: CLIENT.id,
    AUTH_INTROSPECTION_CLIENT_SECRET: CLIENT.secret,
    AUTH_INTROSPECTION_CACHE_MS: "60000",
    AUTH_ACCOUNT_TYPE_CLAIM: "ext.visitor_type",
    LOG_LEVEL: "info",
  });
});
afterAll(async () => {
  await server.close();
  await idp.close();
});
beforeEach(() => {
  idp.failure = undefined;
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A new opaque token the endpoint calls active for `sub`. */
function activeToken(sub: string, extra: Record<string, unknown> = {}): string {
  const token = `ory_at_${randomUUID()}`;
  idp.answers.set(token, { active: true, sub, exp: inAnHour(), token_type: "access_token", ...extra });
  return token;
}

describe("an active token is the caller", () => {
  it("on Connect, gRPC and /mcp, with the client's credentials sent to the endpoint; identity headers do not count", async () => {
    const sub = `alice-${randomUUID()}`;
    const token = activeToken(sub, { ext: { visitor_type: "realname" } });
    const headers = { ...bearer(token), "x-account-id": "mallory" };
    for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, headers)) {
      await c.storeMemory({ memoryKey: `k-${name}`, content: `alice via ${name}` });
      expect((await c.getMemoryDetail({ memoryKey: `k-${name}` })).content).toBe(`alice via ${name}`);
    }
    expect(idp.lastAuthorization).toBe(`Basic ${Buffer.from("context-loader:s3cret").toString("base64")}`);
    const line = server.logs.filter((l) => l.msg === "rpc").at(-1);
    expect(line).toMatchObject({ account: sub, account_type: "user" });
    const viaMcp = await mcpToolCall(server.baseUrl, bearer(token), "get_memory_detail", { memory_key: "k-grpc" });
    expect(mcpResult(viaMcp.body).answer).toMatchObject({ content: "alice via grpc" });
    // "mallory" (the header) has nothing.
    const mallory = activeToken("mallory");
    const [, m] = rpcClients(MemRecallService, server.baseUrl, bearer(mallory))[0]!;
    expect((await failure(m.getMemoryDetail({ memoryKey: "k-grpc" }))).code).toBe(Code.NotFound);
  });

  it("maps the platform's visitor types: business is an app account, a different owner from the user of the same id", async () => {
    const sub = `svc-${randomUUID()}`;
    const asApp = activeToken(sub, { ext: { visitor_type: "business" } });
    const asUser = activeToken(sub, { ext: { visitor_type: "realname" } });
    const [, app] = rpcClients(MemRecallService, server.baseUrl, bearer(asApp))[0]!;
    await app.storeMemory({ memoryKey: "k", content: "the app's" });
    const [, user] = rpcClients(MemRecallService, server.baseUrl, bearer(asUser))[0]!;
    expect((await failure(user.getMemoryDetail({ memoryKey: "k" }))).code).toBe(Code.NotFound);
    expect(server.logs.filter((l) => l.msg === "rpc").at(-2)).toMatchObject({ account: sub, account_type: "app" });
  });

  it("on a REST route", async () => {
    const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(activeToken("alice")) },
      body: JSON.stringify({
        query: "上气道梗阻有哪些症状",
        kn_ids: [{ knowledge_network_id: "kn_medical" }],
        top_k: 3,
      }),
    });
    expect(res.status).toBe(200);
  });
});

describe("refusals", () => {
  it("an inactive or unknown token, a refresh token, an expired answer: UNAUTHENTICATED and 401", async () => {
    const inactive = `ory_at_${randomUUID()}`;
    idp.answers.set(inactive, { active: false });
    const refresh = activeToken("alice", { token_type: "refresh_token" });
    const expired = activeToken("alice", { exp: Math.floor(Date.now() / 1000) - 3600 });
    const noSub = `ory_at_${randomUUID()}`;
    idp.answers.set(noSub, { active: true, exp: inAnHour() });
    for (const [token, why] of [
      [inactive, "not active"],
      [`ory_at_${randomUUID()}`, "not active"],
      [refresh, "refresh token"],
      [expired, "expired"],
      [noSub, '"sub" claim'],
    ] as const) {
      for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, bearer(token))) {
        const err = await failure(c.getMemoryDetail({ memoryKey: "k" }));
        expect(err.code, `${why} over ${name}`).toBe(Code.Unauthenticated);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("AUTH_TOKEN_INVALID");
        expect(err.rawMessage).toContain(why);
      }
      const rest = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: bearer(token),
      });
      expect(rest.status).toBe(401);
      expect(rest.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
  });
});

describe("the answer cache", () => {
  it("asks the endpoint once for many calls with one token, concurrent ones included", async () => {
    const token = activeToken(`alice-${randomUUID()}`);
    const clients = rpcClients(MemRecallService, server.baseUrl, bearer(token));
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => clients[i % 2]![1].listTools({}).then((r) => expect(r).toBeDefined())),
    );
    await clients[0]![1].listTools({});
    expect(idp.calls.get(token)).toBe(1);
  });

  it("never keeps an answer past the token's expiry", async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = activeToken(`alice-${randomUUID()}`, { exp });
    const [, c] = rpcClients(MemRecallService, server.baseUrl, bearer(token))[0]!;
    await c.listTools({});
    // After expiry the endpoint calls the token inactive; the cached "active" must not outlive exp.
    await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 50));
    idp.answers.set(token, { active: false });
    expect((await failure(c.listTools({}))).code).toBe(Code.Unauthenticated);
    expect(idp.calls.get(token)).toBe(2);
  });
});

describe("the endpoint failing", () => {
  it("is UNAVAILABLE (retryable) and 503, its text never reaching the caller, and not remembered", async () => {
    const token = activeToken(`alice-${randomUUID()}`);
    idp.failure = { status: 500, text: "hydra: pq: connection to db-hydra.internal:5432 refused" };
    for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, bearer(token))) {
      const err = await failure(c.listTools({}));
      expect(err.code, name).toBe(Code.Unavailable);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("AUTH_PROVIDER_UNAVAILABLE");
      expect(err.message).not.toContain("db-hydra");
    }
    const rest = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, { method: "POST", headers: bearer(token) });
    expect(rest.status).toBe(503);
    expect(await rest.text()).not.toContain("db-hydra");
    const mcp = await mcpToolCall(server.baseUrl, bearer(token), "list_tools", {});
    expect(mcp.status).toBe(503);
    expect(JSON.stringify(mcp.body)).not.toContain("db-hydra");
    // The log has the status for the operators, never the token.
    const logged = JSON.stringify(server.logs);
    expect(logged).toContain("the token introspection endpoint failed");
    expect(logged).not.toContain(token);
    idp.failure = undefined;
    const [, c] = rpcClients(MemRecallService, server.baseUrl, bearer(token))[0]!;
    expect(await c.listTools({})).toBeDefined();
  });

  it("unreachable: UNAVAILABLE", async () => {
    const gone = await startIntrospection(CLIENT);
    await gone.close();
    const other = await startServer({
      AUTH_MODE: "introspection",
      AUTH_INTROSPECTION_URL: gone.url,
      AUTH_INTROSPECTION_CLIENT_ID: CLIENT.id,
      AUTH_INTROSPECTION_CLIENT_SECRET: CLIENT.secret,
      LOG_LEVEL: "silent",
    });
    try {
      const [, c] = rpcClients(MemRecallService, other.baseUrl, bearer("ory_at_x"))[1]!;
      expect((await failure(c.listTools({}))).code).toBe(Code.Unavailable);
    } finally {
      await other.close();
    }
  });

  it("wrong client credentials (the endpoint answers 401): UNAVAILABLE, not the caller's fault", async () => {
    const other = await startServer({
      AUTH_MODE: "introspection",
      AUTH_INTROSPECTION_URL: idp.url,
      LOG_LEVEL: "silent",
    });
    try {
      const [, c] = rpcClients(MemRecallService, other.baseUrl, bearer(activeToken("alice")))[0]!;
      expect((await failure(c.listTools({}))).code).toBe(Code.Unavailable);
    } finally {
      await other.close();
    }
  });
});
