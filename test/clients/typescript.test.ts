// @context-loader/client (clients/typescript) against the real service on a loopback port: every
// service over each transport it offers (Node: gRPC, Connect, gRPC-web; fetch: Connect, gRPC-web, as
// a browser calls), the identity set once, and the service's errors read back through errorDetails.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Code,
  ConnectError,
  type ContextLoaderClients,
  errorDetails,
  findDetails,
  RetryInfoSchema,
} from "../../clients/typescript/src/index";
import { createNodeClients, type NodeTransportOptions } from "../../clients/typescript/src/node";
import { createWebClients, type WebTransportOptions } from "../../clients/typescript/src/web";
import { failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { AUDIENCE, ISSUER, type Jwks, startJwks } from "../server/auth-helpers";

type Connection = Omit<NodeTransportOptions, "baseUrl"> | (Omit<WebTransportOptions, "baseUrl"> & { web: true });

/** Each way the package connects, by name; `web` ones use fetch, as in a browser. */
const connections: Record<string, Connection> = {
  "node grpc (h2c)": { protocol: "grpc" },
  "node connect+json (HTTP/1.1)": { protocol: "connect" },
  "node connect+proto (h2c)": { protocol: "connect", httpVersion: "2", useBinaryFormat: true },
  "node grpc-web (HTTP/1.1)": { protocol: "grpc-web" },
  "web connect+json (fetch)": { web: true, protocol: "connect" },
  "web grpc-web (fetch)": { web: true, protocol: "grpc-web" },
};

function clientsFor(
  baseUrl: string,
  c: Connection,
  identity: Partial<NodeTransportOptions> = {},
): ContextLoaderClients {
  return "web" in c
    ? createWebClients({ ...c, ...identity, baseUrl } as WebTransportOptions)
    : createNodeClients({ ...c, ...identity, baseUrl });
}

const MISSING_TIME = "缺少时间范围：请说明统计的起止时间";
const TRACE_ID = /^[0-9a-f]{32}$/;

let llm: ScriptedLlm;
let server: TestServer;
beforeAll(async () => {
  // Every chat completion the resolver asks for says the time range is missing: MISSING_INPUT_PARAMS.
  llm = await startScriptedLlm(() => ({ content: JSON.stringify({ _error: MISSING_TIME }) }));
  server = await startServer({ LLM_BASE_URL: llm.baseUrl, LOG_LEVEL: "info" });
});
afterAll(async () => {
  await server?.close();
  await llm?.close();
});

describe.each(Object.entries(connections))("over %s", (_name, connection) => {
  const account = `ts-client-${randomUUID()}`;
  const clients = () => clientsFor(server.baseUrl, connection, { accountId: account, knId: "kn_medical" });

  it("recalls a schema, then the keyword context behind a keyword, in one session", async () => {
    const { knowledge } = clients();
    const sessionId = randomUUID();
    const schema = await knowledge.retrieveSchema({
      query: "上气道梗阻有哪些症状",
      knIds: [{ knowledgeNetworkId: "kn_medical" }],
      sessionId,
      topK: 5,
      compactFormat: false,
    });
    expect(schema.objectTypes.map((o) => o.conceptId)).toContain("disease");
    const context = await knowledge.retrieveKeywordContext({
      query: "上气道梗阻",
      sessionId,
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(context.keywordContext?.instances.length).toBeGreaterThan(0);
  });

  it("searches the schema with the network from x-kn-id, set once with the identity", async () => {
    const found = await clients().knowledgeTools.searchSchema({ query: "药企获批上市的药品数量", maxConcepts: 1 });
    expect(found.objectTypes.map((o) => o.conceptId)).toContain("company");
  });

  it("resolves a metric whose parameters the question's time words decide", async () => {
    const resolved = await clients().resolver.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "2025年2月这些企业上市了多少药品",
      uniqueIdentities: [{ company_id: "company_000001" }],
      properties: ["approved_drug_count"],
      additionalContext: "instant=true",
    });
    expect(resolved.datas[0]).toMatchObject({ company_id: "company_000001" });
    expect(resolved.datas[0]).toHaveProperty("approved_drug_count");
  });

  it("stores a memory in the caller's account, finds it, and streams a Recall ending in its handoff", async () => {
    const { memRecall } = clients();
    await memRecall.storeMemory({
      memoryKey: "db_config_001",
      memoryType: "project_fact",
      summary: "生产环境 PostgreSQL 数据库配置",
      content: "host=pg-prod.internal port=5432 database=analytics",
    });
    const search = await memRecall.searchMemories({ query: "数据库配置" });
    expect(search.results.map((r) => r.memoryKey)).toEqual(["db_config_001"]);
    const kinds: string[] = [];
    let keys: string[] = [];
    for await (const e of memRecall.recall({
      messages: [{ role: "user", content: "按照我之前的数据库配置来" }],
      strategy: "deterministic",
    })) {
      kinds.push(e.event.case ?? "");
      if (e.event.case === "handoff") keys = e.event.value.relevantMemoryKeys;
    }
    expect(kinds[0]).toBe("iterationStarted");
    expect(kinds.at(-1)).toBe("handoff");
    expect(keys).toEqual(["db_config_001"]);
  });

  it("decodes a missing field: INVALID_ARGUMENT, one violation naming it, a hint and the trace id", async () => {
    const err = await failure(clients().memRecall.searchMemories({ query: "" }));
    const d = errorDetails(err);
    expect(d).toMatchObject({ code: Code.InvalidArgument, reason: "INVALID_ARGUMENT" });
    expect(d.fieldViolations.map((v) => v.field)).toEqual(["query"]);
    expect(d.hint?.message).not.toBe("");
    expect(d.traceId).toMatch(TRACE_ID);
    expect(d.metadata["trace_id"]).toBe(d.traceId);
  });

  it("decodes a call without an account: UNAUTHENTICATED ACCOUNT_REQUIRED", async () => {
    const anonymous = clientsFor(server.baseUrl, connection);
    const d = errorDetails(await failure(anonymous.memRecall.searchMemories({ query: "数据库配置" })));
    expect(d).toMatchObject({ code: Code.Unauthenticated, reason: "ACCOUNT_REQUIRED" });
    expect(d.hint?.message).toContain("x-account-id");
  });

  it("decodes step two before step one: FAILED_PRECONDITION naming RetrieveSchema as the next RPC", async () => {
    const err = await failure(
      clients().knowledge.retrieveKeywordContext({
        query: "上气道梗阻",
        sessionId: randomUUID(),
        objectTypeId: "disease",
      }),
    );
    const d = errorDetails(err);
    expect(d).toMatchObject({ code: Code.FailedPrecondition, reason: "SCHEMA_NOT_IN_SESSION" });
    expect(d.hint?.nextRpc).toBe("contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema");
  });

  it("decodes the resolver's missing parameters (MissingParams)", async () => {
    const err = await failure(
      clients().resolver.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "这些企业上市了多少药品",
        uniqueIdentities: [{ company_id: "company_000001" }],
        properties: ["approved_drug_count"],
      }),
    );
    const d = errorDetails(err);
    expect(d).toMatchObject({ code: Code.FailedPrecondition, reason: "MISSING_INPUT_PARAMS" });
    expect(d.missingParams?.missing[0]?.property).toBe("approved_drug_count");
    expect(d.missingParams?.missing[0]?.params.length).toBeGreaterThan(0);
    expect(d.missingParams?.traceId).toBe(d.traceId);
  });
});

