import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { AUDIENCE, ISSUER, type Jwks, mcpResult, mcpToolCall, rpcClients, startJwks } from "./auth-helpers";

/**
 * AUTH_MODE=jwt against the real service: Bearer tokens signed here, verified
 * against a JWKS served on loopback. A genuine token is the caller on every
 * protocol (Connect, gRPC, a REST route, MCP), identity headers never are,
 * and what one token's account stores another's cannot see.
 */

let jwks: Jwks;
let server: TestServer;
beforeAll(async () => {
  jwks = await startJwks();
  server = await startServer({
    AUTH_MODE: "jwt",
    AUTH_JWKS_URL: jwks.url,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    METRICS_AUTH: "same",
  });
});
afterAll(async () => {
  await server.close();
  await jwks.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("a genuine token is the caller", () => {
  it("on Connect and gRPC: a memory stored by one token's account is that account's, whatever the identity headers say", async () => {
    const alice = await jwks.sign({ sub: `alice-${randomUUID()}` });
    const bob = await jwks.sign({ sub: `bob-${randomUUID()}` });
    const key = `k-${randomUUID()}`;
    for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, bearer(alice))) {
      const stored = await c.storeMemory({ memoryKey: `${key}-${name}`, content: `alice's ${name} note` });
      expect(stored.memoryKey, name).toBe(`${key}-${name}`);
      expect((await c.getMemoryDetail({ memoryKey: `${key}-${name}` })).content, name).toBe(`alice's ${name} note`);
    }
    // Bob, even claiming to be alice in the identity headers, does not see it.
    const bobClaimingAlice = { ...bearer(bob), "x-account-id": (await jwksSub(alice)) ?? "", "x-account-type": "user" };
    for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, bobClaimingAlice)) {
      const err = await failure(c.getMemoryDetail({ memoryKey: `${key}-${name}` }));
      expect(err.code, name).toBe(Code.NotFound);
    }
    const rpcLines = server.logs.filter(
      (l) => l.msg === "rpc" && l["rpc"] === "contextloader.memrecall.v1.MemRecallService/StoreMemory",
    );
    expect(rpcLines.at(-1)?.["account"]).toBe(await jwksSub(alice));
  });

  it("reads scopes from the scope claim: a sensitive memory shows its content only to a token with memories:sensitive", async () => {
    const sub = `carol-${randomUUID()}`;
    const plain = await jwks.sign({ sub });
    const scoped = await jwks.sign({ sub, scope: "openid memories:sensitive" });
    const [, c] = rpcClients(MemRecallService, server.baseUrl, bearer(plain))[0]!;
    await c.storeMemory({ memoryKey: "token", summary: "计费口令", content: "token=sk-1", sensitive: true });
    expect((await c.getMemoryDetail({ memoryKey: "token" })).content).toBe("");
    const [, s] = rpcClients(MemRecallService, server.baseUrl, bearer(scoped))[1]!;
    expect((await s.getMemoryDetail({ memoryKey: "token" })).content).toBe("token=sk-1");
  });

  it("owns the knowledge session on a REST route: another token cannot continue it", async () => {
    const alice = bearer(await jwks.sign({ sub: `alice-${randomUUID()}` }));
    const bob = bearer(await jwks.sign({ sub: `bob-${randomUUID()}` }));
    const session_id = randomUUID();
    const kn_ids = [{ knowledge_network_id: "kn_medical" }];
    const post = (headers: Record<string, string>, body: unknown) =>
      fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    expect((await post(alice, { query: "上气道梗阻有哪些症状", kn_ids, session_id, top_k: 5 })).status).toBe(200);
    const step2 = { query: "上气道梗阻", kn_ids, session_id, enable_keyword_context: true, object_type_id: "disease" };
    const stranger = await post({ ...bob, "x-account-id": "alice" }, step2);
    expect(stranger.status).toBe(400);
    expect(JSON.stringify(await stranger.json())).toContain("RetrieveSchema");
    expect((await post(alice, step2)).status).toBe(200);
  });

  it("on /mcp: the tool runs as the token's account", async () => {
    const sub = `dave-${randomUUID()}`;
    const token = bearer(await jwks.sign({ sub }));
    const stored = await mcpToolCall(server.baseUrl, token, "store_memory", { memory_key: "m1", content: "dave's" });
    expect(stored.status).toBe(200);
    expect(mcpResult(stored.body).isError).toBe(false);
    const [, c] = rpcClients(MemRecallService, server.baseUrl, token)[0]!;
    expect((await c.getMemoryDetail({ memoryKey: "m1" })).content).toBe("dave's");
    const other = await mcpToolCall(
      server.baseUrl,
      bearer(await jwks.sign({ sub: `eve-${randomUUID()}` })),
      "get_memory_detail",
      {
        memory_key: "m1",
      },
    );
    expect(mcpResult(other.body).isError).toBe(true);
  });
});

