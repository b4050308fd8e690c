import { randomUUID } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { KeywordContextSchema, KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import type { SubgraphQuery } from "../../src/kn/types";
import type { SimRequest } from "../../src/simulator/request-log";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * The two-step retrieval with the platform over HTTP: the app's HTTP backend
 * against the simulator serving the sample network, with faults injected into
 * chosen upstream calls and every upstream request logged. One subgraph path
 * per request (KEYWORD_PATHS_PER_REQUEST=1), so the log shows each neighbour
 * path as its own call.
 */

const KN = [{ knowledgeNetworkId: "kn_medical" }];
const QUESTION = "上气道梗阻有哪些症状";
const OBJECT_QUERY = "/api/ontology-query/in/v1/knowledge-networks/kn_medical/object-types/disease";
const SUBGRAPH = "/api/ontology-query/in/v1/knowledge-networks/kn_medical/subgraph?query_type=relation_path";
const NO_FAULTS = { latencyMs: 0, errorRate: 0, timeoutRate: 0, malformedRate: 0, match: undefined };

type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

let sim: Simulator;
let overHttp: TestServer;
let embedded: TestServer;
let client: KnowledgeClient;

function clientOf(server: TestServer): KnowledgeClient {
  return clientWith(KnowledgeRetrievalService, server.baseUrl);
}

beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  [overHttp, embedded] = await Promise.all([
    startServer({
      ONTOLOGY_MANAGER_URL: sim.url,
      ONTOLOGY_QUERY_URL: sim.url,
      KEYWORD_PATHS_PER_REQUEST: "1",
      LOG_LEVEL: "silent",
    }),
    startServer({ LOG_LEVEL: "silent" }),
  ]);
  client = clientOf(overHttp);
});
afterAll(async () => {
  await Promise.all([overHttp.close(), embedded.close()]);
  await sim.close();
});
afterEach(() => {
  sim.setFaults(NO_FAULTS);
  sim.clearRequests();
});

/** Step one (top_k 5: has_symptom, has_complication, designated_to, has_alias, checks) in a new session. */
async function recallSchema(on: KnowledgeClient = client): Promise<string> {
  const sessionId = randomUUID();
  await on.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 5 });
  return sessionId;
}

const keyword = (sessionId: string, on: KnowledgeClient = client, signal?: AbortSignal) =>
  on.retrieveKeywordContext(
    { query: "上气道梗阻", knIds: KN, sessionId, objectTypeId: "disease", compactFormat: false },
    { signal },
  );

const isObjectQuery = (r: SimRequest) => r.path === OBJECT_QUERY;
const isSubgraph = (r: SimRequest) => r.path === SUBGRAPH;

describe("the two steps over the platform's HTTP APIs", () => {
  it("gives the same keyword context for 上气道梗阻 as the embedded engine", async () => {
    const [viaHttp, inProcess] = await Promise.all([
      recallSchema().then((s) => keyword(s)),
      recallSchema(clientOf(embedded)).then((s) => keyword(s, clientOf(embedded))),
    ]);
    expect(viaHttp.warnings).toEqual([]);
    const context = viaHttp.keywordContext!;
    expect(context.instances.map((i) => [i.instanceId, i.instanceName])).toEqual([
      ["disease_004790", "上、下气道梗阻"],
    ]);
    expect(
      context.instances[0]!.neighbors.filter((n) => n.relationTypeId === "has_symptom").map((n) => n.instanceId),
    ).toEqual(["symptom_000020", "symptom_000028", "symptom_000547", "symptom_000660", "symptom_000837"]);
    expect(toJson(KeywordContextSchema, context)).toEqual(toJson(KeywordContextSchema, inProcess.keywordContext!));
  });

  it("answers NOT_FOUND for a knowledge network the platform does not know", async () => {
    const err = await failure(
      client.retrieveSchema({ query: QUESTION, knIds: [{ knowledgeNetworkId: "kn_missing" }] }),
    );
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toContain("kn_missing");
  });

  it("recalls the schema of the known network of two, with a warning naming the unknown one", async () => {
    const res = await client.retrieveSchema({
      query: QUESTION,
      knIds: [...KN, { knowledgeNetworkId: "kn_missing" }],
      topK: 5,
      compactFormat: false,
    });
    expect(res.relationTypes.map((r) => r.conceptId)).toContain("has_symptom");
    expect(res.warnings).toEqual([expect.objectContaining({ target: "kn:kn_missing", reason: "UPSTREAM_NOT_FOUND" })]);
  });
});