describe("the identity, set once", () => {
  it("lets one call act for another account with its own x-account-id header", async () => {
    const mine = `ts-mine-${randomUUID()}`;
    const other = `ts-other-${randomUUID()}`;
    const { memRecall } = createNodeClients({ baseUrl: server.baseUrl, accountId: mine });
    await memRecall.storeMemory({ memoryKey: "k", content: "theirs" }, { headers: { "x-account-id": other } });
    expect(errorDetails(await failure(memRecall.getMemoryDetail({ memoryKey: "k" }))).code).toBe(Code.NotFound);
    const theirs = createNodeClients({ baseUrl: server.baseUrl, accountId: other });
    expect((await theirs.memRecall.getMemoryDetail({ memoryKey: "k" })).content).toBe("theirs");
  });

  it("sends the same account and account type on every protocol (the service's log names them)", async () => {
    const account = `ts-log-${randomUUID()}`;
    for (const connection of Object.values(connections)) {
      const c = clientsFor(server.baseUrl, connection, { accountId: account, accountType: "app" });
      await c.memRecall.listTools({});
    }
    const lines = server.logs.filter((l) => l.msg === "rpc" && l["account"] === account);
    expect(lines).toHaveLength(Object.keys(connections).length);
    expect(new Set(lines.map((l) => l["account_type"]))).toEqual(new Set(["app"]));
  });
});

