import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KnowledgeNetworkBackend } from "../../src/kn/backend";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { createHttpBackend } from "../../src/kn/http/http-backend";
import type { Condition } from "../../src/kn/types";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { testContext } from "../helpers/call-context";
import { failureOf } from "./backend.contract";

/**
 * What the platform's agent tools read beyond instances — concept groups,
 * typed concept searches, action queries, tool box tools, MCP tool lists —
 * over the sample network, from the embedded engine and from the HTTP
 * clients against the simulator: the same answers and the same failures.
 */

const SAMPLE = fileURLToPath(new URL("../../data/kn_medical.bundle.json", import.meta.url));
const KN = "kn_medical";
const ctx = testContext();
const text = (query: string, k: number): Condition => ({
  operation: "or",
  sub_conditions: [
    { field: "*", operation: "knn", value: query, limit_key: "k", limit_value: k },
    { field: "*", operation: "match", value: query },
  ],
});

const embedded = EmbeddedBackend.fromFiles([SAMPLE], { timeZone: "Asia/Shanghai" });
let sim: Simulator;
let http: KnowledgeNetworkBackend & { close(): void };

beforeAll(async () => {
  sim = await startSimulator({ backend: embedded });
  http = createHttpBackend({
    ontologyManagerUrl: sim.url,
    ontologyQueryUrl: sim.url,
    operatorMarketUrl: sim.url,
    timeoutMs: 5000,
    maxSockets: 4,
    spelling: "new",
  });
});
afterAll(async () => {
  http.close();
  await sim.close();
});

