import { readFileSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeToolsService } from "../../gen/contextloader/kntools/v1/kntools_pb";
import { LogicPropertyResolverService } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { parseBundle } from "../../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { createHttpBackend } from "../../src/kn/http/http-backend";
import { MAX_VALID_VALUES } from "../../src/kn/http/network-ids";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { testContext } from "../helpers/call-context";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { failureOf } from "./backend.contract";

/**
 * Unknown object types, action types and networks are answered alike on
 * every backend: NOT_FOUND with the reason of what is missing and the ids
 * there are in the hint's valid_values — from the embedded engine, and from
 * the platform (which answers a bare 404) through the HTTP backend, which
 * reads the network's export to list them.
 */

const SAMPLE = "data/kn_medical.bundle.json";
const KN = "kn_medical";
const HEADERS = { "x-account-id": "u-notfound", "x-account-type": "user" };
const SEARCH_SCHEMA_RPC = "contextloader.kntools.v1.KnowledgeToolsService/SearchSchema";
const sample = JSON.parse(readFileSync(SAMPLE, "utf8")) as {
  object_types: { id: string }[];
  action_types: { id: string }[];
};
const OBJECT_TYPES = sample.object_types.map((t) => t.id);
const ACTION_TYPES = sample.action_types.map((a) => a.id);

describe("unknown ids over RPC: the embedded engine and the platform (0.7 and 0.8 paths) answer alike", () => {
  let sim: Simulator;
  let servers: [string, TestServer][];
  beforeAll(async () => {
    sim = await startSimulator({ backend: EmbeddedBackend.fromFiles([SAMPLE], { timeZone: "Asia/Shanghai" }) });
    const platform = { ONTOLOGY_MANAGER_URL: sim.url, ONTOLOGY_QUERY_URL: sim.url, OPERATOR_MARKET_URL: sim.url };
    servers = await Promise.all([
      startServer({ LOG_LEVEL: "silent" }).then((s): [string, TestServer] => ["embedded", s]),
      startServer({ LOG_LEVEL: "silent", ...platform }).then((s): [string, TestServer] => ["http 0.7", s]),
      startServer({ LOG_LEVEL: "silent", ...platform, PLATFORM_API_LAYOUT: "0.8" }).then((s): [string, TestServer] => [
        "http 0.8",
        s,
      ]),
    ]);
  });
  afterAll(async () => {
    await Promise.all(servers.map(([, s]) => s.close()));
    await sim.close();
  });

  /** What an agent reads of a NOT_FOUND: the reason, the fields, the next RPC and the valid ids. */
  async function notFound(call: Promise<unknown>) {
    const err = await failure(call);
    expect(err.code).toBe(Code.NotFound);
    const [hint] = err.findDetails(AgentHintSchema);
    return {
      reason: err.findDetails(ErrorInfoSchema)[0]?.reason,
      fields: err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field) ?? [],
      nextRpc: hint?.nextRpc ?? "",
      validValues: hint?.validValues ?? [],
    };
  }

  const tools = (s: TestServer) => clientWith(KnowledgeToolsService, s.baseUrl, HEADERS);
  const resolver = (s: TestServer) => clientWith(LogicPropertyResolverService, s.baseUrl, HEADERS);
  const resolve = (s: TestServer, knId: string, otId: string) =>
    resolver(s).resolveLogicProperties({
      knId,
      otId,
      query: "这些企业的药品上市数量",
      properties: ["approved_drug_count"],
      uniqueIdentities: [{ company_id: "company_000001" }],
    });

  const cases: [string, (s: TestServer) => Promise<unknown>, Record<string, unknown>][] = [
    [
      "GetActionInfo with an unknown at_id: ACTION_TYPE_NOT_FOUND listing the network's action types",
      (s) => tools(s).getActionInfo({ knId: KN, atId: "launch_rocket" }),
      { reason: "ACTION_TYPE_NOT_FOUND", fields: ["at_id"], nextRpc: SEARCH_SCHEMA_RPC, validValues: ACTION_TYPES },
    ],
    [
      "GetActionInfo in an unknown network: KNOWLEDGE_NETWORK_NOT_FOUND at kn_id, listing the networks",
      (s) => tools(s).getActionInfo({ knId: "kn_unknown", atId: "generate_treatment_plan" }),
      { reason: "KNOWLEDGE_NETWORK_NOT_FOUND", fields: ["kn_id"], nextRpc: "", validValues: [KN] },
    ],
    [
      "ResolveLogicProperties with an unknown ot_id: OBJECT_TYPE_NOT_FOUND listing the network's object types",
      (s) => resolve(s, KN, "enterprise"),
      { reason: "OBJECT_TYPE_NOT_FOUND", fields: [], nextRpc: "", validValues: OBJECT_TYPES },
    ],
    [
      "ResolveLogicProperties in an unknown network: KNOWLEDGE_NETWORK_NOT_FOUND listing the networks",
      (s) => resolve(s, "kn_unknown", "company"),
      { reason: "KNOWLEDGE_NETWORK_NOT_FOUND", fields: [], nextRpc: "", validValues: [KN] },
    ],
    [
      "QueryObjectInstances with an unknown ot_id: OBJECT_TYPE_NOT_FOUND at ot_id, listing the object types",
      (s) => tools(s).queryObjectInstances({ knId: KN, otId: "enterprise" }),
      { reason: "OBJECT_TYPE_NOT_FOUND", fields: ["ot_id"], nextRpc: SEARCH_SCHEMA_RPC, validValues: OBJECT_TYPES },
    ],
    [
      "QueryObjectInstances in an unknown network: KNOWLEDGE_NETWORK_NOT_FOUND at kn_id, listing the networks",
      (s) => tools(s).queryObjectInstances({ knId: "kn_unknown", otId: "company" }),
      { reason: "KNOWLEDGE_NETWORK_NOT_FOUND", fields: ["kn_id"], nextRpc: "", validValues: [KN] },
    ],
  ];

  it.each(cases)("%s", async (_, call, expected) => {
    for (const [name, server] of servers) {
      expect({ backend: name, ...(await notFound(call(server))) }).toEqual({ backend: name, ...expected });
    }
  });
});