describe("a bearer token (AUTH_MODE=jwt)", () => {
  let jwks: Jwks;
  let jwtServer: TestServer;
  beforeAll(async () => {
    jwks = await startJwks();
    jwtServer = await startServer({
      AUTH_MODE: "jwt",
      AUTH_JWKS_URL: jwks.url,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
    });
  });
  afterAll(async () => {
    await jwtServer?.close();
    await jwks?.close();
  });

  it("is asked for before each call and sent as authorization: Bearer; the account comes from it", async () => {
    const sub = `ts-jwt-${randomUUID()}`;
    let asked = 0;
    for (const connection of Object.values(connections)) {
      const token = () => {
        asked++;
        return jwks.sign({ sub });
      };
      const c = clientsFor(jwtServer.baseUrl, connection, { token });
      await c.memRecall.storeMemory({ memoryKey: "note", content: "from a token" });
      expect((await c.memRecall.getMemoryDetail({ memoryKey: "note" })).content).toBe("from a token");
    }
    expect(asked).toBe(2 * Object.keys(connections).length);
    const stored = jwtServer.logs.filter((l) => l.msg === "rpc" && l["account"] === sub);
    expect(stored).toHaveLength(2 * Object.keys(connections).length);
  });

  it("without one the call is UNAUTHENTICATED", async () => {
    const c = createNodeClients({ baseUrl: jwtServer.baseUrl, accountId: "someone" });
    expect(errorDetails(await failure(c.memRecall.listTools({}))).code).toBe(Code.Unauthenticated);
  });
});

describe("deadlines", () => {
  it("defaultTimeoutMs ends a call that takes longer: DEADLINE_EXCEEDED", async () => {
    for (const connection of [connections["node grpc (h2c)"]!, connections["web connect+json (fetch)"]!]) {
      llm.queue({ content: JSON.stringify({ _error: MISSING_TIME }), delayMs: 3000 });
      const c = clientsFor(server.baseUrl, connection, { accountId: "ts-deadline", defaultTimeoutMs: 300 });
      const started = performance.now();
      const err = await failure(
        c.resolver.resolveLogicProperties({
          knId: "kn_medical",
          otId: "company",
          query: "这些企业上市了多少药品",
          uniqueIdentities: [{ company_id: "company_000001" }],
          properties: ["approved_drug_count"],
        }),
      );
      expect(err.code).toBe(Code.DeadlineExceeded);
      expect(performance.now() - started).toBeLessThan(2500);
    }
  });
});

describe("errorDetails", () => {
  it("reads RetryInfo as milliseconds, and findDetails any detail type", () => {
    const busy = new ConnectError("server at its limit", Code.ResourceExhausted, {}, [
      { desc: RetryInfoSchema, value: { retryDelay: { seconds: 1n, nanos: 500_000_000 } } },
    ]);
    expect(errorDetails(busy)).toMatchObject({ code: Code.ResourceExhausted, retryAfterMs: 1500, reason: "" });
    expect(findDetails(busy, RetryInfoSchema)[0]?.retryDelay?.seconds).toBe(1n);
  });

  it("reads anything thrown that is not a ConnectError as having no details", () => {
    expect(errorDetails(new TypeError("Failed to fetch"))).toMatchObject({
      code: Code.Unknown,
      reason: "",
      traceId: "",
      fieldViolations: [],
      hint: undefined,
    });
  });
});