describe.each([
  ["embedded engine", () => embedded as KnowledgeNetworkBackend],
  ["HTTP clients against the simulator", () => http],
])("agent tool reads: %s", (_name, backendOf) => {
  it("lists the network's concept groups with their names", async () => {
    const groups = await backendOf().listConceptGroups(ctx, KN);
    expect(groups.map((g) => [g.id, g.name])).toEqual([
      ["diagnosis", "疾病诊疗"],
      ["medication", "用药"],
      ["drug_regulation", "药品监管"],
      ["hospital_resources", "医院资源"],
    ]);
  });

  it("finds relation types by meaning and words, best first, with their scores", async () => {
    const hits = await backendOf().searchConcepts(ctx, KN, "relation_types", {
      condition: text("疾病的症状", 5),
      limit: 3,
    });
    expect(hits).toHaveLength(3);
    expect(hits[0]).toMatchObject({ id: "has_symptom", source_object_type_id: "disease", _score: expect.any(Number) });
    expect(hits[0]!._score!).toBeGreaterThan(hits[1]!._score!);
  });

  it("keeps the network's order when the condition scores nothing", async () => {
    const hits = await backendOf().searchConcepts(ctx, KN, "action_types", {
      condition: { field: "object_type_id", operation: "in", value: ["disease", "department"] },
      limit: 10,
    });
    expect(hits.map((a) => a.id)).toEqual(["generate_treatment_plan", "book_department_appointment"]);
    expect(hits[0]).not.toHaveProperty("_score");
    expect(hits[0]).toEqual({
      id: "generate_treatment_plan",
      name: "生成治疗方案",
      action_type: "add",
      object_type_id: "disease",
      comment: expect.stringContaining("治疗方案"),
      tags: ["治疗", "诊疗"],
    });
  });

  it("searches within concept groups: their object types, the relation types between them, the metrics scoped to them", async () => {
    const b = backendOf();
    const objects = await b.searchConcepts(ctx, KN, "object_types", {
      concept_groups: ["hospital_resources"],
      limit: 100,
    });
    expect(objects.map((o) => o.id)).toEqual(["department", "facility"]);
    expect(objects[0]!.data_properties.map((p) => p.name)).toEqual(["department_id", "department_name"]);
    const relations = await b.searchConcepts(ctx, KN, "relation_types", {
      concept_groups: ["hospital_resources"],
      limit: 100,
    });
    expect(relations.map((r) => r.id).sort()).toEqual(["department_2_facility", "is_a_facility"]);
    const metrics = await b.searchConcepts(ctx, KN, "metrics", { concept_groups: ["drug_regulation"], limit: 10 });
    expect(metrics).toEqual([
      expect.objectContaining({
        id: "metric_company_approved_drug_count",
        name: "药企获批上市药品数",
        scope_type: "object_type",
        scope_ref: "company",
        unit_type: "countUnit",
        time_dimension: { field: "批准日期", format: "yyyy-MM-dd" },
        analysis_dimensions: ["company_id", "剂型"],
      }),
    ]);
  });

  it("filters metrics by what they are scoped to", async () => {
    const metrics = await backendOf().searchConcepts(ctx, KN, "metrics", {
      condition: {
        operation: "and",
        sub_conditions: [
          { field: "scope_type", operation: "==", value: "object_type" },
          { field: "scope_ref", operation: "in", value: ["disease"] },
        ],
      },
      limit: 10,
    });
    expect(metrics.map((m) => m.id)).toEqual(["metric_disease_cure_rate"]);
  });

  it("refuses an unknown concept group and a field concepts do not have", async () => {
    const group = await failureOf(
      backendOf().searchConcepts(ctx, KN, "object_types", { concept_groups: ["finance"], limit: 10 }),
    );
    expect(group.code).toBe("not_found");
    expect(group.message).toContain("finance");
    const field = await failureOf(
      backendOf().searchConcepts(ctx, KN, "object_types", {
        condition: { field: "colour", operation: "==", value: "red" },
        limit: 10,
      }),
    );
    expect(field.code).toBe("invalid_argument");
    expect(field.violations[0]?.field).toBe("condition.field");
  });

  it("queries an action type for instances: the tool it is bound to, the arguments fixed and those left, in order", async () => {
    const result = await backendOf().queryActions(ctx, KN, "generate_treatment_plan", [
      { disease_id: "disease_004790" },
      { disease_id: "disease_000001" },
      { disease_id: "disease_999999" },
    ]);
    expect(result.action_type).toMatchObject({
      id: "generate_treatment_plan",
      name: "生成治疗方案",
      object_type_id: "disease",
    });
    expect(result.action_source).toEqual({
      type: "tool",
      box_id: "box_medical_assistant",
      tool_id: "tool_generate_treatment_plan",
    });
    expect(result.total_count).toBe(2);
    expect(result.actions).toEqual([
      {
        parameters: { disease_id: "disease_004790", disease_name: "上、下气道梗阻", lang: "zh-CN" },
        dynamic_params: { patient: null, severity: null, preferences: null },
        _instance_identity: { disease_id: "disease_004790" },
        _display: "上、下气道梗阻",
      },
      expect.objectContaining({ _instance_identity: { disease_id: "disease_000001" } }),
    ]);
    expect(result.execute_url).toMatch(
      /\/api\/ontology-query\/in\/v1\/knowledge-networks\/kn_medical\/action-types\/generate_treatment_plan\/execute$/,
    );
  });

  it("says when an action type is bound to nothing, and refuses unknown types and identities without their keys", async () => {
    const b = backendOf();
    const unbound = await b.queryActions(ctx, KN, "suspend_company_production", [{ company_id: "company_000001" }]);
    expect(unbound.action_source).toBeNull();
    expect(unbound.actions).toHaveLength(1);
    const unknown = await failureOf(b.queryActions(ctx, KN, "no_such_action", []));
    expect(unknown.code).toBe("not_found");
    expect(unknown.message).toContain("no_such_action");
    const keyless = await failureOf(b.queryActions(ctx, KN, "generate_treatment_plan", [{ disease_name: "肺炎" }]));
    expect(keyless.code).toBe("invalid_argument");
    // Over HTTP the platform's words stay in the log: the field is what the caller gets.
    expect(keyless.violations).toEqual([
      {
        field: "_instance_identities[0]",
        description:
          b.kind === "http"
            ? { en: expect.any(String), zh: expect.any(String) }
            : { en: "missing primary key disease_id of disease", zh: "缺少 disease 的主键 disease_id" },
      },
    ]);
  });

  it("serves the tool box tool and the MCP server's tools the action types are bound to", async () => {
    const b = backendOf();
    const tool = await b.getToolBoxTool(ctx, "box_medical_assistant", "tool_generate_treatment_plan");
    expect(tool).toMatchObject({ tool_id: "tool_generate_treatment_plan", name: "generate_treatment_plan" });
    expect(Object.keys(tool.metadata.api_spec).sort()).toEqual(["components", "parameters", "request_body"]);
    expect((await b.listMcpTools(ctx, "mcp_hospital_service")).map((t) => t.name)).toEqual([
      "book_appointment",
      "query_queue",
    ]);
    expect((await failureOf(b.getToolBoxTool(ctx, "box_medical_assistant", "nope"))).code).toBe("not_found");
    expect((await failureOf(b.getToolBoxTool(ctx, "no_box", "nope"))).code).toBe("not_found");
    expect((await failureOf(b.listMcpTools(ctx, "mcp_unknown"))).code).toBe("not_found");
  });
});

