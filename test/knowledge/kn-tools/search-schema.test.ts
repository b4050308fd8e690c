import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../../gen/contextloader/common/v1/errors_pb";
import { BadRequestSchema } from "../../../gen/google/rpc/error_details_pb";
import { failure } from "../../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../../helpers/scripted-llm";
import { callFails, callOk, fieldsOf, read } from "../../mcp/mcp-client";
import { ACCOUNT, BACKENDS, type Harness, startHarness } from "./schema-actions-harness";

/**
 * search_schema (the platform tool's §3): the relation, object, action and
 * metric types a question needs, through the RPC, MCP and the platform's REST
 * route, on the embedded engine and on the platform's APIs (the simulator).
 */

const KN = "kn_medical";
const QUESTION = "上气道梗阻有哪些症状";
/** A question the medical network has nothing for. */
const OTHER_DOMAIN = "上个季度的销售额是多少";
/** The sample's relation types in network order (the export's 17, then the two binding skills). */
const NETWORK_ORDER = ["belongs_to", "checks", "comly_with", "cures", "department_2_facility"];

describe.each(BACKENDS)("search_schema over the %s backend", (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kind);
  });
  afterAll(() => h.close());

  describe("the RPC", () => {
    it("ranks relation types, returns the object types at their ends, their action types and the metrics of those types", async () => {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 3 });
      expect(res.rankingMethod).toBe("embedding_lexical");
      expect(res.relationTypes.map((r) => r.conceptId)).toEqual(["has_symptom", "has_complication", "designated_to"]);
      expect(res.relationTypes[0]).toMatchObject({
        conceptType: "relation_type",
        conceptName: "疾病症状",
        sourceObjectTypeId: "disease",
        targetObjectTypeId: "symptom",
      });
      expect(res.objectTypes.map((o) => o.conceptId)).toEqual(["disease", "symptom", "department"]);
      const disease = res.objectTypes[0]!;
      expect(disease).toMatchObject({
        conceptType: "object_type",
        conceptName: "疾病",
        primaryKeys: ["disease_id"],
        displayKey: "disease_name",
        tags: ["疾病"],
      });
      expect(disease.dataProperties.find((p) => p.name === "disease_name")).toMatchObject({
        displayName: "疾病名称",
        type: "varchar",
        conditionOperations: ["==", "!=", "like", "not_like", "in", "not_in"],
      });
      expect(res.actionTypes.map((a) => a.id).sort()).toEqual([
        "book_department_appointment",
        "generate_treatment_plan",
      ]);
      expect(res.actionTypes.find((a) => a.id === "generate_treatment_plan")).toMatchObject({
        name: "生成治疗方案",
        objectTypeId: "disease",
        objectTypeName: "疾病",
        knId: KN,
      });
      // The disease metric first: it is scoped to a type the question selected.
      expect(res.metricTypes[0]).toMatchObject({
        id: "metric_disease_cure_rate",
        scopeType: "object_type",
        scopeRef: "disease",
      });
      expect(res.warnings).toEqual([]);
    });

    it("links a metric to the object type and the logic property that evaluates it", async () => {
      const res = await h.rpc.searchSchema({ query: "药企获批上市的药品数量", knId: KN, maxConcepts: 5 });
      const metric = res.metricTypes.find((m) => m.id === "metric_company_approved_drug_count")!;
      expect(res.metricTypes[0]?.id).toBe("metric_company_approved_drug_count");
      expect(metric).toMatchObject({
        name: "药企获批上市药品数",
        unitType: "countUnit",
        unit: "times",
        metricType: "atomic",
        scopeRef: "company",
        logicProperty: "approved_drug_count",
        analysisDimensions: ["company_id", "剂型"],
        timeDimension: { field: "批准日期", format: "yyyy-MM-dd" },
        calculationFormula: { aggregation: "count" },
      });
      const company = res.objectTypes.find((o) => o.conceptId === "company")!;
      expect(company.logicProperties.find((lp) => lp.name === "approved_drug_count")).toMatchObject({
        type: "metric",
        dataSource: { type: "metric", id: "metric_company_approved_drug_count" },
      });
    });

    it("keeps every end of the kept relation types, even past max_concepts (RelationEndpointsMayExceedMaxConceptsForCompleteness)", async () => {
      const res = await h.rpc.searchSchema({ query: "疾病症状", knId: KN, maxConcepts: 1 });
      expect(res.relationTypes.map((r) => r.conceptId)).toEqual(["has_symptom"]);
      expect(res.objectTypes.map((o) => o.conceptId)).toEqual(["disease", "symptom"]);
      expect(res.actionTypes).toHaveLength(1);
      expect(res.metricTypes).toHaveLength(1);
    });

    it("returns 10 of each by default", async () => {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN });
      expect(res.relationTypes).toHaveLength(10);
      expect(res.objectTypes.length).toBeGreaterThanOrEqual(10);
    });

    it("shows only the concept types search_scope includes, still recalled from all of them", async () => {
      const res = await h.rpc.searchSchema({
        query: QUESTION,
        knId: KN,
        maxConcepts: 2,
        searchScope: { includeRelationTypes: false, includeMetricTypes: false },
      });
      expect(res.relationTypes).toEqual([]);
      expect(res.metricTypes).toEqual([]);
      // The ends of the best relation types, cut to max_concepts now that no relation needs them.
      expect(res.objectTypes.map((o) => o.conceptId)).toEqual(["disease", "symptom"]);
      const actionsOnly = await h.rpc.searchSchema({
        query: "生成治疗方案",
        knId: KN,
        searchScope: { includeObjectTypes: false, includeRelationTypes: false, includeMetricTypes: false },
      });
      expect(actionsOnly.objectTypes).toEqual([]);
      expect(actionsOnly.actionTypes[0]?.id).toBe("generate_treatment_plan");
    });

    it("leaves out tags, primary keys, concept_type and property and relation comments with schema_brief", async () => {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 1, schemaBrief: true });
      const disease = res.objectTypes[0]!;
      expect(disease).toMatchObject({
        conceptType: "",
        conceptId: "disease",
        comment: "疾病",
        tags: [],
        primaryKeys: [],
      });
      expect(disease.dataProperties.every((p) => p.comment === "")).toBe(true);
      expect(res.relationTypes[0]).toMatchObject({ conceptType: "", conceptId: "has_symptom", comment: "" });
    });

    it("keeps the network's order with enable_rerank=false", async () => {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 5, enableRerank: false });
      expect(res.rankingMethod).toBe("network_order");
      expect(res.relationTypes.map((r) => r.conceptId)).toEqual(NETWORK_ORDER);
    });

    it("searches within concept groups, and names the groups there are when one is unknown", async () => {
      const res = await h.rpc.searchSchema({
        query: "挂号 设备",
        knId: KN,
        searchScope: { conceptGroups: [" hospital_resources", "", "hospital_resources"] },
      });
      expect(res.objectTypes.map((o) => o.conceptId).sort()).toEqual(["department", "facility"]);
      expect(res.relationTypes.map((r) => r.conceptId).sort()).toEqual(["department_2_facility", "is_a_facility"]);
      expect(res.actionTypes.map((a) => a.id)).toEqual(["book_department_appointment"]);
      expect(res.metricTypes).toEqual([]);

      const err = await failure(
        h.rpc.searchSchema({ query: "挂号", knId: KN, searchScope: { conceptGroups: ["diagnosis", "finance"] } }),
      );
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toContain("finance");
      expect(err.rawMessage).toContain("hospital_resources (医院资源)");
      const [hint] = err.findDetails(AgentHintSchema);
      expect(hint?.validValues).toEqual(["diagnosis", "medication", "drug_regulation", "hospital_resources"]);
      const [bad] = err.findDetails(BadRequestSchema);
      expect(bad?.fieldViolations.map((v) => v.field)).toEqual(["search_scope.concept_groups[1]"]);
    });

    it("refuses a scope that includes nothing, max_concepts outside 1..100 and an empty query, all at once", async () => {
      const err = await failure(
        h.rpc.searchSchema({
          query: "  ",
          knId: KN,
          maxConcepts: 0,
          searchScope: {
            includeObjectTypes: false,
            includeRelationTypes: false,
            includeActionTypes: false,
            includeMetricTypes: false,
          },
        }),
      );
      expect(err.code).toBe(Code.InvalidArgument);
      const [bad] = err.findDetails(BadRequestSchema);
      expect(bad?.fieldViolations.map((v) => v.field).sort()).toEqual([
        "max_concepts",
        "query",
        "search_scope.include_object_types",
      ]);
      expect(err.rawMessage).toContain("search_scope.include_object_types: at least one concept type must be enabled");
      expect(err.rawMessage).toContain("max_concepts: must be greater than 0");
      expect((await failure(h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 101 }))).code).toBe(
        Code.InvalidArgument,
      );
    });

    it("takes the network from x-kn-id when kn_id is empty, and asks for one when neither is given", async () => {
      const viaHeader = await h
        .rpcWith({ ...ACCOUNT, "x-kn-id": KN })
        .searchSchema({ query: QUESTION, maxConcepts: 1 });
      expect(viaHeader.relationTypes[0]?.conceptId).toBe("has_symptom");
      const err = await failure(h.rpc.searchSchema({ query: QUESTION }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toContain("kn_id is required");
    });

    it("warns that nothing fits a question about another domain (NO_RELEVANT_CONCEPT), keeping the four lists", async () => {
      for (const enableRerank of [true, false]) {
        const res = await h.rpc.searchSchema({ query: OTHER_DOMAIN, knId: KN, maxConcepts: 3, enableRerank });
        expect(res.warnings.filter((w) => w.reason === "NO_RELEVANT_CONCEPT")).toEqual([
          expect.objectContaining({
            target: "query",
            message: expect.stringMatching(
              /^nothing in knowledge network kn_medical fits this question: .*another domain/,
            ),
          }),
        ]);
        // Flagged, not emptied: the network's closest types are still there for the agent to judge.
        expect(res.relationTypes).toHaveLength(3);
        expect(res.objectTypes.length).toBeGreaterThan(0);
      }
      // A question about the network is not flagged, even one worded loosely.
      for (const query of [QUESTION, "发烧咳嗽是什么病", "阿莫西林是哪家药企生产的"]) {
        const res = await h.rpc.searchSchema({ query, knId: KN });
        expect(res.warnings.map((w) => w.reason)).not.toContain("NO_RELEVANT_CONCEPT");
      }
    });

    it("says an unknown network is not found, never an empty schema", async () => {
      const err = await failure(h.rpc.searchSchema({ query: QUESTION, knId: "kn_nope" }));
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toContain("kn_nope");
      if (h.sim) expect(err.rawMessage).not.toContain(h.sim.url);
    });

    it("writes the compact answer in text with output_format", async () => {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2, outputFormat: "json" });
      expect(res.relationTypes).toEqual([]);
      const answer = JSON.parse(res.text) as Record<string, unknown>;
      expect(answer).toMatchObject({
        kn_id: KN,
        ranking_method: "embedding_lexical",
        relation_types: [
          { id: "has_symptom", name: "疾病症状", from: "disease", to: "symptom" },
          { id: "has_complication", from: "disease", to: "disease" },
        ],
        object_types: [{ id: "disease" }, { id: "symptom" }],
        default_operations: "==, !=, like, not_like, in, not_in",
      });
      expect(answer["metric_types"]).toContainEqual(
        expect.objectContaining({ id: "metric_disease_cure_rate", object_type: "disease" }),
      );
      const yaml = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2, outputFormat: "yaml" });
      expect(read(yaml.text, "yaml")).toEqual(answer);
    });
  });

  describe("the MCP tool", () => {
    it("is listed with its arguments, query required", async () => {
      const { tools } = await h.mcp.listTools();
      const tool = tools.find((t) => t.name === "search_schema")!;
      expect(tool.description).toContain("query_object_instance");
      expect(tool.inputSchema.required).toEqual(["query"]);
      expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual([
        "query",
        "kn_id",
        "search_scope",
        "max_concepts",
        "schema_brief",
        "enable_rerank",
        "output_format",
        "response_format",
      ]);
      expect(tool.inputSchema.properties!["max_concepts"]).toMatchObject({ minimum: 1, maximum: 100, default: 10 });
    });

    it("answers TOON tables by default", async () => {
      const answer = await callOk(h.mcp, "search_schema", { query: QUESTION, kn_id: KN, max_concepts: 2 });
      expect(answer["relation_types"]).toEqual([
        { id: "has_symptom", name: "疾病症状", from: "disease", to: "symptom" },
        { id: "has_complication", name: "并发症", from: "disease", to: "disease" },
      ]);
      expect(answer["properties"]).toContainEqual(
        expect.objectContaining({ object_type: "symptom", name: "symptom_name", operations: "default" }),
      );
    });

    it("lists the warning that nothing fits a question about another domain", async () => {
      const answer = await callOk(h.mcp, "search_schema", { query: OTHER_DOMAIN, kn_id: KN, max_concepts: 2 });
      expect(answer["warnings"]).toContainEqual(
        expect.objectContaining({ target: "query", reason: "NO_RELEVANT_CONCEPT" }),
      );
      expect(answer["relation_types"]).toHaveLength(2);
      const fitting = await callOk(h.mcp, "search_schema", { query: QUESTION, kn_id: KN, max_concepts: 2 });
      expect(fitting["warnings"]).toBeUndefined();
    });

    it("fails with the invalid arguments, the known groups and the next tool", async () => {
      const scope = await callFails(h.mcp, "search_schema", {
        query: QUESTION,
        kn_id: KN,
        search_scope: {
          include_object_types: false,
          include_relation_types: false,
          include_action_types: false,
          include_metric_types: false,
        },
      });
      expect(scope.code).toBe("INVALID_ARGUMENT");
      expect(fieldsOf(scope)).toEqual(["search_scope.include_object_types"]);
      const group = await callFails(h.mcp, "search_schema", {
        query: QUESTION,
        kn_id: KN,
        search_scope: { concept_groups: ["finance"] },
      });
      expect(group).toMatchObject({ code: "NOT_FOUND", reason: "CONCEPT_GROUP_NOT_FOUND" });
      expect(group.valid_values).toContain("diagnosis");
      const nameless = await callFails(h.mcp, "search_schema", { query: QUESTION });
      expect(nameless.reason).toBe("KN_ID_REQUIRED");
    });
  });

  describe("the REST route", () => {
    it("answers the compact answer as TOON or YAML with ?response_format, the same as the MCP tool's", async () => {
      const body = { query: QUESTION, kn_id: KN, max_concepts: 2 };
      const tool = await callOk(h.mcp, "search_schema", body);
      for (const format of ["toon", "yaml"] as const) {
        const res = await fetch(
          `${h.server.baseUrl}/api/agent-retrieval/in/v1/kn/search_schema?response_format=${format}`,
          {
            method: "POST",
            headers: { "content-type": "application/json", ...ACCOUNT },
            body: JSON.stringify(body),
          },
        );
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toBe(`application/${format}; charset=utf-8`);
        expect(read(await res.text(), format)).toEqual(tool);
      }
      const bad = await fetch(`${h.server.baseUrl}/api/agent-retrieval/in/v1/kn/search_schema?response_format=xml`, {
        method: "POST",
        headers: { "content-type": "application/json", ...ACCOUNT },
        body: JSON.stringify(body),
      });
      expect(bad.status).toBe(400);
      expect(
        ((await bad.json()) as { details: { field_violations: { field: string }[] } }).details.field_violations,
      ).toEqual([expect.objectContaining({ field: "response_format" })]);
    });

    it("answers the four lists and the warning for a question about another domain", async () => {
      const res = await h.rest("search_schema", { query: OTHER_DOMAIN, kn_id: KN, max_concepts: 1 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        "action_types",
        "metric_types",
        "object_types",
        "ranking_method",
        "relation_types",
        "warnings",
      ]);
      expect(res.body.warnings).toEqual([expect.objectContaining({ target: "query", reason: "NO_RELEVANT_CONCEPT" })]);
    });

    it("answers the platform tool's shape: four concept lists always present, concepts by concept_id", async () => {
      const res = await h.rest("search_schema", { query: QUESTION, kn_id: KN, max_concepts: 1 });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        "action_types",
        "metric_types",
        "object_types",
        "ranking_method",
        "relation_types",
      ]);
      expect(res.body.relation_types).toEqual([
        {
          concept_type: "relation_type",
          concept_id: "has_symptom",
          concept_name: "疾病症状",
          comment: "",
          source_object_type_id: "disease",
          target_object_type_id: "symptom",
        },
      ]);
      expect(Object.keys(res.body.object_types[0]).sort()).toEqual([
        "comment",
        "concept_id",
        "concept_name",
        "concept_type",
        "data_properties",
        "display_key",
        "logic_properties",
        "primary_keys",
        "tags",
      ]);
      expect(Object.keys(res.body.action_types[0]).sort()).toEqual([
        "action_type",
        "comment",
        "id",
        "kn_id",
        "name",
        "object_type_id",
        "object_type_name",
        "tags",
      ]);
    });

    it("leaves the brief mode's fields out, and every list is there even when excluded", async () => {
      const res = await h.rest("search_schema", {
        query: QUESTION,
        kn_id: KN,
        max_concepts: 1,
        schema_brief: true,
        search_scope: { include_action_types: false, include_metric_types: false },
      });
      expect(res.body.action_types).toEqual([]);
      expect(res.body.metric_types).toEqual([]);
      expect(Object.keys(res.body.object_types[0]).sort()).toEqual([
        "comment",
        "concept_id",
        "concept_name",
        "data_properties",
        "display_key",
        "logic_properties",
      ]);
      expect(Object.keys(res.body.object_types[0].data_properties[0]).sort()).toEqual([
        "condition_operations",
        "display_name",
        "name",
        "type",
      ]);
      expect(res.body.relation_types[0]).toEqual({
        concept_id: "has_symptom",
        concept_name: "疾病症状",
        source_object_type_id: "disease",
        target_object_type_id: "symptom",
      });
    });

    it("takes kn_id from x-kn-id, and reports errors in the platform's envelope", async () => {
      const viaHeader = await h.rest(
        "search_schema",
        { query: QUESTION, max_concepts: 1 },
        { ...ACCOUNT, "x-kn-id": KN },
      );
      expect(viaHeader.body.relation_types[0].concept_id).toBe("has_symptom");
      const bad = await h.rest("search_schema", { query: QUESTION, kn_id: KN, max_concepts: 0, colour: "red" });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ code: "INVALID_ARGUMENT", link: "", solution: expect.any(String) });
      expect(bad.body.description).toContain("max_concepts: must be greater than 0");
      expect(bad.body.details.field_violations.map((v: { field: string }) => v.field).sort()).toEqual([
        "colour",
        "max_concepts",
      ]);
      expect(bad.body.details.trace_id).toMatch(/^[0-9a-f]{32}$/);
      const missing = await h.rest("search_schema", { query: QUESTION });
      expect(missing.status).toBe(400);
      expect(missing.body.code).toBe("KN_ID_REQUIRED");
      const unknown = await h.rest("search_schema", {
        query: QUESTION,
        kn_id: KN,
        search_scope: { concept_groups: ["x"] },
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.details.valid_values).toEqual([
        "diagnosis",
        "medication",
        "drug_regulation",
        "hospital_resources",
      ]);
    });
  });
});

