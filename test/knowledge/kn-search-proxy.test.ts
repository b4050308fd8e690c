import { randomUUID } from "node:crypto";
import net from "node:net";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { miniBundle } from "../fixtures/mini-bundle";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * KnSearch against the platform over HTTP. In proxy mode (DATA_RETRIEVAL_URL
 * set): forwarded to the simulator's data-retrieval `POST /tools/kn_search`
 * with the caller's identity, trace and deadline, its answer read into typed
 * fields, and its failures — as data-retrieval reports them — told to the
 * agent. Computed here over ontology-query: the conditions it sends.
 */

const KN = [{ knowledgeNetworkId: "kn_medical" }];
const NO_FAULTS = { latencyMs: 0, errorRate: 0, timeoutRate: 0, malformedRate: 0, match: undefined };
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

function clientOf(
  server: TestServer,
  headers: Record<string, string> = { "x-account-id": "u-proxy" },
): KnowledgeClient {
  return clientWith(KnowledgeRetrievalService, server.baseUrl, headers);
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

let sim: Simulator;
let server: TestServer;
let client: KnowledgeClient;
beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  server = await startServer({ DATA_RETRIEVAL_URL: sim.url, LOG_LEVEL: "silent" });
  client = clientOf(server);
});
afterAll(async () => {
  await server.close();
  await sim.close();
});
afterEach(() => {
  sim.setFaults(NO_FAULTS);
  sim.clearRequests();
});