describe("unknown ids on the HTTP backend: how the valid ids are read", () => {
  const ctx = testContext();
  let sim: Simulator;
  let http: ReturnType<typeof createHttpBackend>;
  const exportsRead = () => sim.requests().filter((r) => r.path.includes("mode=export")).length;

  beforeAll(async () => {
    sim = await startSimulator({ backend: EmbeddedBackend.fromFiles([SAMPLE], { timeZone: "Asia/Shanghai" }) });
    http = httpBackendAt(sim.url);
  });
  afterAll(async () => {
    http.close();
    await sim.close();
  });
  afterEach(() => {
    sim.setFaults({ errorRate: 0, match: undefined });
    sim.clearRequests();
  });

  it("reads a network's export once per account within a minute, whatever is not found in it", async () => {
    await failureOf(http.queryActions(ctx, KN, "launch_rocket", []));
    await failureOf(http.getObjectTypes(ctx, KN, ["enterprise"]));
    await failureOf(http.queryActions(ctx, KN, "fly", []));
    expect(exportsRead()).toBe(1);
    // The platform decides which networks an account sees: another account's ids are its own to read.
    const other = testContext({ caller: { accountId: "u-other", accountType: "user" } });
    const err = await failureOf(http.queryActions(other, KN, "launch_rocket", []));
    expect(err.hint?.validValues).toEqual(ACTION_TYPES);
    expect(exportsRead()).toBe(2);
  });

  it("names only the ids the network lacks, keeping the platform's error code for the record", async () => {
    const err = await failureOf(http.getObjectTypes(ctx, KN, ["company", "enterprise", "company"]));
    expect(err).toMatchObject({
      code: "not_found",
      reason: "OBJECT_TYPE_NOT_FOUND",
      message: "object type enterprise does not exist in knowledge network kn_medical",
      metadata: {
        upstream: "ontology-manager",
        upstream_status: "404",
        error_code: "OntologyManager.ObjectType.NotFound",
      },
    });
    expect(err.hint?.validValues).toEqual(OBJECT_TYPES);
  });

  it("keeps the platform's 404 as it is when the export cannot be read (no outage reported in its place)", async () => {
    // An account whose ids are not cached yet.
    const fresh = testContext({ caller: { accountId: "u-fresh", accountType: "user" } });
    sim.setFaults({ errorRate: 1, match: "mode=export" });
    const err = await failureOf(http.queryActions(fresh, KN, "launch_rocket", []));
    expect(err).toMatchObject({ code: "not_found", reason: "UPSTREAM_NOT_FOUND" });
    expect(err.hint?.validValues).toBeUndefined();
    // A failed read is not remembered: once the export answers, the ids are listed.
    sim.setFaults({ errorRate: 0 });
    const again = await failureOf(http.queryActions(fresh, KN, "launch_rocket", []));
    expect(again.reason).toBe("ACTION_TYPE_NOT_FOUND");
    expect(again.hint?.validValues).toEqual(ACTION_TYPES);
  });

  it(`lists at most ${MAX_VALID_VALUES} ids of a larger network, saying how many it has`, async () => {
    const big = await startSimulator({ backend: new EmbeddedBackend([bigBundle(150)], { timeZone: "UTC" }) });
    const backend = httpBackendAt(big.url);
    try {
      const err = await failureOf(backend.getObjectTypes(ctx, "kn_big", ["enterprise"]));
      expect(err.reason).toBe("OBJECT_TYPE_NOT_FOUND");
      expect(err.hint?.validValues).toHaveLength(MAX_VALID_VALUES);
      expect(err.hint?.validValues?.[0]).toBe("type_000");
      expect(err.hint?.message.en).toBe(
        `Use an object type id of this network; valid_values lists ${MAX_VALID_VALUES} of its 150 object types, SearchSchema finds the ones a question needs.`,
      );
    } finally {
      backend.close();
      await big.close();
    }
  });
});

function httpBackendAt(url: string) {
  return createHttpBackend({
    ontologyManagerUrl: url,
    ontologyQueryUrl: url,
    operatorMarketUrl: url,
    timeoutMs: 5000,
    maxSockets: 4,
    spelling: "new",
  });
}

/** A network of `n` object types and nothing else. */
function bigBundle(n: number) {
  const types = Array.from({ length: n }, (_, i) => ({
    id: `type_${String(i).padStart(3, "0")}`,
    primary_keys: ["id"],
    display_key: "id",
    data_properties: [{ name: "id" }],
  }));
  return parseBundle({ knowledge_network: { id: "kn_big" }, object_types: types }, "bigBundle");
}