describe("search_schema when the platform's metric search fails", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness("http");
  });
  afterAll(() => h.close());
  const noFaults = { errorRate: 0, match: undefined };

  it("fails the call, naming the way around it (include_metric_types=false), which then works", async () => {
    h.sim!.setFaults({ errorRate: 1, match: "/metrics " });
    try {
      const err = await failure(h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2 }));
      expect(err.code).toBe(Code.Unavailable);
      expect(err.rawMessage).toContain("metric types could not be searched");
      expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("search_scope.include_metric_types=false");
      const without = await h.rpc.searchSchema({
        query: QUESTION,
        knId: KN,
        maxConcepts: 2,
        searchScope: { includeMetricTypes: false },
      });
      expect(without.relationTypes.map((r) => r.conceptId)).toEqual(["has_symptom", "has_complication"]);
    } finally {
      h.sim!.setFaults(noFaults);
    }
  });

  it("answers the metrics matching the question with a warning when those of the selected types cannot be read", async () => {
    // Only the second metric search (by scope_ref) fails.
    h.sim!.setFaults({ errorRate: 1, match: "scope_ref" });
    try {
      const res = await h.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2 });
      expect(res.metricTypes.length).toBeGreaterThan(0);
      expect(res.warnings).toEqual([
        expect.objectContaining({
          target: "metric_types",
          message: expect.stringContaining("only metrics matching the question's words are returned"),
        }),
      ]);
    } finally {
      h.sim!.setFaults(noFaults);
    }
  });
});