describe("round trips of one keyword context call", () => {
  it("looks the keyword up in one round trip (exact, direct, aliases), then asks only for subgraphs: one per instance and relation direction", async () => {
    const sessionId = randomUUID();
    const schema = await client.retrieveSchema({
      query: QUESTION,
      knIds: KN,
      sessionId,
      topK: 5,
      compactFormat: false,
    });
    // has_complication (disease → disease) is walked both ways; the other four outward.
    const directions = schema.relationTypes.reduce(
      (n, r) => n + Number(r.sourceObjectTypeId === "disease") + Number(r.targetObjectTypeId === "disease"),
      0,
    );
    expect(directions).toBe(6);
    sim.clearRequests();

    const res = await keyword(sessionId);
    expect(res.keywordContext!.instances).toHaveLength(1);
    const log = sim.requests();
    // Round trip 1: the exact and the direct object query, and the walk from the aliases (has_alias, backward).
    const lookups = log.slice(0, 3);
    const bodies = lookups.filter(isObjectQuery).map((r) => JSON.stringify(r.body));
    expect(bodies.filter((b) => b.includes('"operation":"=="') && !b.includes('"operation":"like"'))).toHaveLength(1);
    expect(bodies.filter((b) => b.includes('"operation":"like"'))).toHaveLength(1);
    const aliasWalk = lookups.filter(isSubgraph).map((r) => (r.body as SubgraphQuery).relation_type_paths);
    expect(aliasWalk).toHaveLength(1);
    expect(aliasWalk[0]!.map((p) => [p.object_types[0]!.id, p.relation_types[0]!.relation_type_id])).toEqual([
      ["alias", "has_alias"],
    ]);
    // The tokens match (上、下气道梗阻) was convincing: no relaxed round. Then 1 instance × 6 relation
    // directions / 1 path per request; never an object query per neighbour.
    expect(log.slice(3).every(isSubgraph)).toBe(true);
    expect(log).toHaveLength(3 + 6);
    const paths = log.slice(3).map((r) => (r.body as SubgraphQuery).relation_type_paths);
    expect(paths.every((p) => p.length === 1)).toBe(true);
    expect(paths.map((p) => p[0]!.relation_types[0]!.relation_type_id).sort()).toEqual([
      "checks",
      "designated_to",
      "has_alias",
      "has_complication",
      "has_complication",
      "has_symptom",
    ]);
  });

  it("sends the exact and the fuzzy instance query at once: both are in flight before either is answered", async () => {
    const sessionId = await recallSchema();
    // Object queries are never answered: a sequential caller would send only the first.
    sim.setFaults({ timeoutRate: 1, match: "object-types/disease" });
    const abort = new AbortController();
    const call = failure(keyword(sessionId, client, abort.signal));
    await vi.waitFor(() => expect(sim.requests().filter(isObjectQuery)).toHaveLength(2));
    abort.abort();
    expect((await call).code).toBe(Code.Canceled);
  });
});