describe("agent tool reads over HTTP", () => {
  it("sends typed searches and action queries as POSTs that say they are GETs, with the caller's identity", async () => {
    sim.clearRequests();
    await http.searchConcepts(ctx, KN, "object_types", {
      condition: text("疾病", 10),
      concept_groups: ["diagnosis"],
      limit: 5,
    });
    await http.queryActions(ctx, KN, "generate_treatment_plan", [{ disease_id: "disease_000001" }]);
    const [search, actions] = sim.requests();
    expect(search).toMatchObject({
      method: "POST",
      path: "/api/ontology-manager/in/v1/knowledge-networks/kn_medical/object-types",
      headers: expect.objectContaining({ "x-http-method-override": "GET", "x-account-id": "u-test" }),
      body: {
        concept_groups: ["diagnosis"],
        condition: text("疾病", 10),
        sort: [{ field: "_score", direction: "desc" }],
        limit: 5,
        need_total: false,
      },
    });
    expect(actions).toMatchObject({
      method: "POST",
      path: "/api/ontology-query/in/v1/knowledge-networks/kn_medical/action-types/generate_treatment_plan?include_type_info=true",
      headers: expect.objectContaining({ "x-http-method-override": "GET" }),
      body: { _instance_identities: [{ disease_id: "disease_000001" }] },
    });
  });

  it("names the platform's execute endpoint under its ontology-query URL", async () => {
    const result = await http.queryActions(ctx, KN, "generate_treatment_plan", [{ disease_id: "disease_000001" }]);
    expect(result.execute_url).toBe(
      `${sim.url}/api/ontology-query/in/v1/knowledge-networks/kn_medical/action-types/generate_treatment_plan/execute`,
    );
  });

  it("says agent-operator-integration is not configured, rather than failing on an empty URL", async () => {
    const bare = createHttpBackend({
      ontologyManagerUrl: sim.url,
      ontologyQueryUrl: sim.url,
      operatorMarketUrl: undefined,
      timeoutMs: 5000,
      maxSockets: 1,
      spelling: "new",
    });
    try {
      const err = await failureOf(bare.getToolBoxTool(ctx, "box_medical_assistant", "tool_generate_treatment_plan"));
      expect(err.code).toBe("failed_precondition");
      expect(err.message).toContain("OPERATOR_MARKET_URL");
      expect((await failureOf(bare.listMcpTools(ctx, "mcp_hospital_service"))).reason).toBe(
        "OPERATOR_MARKET_NOT_CONFIGURED",
      );
    } finally {
      bare.close();
    }
  });

  it("answers a platform 404 for an action type as the engine does, keeping the platform's error code, never the internal URL", async () => {
    const err = await failureOf(http.queryActions(ctx, KN, "no_such_action", []));
    expect(err).toMatchObject({
      code: "not_found",
      reason: "ACTION_TYPE_NOT_FOUND",
      message: "action type no_such_action does not exist in knowledge network kn_medical",
      metadata: { upstream: "ontology-query", upstream_status: "404", error_code: "OntologyQuery.ActionType.NotFound" },
    });
    expect(err.hint?.validValues).toEqual(
      (await failureOf(embedded.queryActions(ctx, KN, "no_such_action", []))).hint?.validValues,
    );
    expect(err.message).not.toContain(sim.url);
  });
});