describe("search_schema with a reranker", () => {
  let llm: ScriptedLlm;
  let ranked: Harness;
  let broken: Harness;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    [ranked, broken] = await Promise.all([
      startHarness("embedded", { RERANKER_URL: llm.rerankUrl }),
      // Nothing listens on port 9: the reranker fails at once.
      startHarness("embedded", { RERANKER_URL: "http://127.0.0.1:9/rerank", RERANKER_TIMEOUT_MS: "2000" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([ranked.close(), broken.close()]);
    await llm.close();
  });

  it("ranks with the reranker when one is configured", async () => {
    const res = await ranked.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2 });
    expect(res.rankingMethod).toBe("reranker");
    expect(res.warnings).toEqual([]);
    expect(res.relationTypes[0]?.conceptId).toBe("has_symptom");
  });

  it("still says when nothing fits: the floor is judged on its own scale, not the reranker's", async () => {
    const res = await ranked.rpc.searchSchema({ query: OTHER_DOMAIN, knId: KN, maxConcepts: 2 });
    expect(res.rankingMethod).toBe("reranker");
    expect(res.warnings.map((w) => w.reason)).toContain("NO_RELEVANT_CONCEPT");
  });

  it("says so when the reranker fails, and ranks by embeddings and words instead (never silently)", async () => {
    const res = await broken.rpc.searchSchema({ query: QUESTION, knId: KN, maxConcepts: 2 });
    expect(res.rankingMethod).toBe("embedding_lexical");
    expect(res.warnings).toEqual([
      expect.objectContaining({
        target: "reranker",
        message: expect.stringContaining("ranked by embeddings and tokens instead"),
      }),
    ]);
    expect(res.relationTypes[0]?.conceptId).toBe("has_symptom");
  });
});