describe("upstream failures", () => {
  it("returns the other neighbours and a warning naming has_alias when only has_alias paths fail", async () => {
    const sessionId = await recallSchema();
    // Only the neighbour walks from the disease over has_alias, not the alias lookup (which starts at the alias type).
    sim.setFaults({ errorRate: 1, match: 'object_types":\\[\\{"id":"disease".*has_alias' });
    const res = await keyword(sessionId);
    const [instance] = res.keywordContext!.instances;
    expect(instance?.instanceId).toBe("disease_004790");
    expect(instance?.properties).toMatchObject({ disease_name: "上、下气道梗阻" });
    const relations = new Set(instance?.neighbors.map((n) => n.relationTypeId));
    expect(relations).toEqual(new Set(["has_symptom", "has_complication", "designated_to", "checks"]));
    expect(res.warnings).toHaveLength(1);
    expect(res.warnings[0]).toMatchObject({ target: "neighbors:has_alias (outgoing)", reason: "UPSTREAM_UNAVAILABLE" });
    expect(res.warnings[0]?.message).toContain("has_alias");

    // The alias was never returned, so once the platform recovers it comes in full.
    sim.setFaults(NO_FAULTS);
    const retry = (await keyword(sessionId)).keywordContext!.instances[0]!;
    expect(retry.alreadyReturned).toBe(true);
    expect(retry.neighbors.find((n) => n.relationTypeId === "has_alias")).toMatchObject({
      instanceId: "alias_000001",
      instanceName: "上气道阻塞",
      alreadyReturned: false,
      properties: { disease_alias_id: "alias_000001", disease_alias_name: "上气道阻塞" },
    });
  });

  it("still finds 上、下气道梗阻 by the fuzzy query when the exact one fails, with a warning naming it", async () => {
    const sessionId = await recallSchema();
    sim.setFaults({ errorRate: 1, match: 'object-types/disease .*"operation":"=="' });
    const res = await keyword(sessionId);
    expect(res.keywordContext!.instances.map((i) => i.instanceId)).toEqual(["disease_004790"]);
    expect(res.warnings).toEqual([
      expect.objectContaining({ target: "instances:exact", reason: "UPSTREAM_UNAVAILABLE" }),
    ]);
  });

  it("answers UNAVAILABLE, never an empty context, when the instance queries fail", async () => {
    const sessionId = await recallSchema();
    sim.setFaults({ errorRate: 1, match: "object-types/disease" });
    const err = await failure(keyword(sessionId));
    expect(err.code).toBe(Code.Unavailable);
    // Only the alias lookup walked a subgraph (beside the instance queries); no neighbour was asked for.
    const walks = sim
      .requests()
      .filter(isSubgraph)
      .map((r) => (r.body as SubgraphQuery).relation_type_paths[0]!.object_types[0]!.id);
    expect(walks).toEqual(["alias"]);

    // Nothing was marked as returned by the failed call.
    sim.setFaults(NO_FAULTS);
    const retry = (await keyword(sessionId)).keywordContext!.instances[0]!;
    expect(retry).toMatchObject({ instanceId: "disease_004790", alreadyReturned: false });
  });

  it("answers UNAVAILABLE when every upstream call fails", async () => {
    const sessionId = await recallSchema();
    sim.setFaults({ errorRate: 1 });
    expect((await failure(keyword(sessionId))).code).toBe(Code.Unavailable);
  });

  it("returns the instance with a warning that no neighbour could be read when every subgraph call fails", async () => {
    const sessionId = await recallSchema();
    sim.setFaults({ errorRate: 1, match: "subgraph" });
    const res = await keyword(sessionId);
    expect(res.keywordContext!.instances[0]).toMatchObject({ instanceId: "disease_004790", neighbors: [] });
    // The alias lookup is a subgraph walk too: it failed, and the instance was still found by its own name.
    expect(res.warnings).toEqual([
      expect.objectContaining({ target: "instances:aliases", reason: "UPSTREAM_UNAVAILABLE" }),
      expect.objectContaining({ target: "neighbors", reason: "UPSTREAM_UNAVAILABLE" }),
    ]);
  });

  it("serves 12 calls waiting at once on a slow platform without a MaxListenersExceededWarning", async () => {
    // Node reports more than 10 listeners on one AbortSignal as a possible memory
    // leak; a burst of agent calls must not send operators chasing one.
    const warnings: Error[] = [];
    const collect = (w: Error) => warnings.push(w);
    process.on("warning", collect);
    try {
      sim.setFaults({ latencyMs: 100 });
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => client.retrieveSchema({ query: QUESTION, knIds: KN, topK: 5 })),
      );
      expect(answers.every((r) => r.round === 1)).toBe(true);
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", collect);
    }
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning").map((w) => w.message)).toEqual([]);
  });
});