describe("KnSearch forwarded to data-retrieval", () => {
  it("forwards POST /tools/kn_search with the caller's identity and trace and every setting explicit, and answers typed fields", async () => {
    const sessionId = randomUUID();
    const res = await clientOf(server, {
      "x-account-id": "u-proxy",
      "x-account-type": "app",
      traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
    }).knSearch({
      query: "上气道梗阻有哪些症状",
      knIds: KN,
      sessionId,
      retrievalConfig: { semanticInstanceRetrieval: { perTypeInstanceLimit: 3 } },
    });
    const [call] = sim.requests().filter((r) => r.path === "/tools/kn_search");
    expect(call).toMatchObject({
      method: "POST",
      status: 200,
      headers: { "x-account-id": "u-proxy", "x-account-type": "app", "content-type": "application/json" },
    });
    expect(call!.headers["traceparent"]).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read field by field in the expectations
    const body = call!.body as Record<string, any>;
    expect(body).toMatchObject({
      query: "上气道梗阻有哪些症状",
      kn_ids: [{ knowledge_network_id: "kn_medical" }],
      session_id: sessionId,
      only_schema: false,
    });
    expect(body["retrieval_config"]["concept_retrieval"]).toMatchObject({
      top_k: 10,
      skip_llm: true,
      return_union: false,
      schema_brief: true,
      coarse_min_relation_count: 5000,
    });
    expect(body["retrieval_config"]["semantic_instance_retrieval"]).toMatchObject({
      per_type_instance_limit: 3,
      initial_candidate_count: 50,
      min_direct_relevance: 0.3,
      global_final_score_ratio: 0.25,
    });
    expect(body["retrieval_config"]["property_filter"]).toEqual({
      max_properties_per_instance: 20,
      max_property_value_length: 500,
      enable_property_filter: true,
    });

    expect(res.sessionId).toBe(sessionId);
    expect(res.relationTypes.map((r) => r.conceptId)).toContain("has_symptom");
    expect(res.nodes.map((n) => [n.objectTypeId, n.objectTypeName, n.instanceName, n.uniqueIdentities])).toEqual([
      ["disease", "疾病", "上、下气道梗阻", { disease_id: "disease_004790" }],
    ]);
  });

  it("sends x-account-type user when the caller sent none", async () => {
    await client.knSearch({ query: "肺炎", knIds: KN, retrievalConfig: {}, onlySchema: true });
    expect(sim.requests().find((r) => r.path === "/tools/kn_search")!.headers["x-account-type"]).toBe("user");
  });

  it("gives up on data-retrieval when the caller's deadline passes", async () => {
    sim.setFaults({ latencyMs: 5000, match: "kn_search" });
    const started = performance.now();
    const err = await failure(client.knSearch({ query: "肺炎", knIds: KN }, { timeoutMs: 300 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
    // Before data-retrieval's answer at 5 s; wide, for a loaded machine.
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it("tells the agent to send x-account-id when data-retrieval needs to know the caller", async () => {
    const err = await failure(clientOf(server, {}).knSearch({ query: "肺炎", knIds: KN }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain("x-account-id");
    expect(err.findDetails(BadRequestSchema)[0]!.fieldViolations).toEqual([
      expect.objectContaining({ field: "x-account-id" }),
    ]);
    const info = err.findDetails(ErrorInfoSchema)[0]!;
    expect(info.reason).toBe("ACCOUNT_REQUIRED");
    expect(info.metadata).toMatchObject({ upstream: "data-retrieval", upstream_status: "422" });
  });

  it("reports a network data-retrieval does not know as NOT_FOUND on kn_ids, keeping its error code in ErrorInfo", async () => {
    const err = await failure(client.knSearch({ query: "肺炎", knIds: [{ knowledgeNetworkId: "kn_nope" }] }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe(
      "data-retrieval found no knowledge network kn_nope (error code KnowledgeNetworkNotFound)",
    );
    expect(err.findDetails(BadRequestSchema)[0]!.fieldViolations).toEqual([
      expect.objectContaining({ field: "kn_ids[0].knowledge_network_id" }),
    ]);
    const info = err.findDetails(ErrorInfoSchema)[0]!;
    expect(info.reason).toBe("KNOWLEDGE_NETWORK_NOT_FOUND");
    expect(info.metadata).toMatchObject({
      upstream: "data-retrieval",
      upstream_status: "404",
      error_code: "KnowledgeNetworkNotFound",
    });
    // data-retrieval's own words stay in the log.
    expect(JSON.stringify(info.metadata)).not.toContain("知识网络不存在");
    expect(err.findDetails(AgentHintSchema)[0]!.message).toContain("kn_ids");
  });

  it("answers UNAVAILABLE with a retry hint when data-retrieval fails, and when its answer is not a kn_search answer", async () => {
    sim.setFaults({ errorRate: 1, match: "kn_search" });
    const down = await failure(client.knSearch({ query: "肺炎", knIds: KN }));
    expect(down.code).toBe(Code.Unavailable);
    expect(down.findDetails(ErrorInfoSchema)[0]!.metadata).toMatchObject({ upstream_status: "503" });
    expect(down.findDetails(AgentHintSchema)[0]!.message).toContain("retry");
    sim.setFaults({ errorRate: 0, malformedRate: 1, match: "kn_search" });
    const garbled = await failure(client.knSearch({ query: "肺炎", knIds: KN }));
    expect(garbled.code).toBe(Code.Unavailable);
    expect(garbled.findDetails(ErrorInfoSchema)[0]!.reason).toBe("UPSTREAM_BAD_RESPONSE");
    expect(garbled.rawMessage).toContain("not a kn_search answer");
  });

  it("says DATA_RETRIEVAL_URL is wrong when nothing answers there, or something without /tools/kn_search", async () => {
    const [nowhere, elsewhere] = await Promise.all([
      closedPort().then((port) => startServer({ DATA_RETRIEVAL_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: "silent" })),
      startServer({ DATA_RETRIEVAL_URL: `${sim.url}/api`, LOG_LEVEL: "silent" }),
    ]);
    try {
      const unreachable = await failure(clientOf(nowhere).knSearch({ query: "肺炎", knIds: KN }));
      expect(unreachable.code).toBe(Code.Unavailable);
      expect(unreachable.findDetails(ErrorInfoSchema)[0]!.reason).toBe("UPSTREAM_UNREACHABLE");
      expect(unreachable.rawMessage).toContain("DATA_RETRIEVAL_URL");
      const misrouted = await failure(clientOf(elsewhere).knSearch({ query: "肺炎", knIds: KN }));
      expect(misrouted.code).toBe(Code.FailedPrecondition);
      expect(misrouted.findDetails(ErrorInfoSchema)[0]!.reason).toBe("DATA_RETRIEVAL_MISCONFIGURED");
      expect(misrouted.rawMessage).toContain("DATA_RETRIEVAL_URL");
    } finally {
      await Promise.all([nowhere.close(), elsewhere.close()]);
    }
  });

  it("validates the request before forwarding it", async () => {
    const err = await failure(
      client.knSearch({ query: "肺炎", knIds: KN, retrievalConfig: { conceptRetrieval: { topK: 0 } } }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(sim.requests().filter((r) => r.path === "/tools/kn_search")).toEqual([]);
  });

  it("serves POST /kn/kn_search through data-retrieval too, errors in the platform's body", async () => {
    const ok = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-proxy" },
      body: JSON.stringify({ query: "上气道梗阻", kn_ids: [{ knowledge_network_id: "kn_medical" }] }),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { nodes: Record<string, unknown>[] }).nodes[0]).toMatchObject({
      object_type_id: "disease",
      disease_name: "上、下气道梗阻",
    });
    const anonymous = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "上气道梗阻", kn_ids: [{ knowledge_network_id: "kn_medical" }] }),
    });
    expect(anonymous.status).toBe(400);
    expect(await anonymous.json()).toMatchObject({
      code: "ACCOUNT_REQUIRED",
      description: expect.stringContaining("x-account-id"),
      details: {
        upstream: "data-retrieval",
        upstream_status: "422",
        field_violations: [expect.objectContaining({ field: "x-account-id" })],
      },
      solution: expect.stringContaining("x-account-id"),
    });
  });
});

describe("KnSearch computed here over the platform's HTTP services", () => {
  let mini: Simulator;
  let overHttp: TestServer;
  beforeAll(async () => {
    mini = await startSimulator({ backend: new EmbeddedBackend([miniBundle], { timeZone: "Asia/Shanghai" }) });
    overHttp = await startServer({ ONTOLOGY_MANAGER_URL: mini.url, ONTOLOGY_QUERY_URL: mini.url, LOG_LEVEL: "silent" });
  });
  afterAll(async () => {
    await overHttp.close();
    await mini.close();
  });

  it("asks each property with the operations it supports — match and knn on a full-text property, like on the others, == on the name", async () => {
    const res = await clientOf(overHttp).knSearch({ query: "呼吸困难", knIds: [{ knowledgeNetworkId: "kn_mini" }] });
    const queries = mini
      .requests()
      .filter((r) => r.path === "/api/ontology-query/in/v1/knowledge-networks/kn_mini/object-types/disease");
    const leaves = queries.flatMap((q) => {
      const c = (
        q.body as {
          condition: { operation: string; field?: string; sub_conditions?: { operation: string; field: string }[] };
        }
      ).condition;
      return (c.sub_conditions ?? [c]).map((l) => `${l.field} ${l.operation}`);
    });
    expect(leaves).toEqual(
      expect.arrayContaining([
        "disease_name ==",
        "disease_name like",
        "description match",
        "description knn",
        "age like",
      ]),
    );
    // 上、下气道梗阻's description says 表现为呼吸困难: found there, below the symptom named exactly so.
    expect(res.nodes.map((n) => [n.objectTypeId, n.instanceName])).toEqual([
      ["symptom", "呼吸困难"],
      ["disease", "上、下气道梗阻"],
    ]);
    expect(res.nodes[1]!.finalScore).toBeLessThan(res.nodes[0]!.finalScore);
  });

  it("sends at most max_semantic_sub_conditions leaves and asks for initial_candidate_count candidates", async () => {
    const before = mini.requests().length;
    await clientOf(overHttp).knSearch({
      query: "呼吸困难",
      knIds: [{ knowledgeNetworkId: "kn_mini" }],
      retrievalConfig: { semanticInstanceRetrieval: { maxSemanticSubConditions: 2, initialCandidateCount: 7 } },
    });
    const fuzzy = mini
      .requests()
      .slice(before)
      .filter((r) => r.path === "/api/ontology-query/in/v1/knowledge-networks/kn_mini/object-types/disease")
      .map((r) => r.body as { limit: number; condition: { operation: string; sub_conditions?: unknown[] } })
      .filter((b) => b.limit === 7);
    expect(fuzzy).toHaveLength(1);
    expect(fuzzy[0]!.condition.sub_conditions?.length ?? 1).toBeLessThanOrEqual(2);
  });

  it("returns no node for a question nothing in the network is about, though full-text and vector search always have a best hit", async () => {
    for (const query of ["今天天气怎么样", "汽车保险理赔流程"]) {
      const res = await clientOf(overHttp).knSearch({ query, knIds: [{ knowledgeNetworkId: "kn_mini" }] });
      expect(res.nodes, query).toEqual([]);
      expect(res.message, query).toContain("No related instance data was found");
    }
  });
});
