import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KnowledgeNetworkBackend } from "../../src/kn/backend";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { createHttpBackend } from "../../src/kn/http/http-backend";
import { PLATFORM_LAYOUTS, type PlatformLayout } from "../../src/kn/http/platform-paths";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { miniBundle } from "../fixtures/mini-bundle";
import { testContext } from "../helpers/call-context";
import { describeKnowledgeBackendContract, failureOf, shanghaiMonth } from "./backend.contract";

const KN = "kn_mini";
const ctx = testContext();

interface Pair {
  embedded: EmbeddedBackend;
  http: KnowledgeNetworkBackend & { close(): void };
  sim: Simulator;
  close(): Promise<void>;
}

/**
 * The embedded engine, and the HTTP clients reaching the same engine through
 * the simulator with the paths of one platform release.
 */
async function startPair(spelling: "new" | "old", layout: PlatformLayout): Promise<Pair> {
  const embedded = new EmbeddedBackend([miniBundle], { timeZone: "Asia/Shanghai" });
  const sim = await startSimulator({ backend: embedded, spelling });
  const http = createHttpBackend({
    ontologyManagerUrl: sim.url,
    ontologyQueryUrl: sim.url,
    operatorMarketUrl: sim.url,
    timeoutMs: 5000,
    maxSockets: 4,
    spelling,
    paths: PLATFORM_LAYOUTS[layout],
  });
  return {
    embedded,
    http,
    sim,
    close: async () => {
      http.close();
      await sim.close();
    },
  };
}

