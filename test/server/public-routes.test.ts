import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server";
import { AUDIENCE, ISSUER, type Jwks, startJwks } from "./auth-helpers";

/**
 * The platform's public surface: every internal platform route again under
 * /api/agent-retrieval/v1/… and MCP at /api/agent-retrieval/v1/mcp, for
 * holders of an access token. Under AUTH_MODE=jwt a token (Authorization or
 * the platform's X-Authorization) is the caller there, as everywhere; under
 * AUTH_MODE=headers, where nothing is checked, the public routes refuse rather
 * than become an open door, and say what to call instead.
 */

const BODY = { kn_id: "kn_medical", query: "上气道梗阻有哪些症状" };

async function post(baseUrl: string, path: string, headers: Record<string, string>, body: unknown = BODY) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

describe("public routes with AUTH_MODE=jwt", () => {
  let jwks: Jwks;
  let server: TestServer;
  beforeAll(async () => {
    jwks = await startJwks();
    server = await startServer({
      AUTH_MODE: "jwt",
      AUTH_JWKS_URL: jwks.url,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      LOG_LEVEL: "silent",
    });
  });
  afterAll(async () => {
    await server?.close();
    await jwks?.close();
  });

  it("answers every platform route under /api/agent-retrieval/v1 as under /in/v1, for a token", async () => {
    const token = await jwks.sign({ sub: `alice-${randomUUID()}` });
    const auth = { authorization: `Bearer ${token}` };
    const routes: [string, unknown][] = [
      ["kn/search_schema", BODY],
      ["kn/get_action_info", { kn_id: "kn_medical", at_id: "generate_treatment_plan" }],
      ["kn/find_skills", { kn_id: "kn_medical", object_type_id: "skills" }],
    ];
    for (const [tool, body] of routes) {
      const internal = await post(server.baseUrl, `/api/agent-retrieval/in/v1/${tool}`, auth, body);
      const pub = await post(server.baseUrl, `/api/agent-retrieval/v1/${tool}`, auth, body);
      expect(pub.status, tool).toBe(200);
      expect(pub.body, tool).toEqual(internal.body);
    }
    // The gateway's X-Authorization is read when there is no Authorization header.
    const forwarded = await post(server.baseUrl, "/api/agent-retrieval/v1/kn/search_schema", {
      "x-authorization": `Bearer ${token}`,
    });
    expect(forwarded.status).toBe(200);
  });

  it("refuses a public route without a token: 401, the platform's envelope, a Bearer challenge", async () => {
    const res = await post(server.baseUrl, "/api/agent-retrieval/v1/kn/search_schema", {
      "x-account-id": "mallory",
      "x-account-type": "user",
    });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: "AUTH_REQUIRED" });
    expect(String(res.body["solution"])).toContain("Bearer");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("serves MCP at /api/agent-retrieval/v1/mcp to the SDK client with a token", async () => {
    const token = await jwks.sign({ sub: `bob-${randomUUID()}` });
    const client = new Client({ name: "public-mcp", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/api/agent-retrieval/v1/mcp", server.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("search_schema");
      const result = await client.callTool({ name: "search_schema", arguments: BODY });
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { object_types: unknown[] }).object_types.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

describe("public routes with AUTH_MODE=headers", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ LOG_LEVEL: "silent" });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("refuses them, naming the internal route and the modes that serve them; the internal route answers", async () => {
    const headers = { "x-account-id": "u-1", "x-account-type": "user" };
    const pub = await post(server.baseUrl, "/api/agent-retrieval/v1/kn/search_schema", headers);
    expect(pub.status).toBe(401);
    expect(pub.body).toMatchObject({ code: "AUTH_PUBLIC_ROUTE_NEEDS_TOKEN" });
    expect(String(pub.body["solution"])).toContain("/api/agent-retrieval/in/v1/");
    expect(String(pub.body["solution"])).toContain("AUTH_MODE=jwt");
    const internal = await post(server.baseUrl, "/api/agent-retrieval/in/v1/kn/search_schema", headers);
    expect(internal.status).toBe(200);

    const mcp = await fetch(`${server.baseUrl}/api/agent-retrieval/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(mcp.status).toBe(401);
    const rpcError = (await mcp.json()) as { error: { message: string } };
    expect(rpcError.error.message).toContain("needs an access token");
  });
});