describe("a call without a valid token is refused", () => {
  it("identity headers alone: UNAUTHENTICATED on Connect and gRPC, with a hint naming the authorization header", async () => {
    for (const [name, c] of rpcClients(MemRecallService, server.baseUrl, { "x-account-id": "alice" })) {
      const err = await failure(c.getMemoryDetail({ memoryKey: "m1" }));
      expect(err.code, name).toBe(Code.Unauthenticated);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason, name).toBe("AUTH_REQUIRED");
      expect(err.findDetails(AgentHintSchema)[0]?.message, name).toContain("authorization: Bearer <access token>");
    }
  });

  it("on a REST route: 401 with a Bearer challenge, before the body is read", async () => {
    const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "alice" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="context-loader"');
    const bad = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer not.a.jwt" },
      body: "{}",
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer realm="context-loader", error="invalid_token"/);
  });

  it("on /mcp: 401 with a Bearer challenge and a JSON-RPC error saying what to send", async () => {
    const res = await mcpToolCall(server.baseUrl, { "x-account-id": "alice" }, "get_memory_detail", {
      memory_key: "m1",
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="context-loader"');
    expect((res.body["error"] as { message: string }).message).toContain("authorization: Bearer");
  });

  it("reflection follows the mode; /metrics too with METRICS_AUTH=same", async () => {
    const [, grpc] = rpcClients(KnowledgeRetrievalService, server.baseUrl, {})[1]!;
    expect((await failure(grpc.retrieveSchema({ query: "x" }))).code).toBe(Code.Unauthenticated);
    expect((await fetch(`${server.baseUrl}/metrics`)).status).toBe(401);
    const ok = await fetch(`${server.baseUrl}/metrics`, { headers: bearer(await jwks.sign()) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("contextloader_rpc_requests_total");
  });
});

describe("probes need no token", () => {
  it("answers /healthz, /readyz and grpc.health.v1.Health/Check without credentials", async () => {
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    for (const [name, c] of rpcClients(Health, server.baseUrl, {})) {
      expect((await c.check({ service: "" })).status, name).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });
});

describe("the key set unavailable", () => {
  it("is UNAVAILABLE (retryable) and 503, never UNAUTHENTICATED, and the provider's text stays out", async () => {
    const down = await startJwks();
    down.failing = true;
    const other = await startServer({
      AUTH_MODE: "jwt",
      AUTH_JWKS_URL: down.url,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      LOG_LEVEL: "warn",
    });
    try {
      const token = bearer(await down.sign());
      for (const [name, c] of rpcClients(MemRecallService, other.baseUrl, token)) {
        const err = await failure(c.getMemoryDetail({ memoryKey: "m1" }));
        expect(err.code, name).toBe(Code.Unavailable);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("AUTH_PROVIDER_UNAVAILABLE");
        expect(err.message).not.toContain("db-7");
      }
      const rest = await fetch(`${other.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: token,
        body: "{}",
      });
      expect(rest.status).toBe(503);
      expect(await rest.text()).not.toContain("db-7");
      // Back up: the same token is accepted, nothing was remembered of the failure.
      down.failing = false;
      const [, c] = rpcClients(MemRecallService, other.baseUrl, token)[0]!;
      expect((await failure(c.getMemoryDetail({ memoryKey: "m1" }))).code).toBe(Code.NotFound);
    } finally {
      await other.close();
      await down.close();
    }
  });
});

/** The sub claim of a token made here (its payload, decoded). */
async function jwksSub(token: string): Promise<string | undefined> {
  const payload = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { sub?: string };
  return payload.sub;
}