/** One call of every kind, with the inputs that exercise normalisation. */
const sameAnswers: [string, (b: KnowledgeNetworkBackend) => Promise<unknown>][] = [
  ["listKnowledgeNetworks", (b) => b.listKnowledgeNetworks(ctx, { name_pattern: "医疗", limit: 10, offset: 0 })],
  ["getKnowledgeNetwork", (b) => b.getKnowledgeNetwork(ctx, KN)],
  [
    "getObjectTypes in an order of the caller's",
    (b) => b.getObjectTypes(ctx, KN, ["company", "drug-product", "disease", "symptom"]),
  ],
  [
    "queryObjects with like and need_total",
    (b) =>
      b.queryObjects(ctx, KN, "disease", {
        condition: { field: "disease_name", operation: "like", value: "气道梗阻" },
        limit: 10,
        need_total: true,
      }),
  ],
  [
    "queryObjects with match, first page",
    (b) =>
      b.queryObjects(ctx, KN, "disease", {
        condition: { field: "description", operation: "match", value: "肺部 咳嗽" },
        limit: 1,
      }),
  ],
  [
    "queryObjects with a projection, a sort and search_after",
    (b) =>
      b.queryObjects(ctx, KN, "disease", {
        properties: ["rate"],
        sort: [{ field: "rate", direction: "asc" }],
        limit: 2,
        search_after: [0.4, "disease_000003"],
      }),
  ],
  [
    "queryObjects on composite keys",
    (b) => b.queryObjects(ctx, KN, "drug-product", { properties: ["dosage_form"], limit: 10, need_total: true }),
  ],
  [
    "queryObjects matching nothing",
    (b) =>
      b.queryObjects(ctx, KN, "disease", {
        condition: { field: "disease_name", operation: "==", value: "骨折" },
        limit: 10,
        need_total: true,
      }),
  ],
  [
    "querySubgraph with forward, backward and multi-hop paths",
    (b) =>
      b.querySubgraph(ctx, KN, {
        relation_type_paths: [
          {
            object_types: [
              { id: "company", condition: { field: "company_id", operation: "==", value: "company_000001" } },
              { id: "drug-product" },
            ],
            relation_types: [
              { relation_type_id: "produces", source_object_type_id: "company", target_object_type_id: "drug-product" },
            ],
          },
          {
            object_types: [
              { id: "symptom", condition: { field: "symptom_id", operation: "==", value: "symptom_000028" } },
              { id: "disease" },
            ],
            relation_types: [
              { relation_type_id: "has_symptom", source_object_type_id: "symptom", target_object_type_id: "disease" },
            ],
          },
          {
            object_types: [
              { id: "disease", condition: { field: "disease_id", operation: "==", value: "disease_000002" } },
              { id: "disease" },
              { id: "symptom", limit: 1 },
            ],
            relation_types: [
              {
                relation_type_id: "has_complication",
                source_object_type_id: "disease",
                target_object_type_id: "disease",
              },
              { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
            ],
          },
        ],
      }),
  ],
  [
    "queryProperties with a metric and an operator, an unmatched identity, out of order",
    (b) =>
      b.queryProperties(ctx, KN, "company", {
        identities: [
          { company_id: "company_000002" },
          { company_id: "company_999999" },
          { company_id: "company_000001" },
        ],
        properties: ["approved_drug_count", "business_health_score"],
        dynamic_params: {
          approved_drug_count: {
            instant: false,
            start: shanghaiMonth(2025, 1),
            end: shanghaiMonth(2025, 7) - 1,
            step: "quarter",
          },
          business_health_score: {
            weights: { growth: 2, stability: 1 },
            focus_categories: ["胶囊", "注射剂"],
            as_of: Date.UTC(2025, 11, 31),
          },
        },
      }),
  ],
  [
    "queryProperties on composite keys",
    (b) =>
      b.queryProperties(ctx, KN, "drug-product", {
        identities: [
          { drug_id: "d1", form: "胶囊" },
          { drug_id: "d1", form: "片剂" },
        ],
        properties: ["company_id"],
      }),
  ],
  ["getOperator", (b) => b.getOperator(ctx, "op_business_health_score")],
];

const sameFailures: [string, (b: KnowledgeNetworkBackend) => Promise<unknown>][] = [
  ["an unknown network", (b) => b.getKnowledgeNetwork(ctx, "kn_unknown")],
  ["an unknown object type", (b) => b.getObjectTypes(ctx, KN, ["symptom", "no_such_type"])],
  [
    "an operation the property does not list",
    (b) =>
      b.queryObjects(ctx, KN, "disease", { condition: { field: "age", operation: "regex", value: "儿" }, limit: 10 }),
  ],
  ["a limit out of range", (b) => b.queryObjects(ctx, KN, "disease", { limit: 0 })],
  [
    "an edge that does not follow the path",
    (b) =>
      b.querySubgraph(ctx, KN, {
        relation_type_paths: [
          {
            object_types: [{ id: "disease" }, { id: "symptom" }],
            relation_types: [
              { relation_type_id: "has_symptom", source_object_type_id: "symptom", target_object_type_id: "disease" },
            ],
          },
        ],
      }),
  ],
  [
    "a metric without its time range",
    (b) =>
      b.queryProperties(ctx, KN, "company", {
        identities: [{ company_id: "company_000001" }],
        properties: ["approved_drug_count"],
        dynamic_params: { approved_drug_count: { instant: true } },
      }),
  ],
  ["an unknown operator", (b) => b.getOperator(ctx, "op_unknown")],
];

// Both spellings on the 0.7 paths; the 0.8 paths (ontology-manager moved to bkn-backend) with the 2026 spelling it ships with.
const variants: ["new" | "old", PlatformLayout][] = [
  ["new", "0.7"],
  ["old", "0.7"],
  ["new", "0.8"],
];

for (const [spelling, layout] of variants) {
  const name = `HTTP clients against the simulator (${spelling} spelling, ${layout} paths)`;
  const paths = PLATFORM_LAYOUTS[layout];
  const managerService = layout === "0.8" ? "BknBackend" : "OntologyManager";

  describeKnowledgeBackendContract(name, async () => {
    const pair = await startPair(spelling, layout);
    return { backend: pair.http, teardown: pair.close };
  });

  describe(name, () => {
    let pair: Pair;
    beforeAll(async () => {
      pair = await startPair(spelling, layout);
    });
    afterAll(() => pair.close());

    it.each(sameAnswers)("return exactly what the embedded engine returns: %s", async (_, call) => {
      const direct = await call(pair.embedded);
      expect(await call(pair.http)).toEqual(direct);
    });

    // The platform's words (its description and violations' texts) stay in the log: the caller gets the code and the fields.
    it.each(sameFailures)("fail with the embedded engine's code and violated fields: %s", async (_, call) => {
      const direct = await failureOf(call(pair.embedded));
      const viaHttp = await failureOf(call(pair.http));
      expect(viaHttp.code).toBe(direct.code);
      expect(viaHttp.violations.map((v) => v.field)).toEqual(direct.violations.map((v) => v.field));
      const told = [viaHttp.message, JSON.stringify(viaHttp.violations), JSON.stringify(viaHttp.metadata)].join(" ");
      for (const v of direct.violations) expect(told).not.toContain(v.description.en);
    });

    it("send ontology-query reads as POST with X-HTTP-Method-Override: GET, forwarding identity and trace", async () => {
      pair.sim.clearRequests();
      await pair.http.queryObjects(ctx, KN, "symptom", { limit: 1 });
      const post = pair.sim.requests().find((r) => r.method === "POST");
      expect(post).toMatchObject({
        path: `${paths.ontologyQuery}/knowledge-networks/kn_mini/object-types/symptom`,
        status: 200,
        body: { limit: 1 },
        headers: {
          "x-http-method-override": "GET",
          "x-account-id": "u-test",
          "x-account-type": "user",
          "content-type": "application/json",
          traceparent: expect.stringMatching(new RegExp(`^00-${ctx.traceId}-[0-9a-f]{16}-01$`)),
        },
      });
    });

    it("leave x-account-id out for a caller without an account, and still send x-account-type", async () => {
      pair.sim.clearRequests();
      await pair.http.listKnowledgeNetworks(testContext({ caller: { accountId: "", accountType: "anonymous" } }), {});
      const [request] = pair.sim.requests();
      expect(request!.headers["x-account-id"]).toBeUndefined();
      expect(request!.headers["x-account-type"]).toBe("anonymous");
    });

    const identitiesField = spelling === "new" ? "_instance_identities" : "unique_identities";
    it(`name the identities of a property query ${identitiesField}`, async () => {
      pair.sim.clearRequests();
      await pair.http.queryProperties(ctx, KN, "symptom", {
        identities: [{ symptom_id: "symptom_000020" }],
        properties: ["symptom_name"],
      });
      const post = pair.sim.requests().find((r) => r.path.endsWith("/properties"));
      expect(post!.body).toMatchObject({
        [identitiesField]: [{ symptom_id: "symptom_000020" }],
        properties: expect.arrayContaining(["symptom_name"]),
      });
    });

    it("encode ids in paths, so an id holding '/' or ',' reaches the platform whole", async () => {
      const err = await failureOf(pair.http.getObjectTypes(ctx, KN, ["疾病/症状,其他"]));
      expect(err.code).toBe("not_found");
      expect(err.message).toContain("疾病/症状,其他");
      expect(err.metadata).toMatchObject({
        upstream: "ontology-manager",
        upstream_status: "404",
        error_code: `${managerService}.ObjectType.NotFound`,
      });
    });

    it(`call each service under the ${layout} release's prefix`, async () => {
      pair.sim.clearRequests();
      await pair.http.getKnowledgeNetwork(ctx, KN);
      await pair.http.searchConcepts(ctx, KN, "object_types", { limit: 1 });
      await pair.http.queryObjects(ctx, KN, "symptom", { limit: 1 });
      await pair.http.getOperator(ctx, "op_business_health_score");
      const seen = pair.sim.requests().map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`);
      expect(seen).toEqual(
        expect.arrayContaining([
          `GET ${paths.ontologyManager}/knowledge-networks/kn_mini 200`,
          `POST ${paths.ontologyManager}/knowledge-networks/kn_mini/object-types 200`,
          `POST ${paths.ontologyQuery}/knowledge-networks/kn_mini/object-types/symptom 200`,
          `GET ${paths.operatorIntegration}/operator/market/op_business_health_score 200`,
        ]),
      );
      // The simulator serves every release's paths: none of another's may have been called.
      const prefixes = Object.values(paths).map((p) => ` ${p}/`);
      expect(seen.filter((line) => !prefixes.some((p) => line.includes(p)))).toEqual([]);
    });
  });
}

describe("HTTP clients with path prefixes of their own", () => {
  let pair: Pair;
  beforeAll(async () => {
    pair = await startPair("new", "0.7");
  });
  afterAll(() => pair.close());

  const backendWith = (managerUrl: string, ontologyManager: string) =>
    createHttpBackend({
      ontologyManagerUrl: managerUrl,
      ontologyQueryUrl: pair.sim.url,
      operatorMarketUrl: undefined,
      timeoutMs: 5000,
      maxSockets: 2,
      spelling: "new",
      paths: { ...PLATFORM_LAYOUTS["0.7"], ontologyManager },
    });

  it("put a prefix override after a base URL that holds a path (a gateway's)", async () => {
    const http = backendWith(`${pair.sim.url}/api/bkn-backend`, "/in/v1");
    try {
      pair.sim.clearRequests();
      expect((await http.getKnowledgeNetwork(ctx, KN)).id).toBe(KN);
      expect(pair.sim.requests().map((r) => r.path)).toEqual([
        "/api/bkn-backend/in/v1/knowledge-networks/kn_mini?mode=export",
      ]);
    } finally {
      http.close();
    }
  });

  it("name PLATFORM_API_LAYOUT when ontology-manager answers 404 even for its list of networks", async () => {
    const http = backendWith(pair.sim.url, "/api/ontology-manager/in/v9");
    try {
      const err = await failureOf(http.getObjectTypes(ctx, KN, ["disease"]));
      expect(err).toMatchObject({ code: "failed_precondition", reason: "PLATFORM_PATH_NOT_FOUND" });
      expect(err.message).toContain("PLATFORM_API_LAYOUT");
      expect(err.message).not.toContain(pair.sim.url);
      expect(err.hint?.message.en).toContain("retrying will not help");
    } finally {
      http.close();
    }
  });
});
