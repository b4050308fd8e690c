import { readFileSync } from "node:fs";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { AgentHintSchema } from "../../../gen/contextloader/common/v1/errors_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb";
import type { ActionSource } from "../../../src/kn/actions";
import type { KnowledgeNetworkBackend } from "../../../src/kn/backend";
import { EmbeddedBackend } from "../../../src/kn/embedded/engine";
import { getActionInfo } from "../../../src/knowledge/kn-tools/action-info/get-action-info";
import { testContext } from "../../helpers/call-context";
import { failure } from "../../helpers/rpc";
import { failureOf } from "../../kn/backend.contract";
import { callFails, callOk, fieldsOf } from "../../mcp/mcp-client";
import { writeEdgeBundles } from "./schema-actions-bundles";
import {
  ACCOUNT,
  BACKENDS,
  type Harness,
  SAMPLE_BUNDLE,
  SEARCH_SCHEMA_RPC,
  startHarness,
} from "./schema-actions-harness";

/**
 * get_action_info (the platform tool's §8): an action type for instances as
 * function-call tools — every action, the arguments still open as JSON
 * Schema, the fixed ones apart — through the RPC, MCP and REST, on both
 * backends; every example of the platform tool's OpenAPI file.
 */

const KN = "kn_medical";
const OPENAPI = parseYaml(readFileSync("test/fixtures/upstream/anchor-get_action_info.openapi.yaml", "utf8")) as {
  paths: Record<
    string,
    {
      post: {
        requestBody: {
          content: { "application/json": { examples: Record<string, { value: Record<string, unknown> }> } };
        };
      };
    }
  >;
  components: { schemas: { ActionRecallResponse: { required: string[]; properties: Record<string, unknown> } } };
};
const EXAMPLES = Object.entries(
  OPENAPI.paths["/api/agent-retrieval/in/v1/kn/get_action_info"]!.post.requestBody.content["application/json"].examples,
);
const EXECUTE_PATH =
  "/api/ontology-query/in/v1/knowledge-networks/kn_medical/action-types/generate_treatment_plan/execute";

/** The open arguments of generate_treatment_plan: the tool's minus what the instance and the action fix. */
const TREATMENT_PLAN_OPEN = ["x-request-source", "patient", "severity", "preferences"];

describe.each(BACKENDS)("get_action_info over the %s backend", (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kind);
  });
  afterAll(() => h.close());
  const executeUrl = () => (h.sim ? `${h.sim.url}${EXECUTE_PATH}` : EXECUTE_PATH);

  describe("the platform tool's OpenAPI examples", () => {
    it.each(EXAMPLES)(
      "%s: the REST route answers ActionRecallResponse with one tool per instance",
      async (_name, example) => {
        const res = await h.rest("get_action_info", example.value);
        expect(res.status).toBe(200);
        const schema = OPENAPI.components.schemas.ActionRecallResponse;
        for (const key of schema.required) expect(res.body).toHaveProperty(key);
        const identities = example.value["_instance_identities"] as Record<string, string>[];
        expect(res.body.headers).toEqual(ACCOUNT);
        expect(res.body._dynamic_tools).toHaveLength(identities.length);
        res.body._dynamic_tools.forEach((tool: Record<string, unknown>, i: number) => {
          expect(Object.keys(tool).sort()).toEqual([
            "api_call_strategy",
            "api_url",
            "description",
            "fixed_params",
            "name",
            "parameters",
          ]);
          expect(tool["api_url"]).toBe(executeUrl());
          expect(tool["api_call_strategy"]).toBe("kn_action_recall");
          expect(tool["fixed_params"]).toMatchObject({
            dynamic_params: { disease_id: identities[i]!["disease_id"], lang: "zh-CN" },
            _instance_identities: [identities[i]],
          });
        });
      },
    );

    it.each(EXAMPLES)("%s: the RPC answers the same tools", async (_name, example) => {
      const value = example.value as { kn_id: string; at_id: string; _instance_identities: Record<string, string>[] };
      const res = await h.rpc.getActionInfo({
        knId: value.kn_id,
        atId: value.at_id,
        instanceIdentities: value._instance_identities,
      });
      const rest = await h.rest("get_action_info", value);
      expect(res.headers).toEqual(rest.body.headers);
      expect(
        res.DynamicTools.map((t) => ({
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          api_url: t.apiUrl,
          fixed_params: t.fixedParams,
          api_call_strategy: t.apiCallStrategy,
        })),
      ).toEqual(rest.body._dynamic_tools);
    });
  });

  describe("the RPC", () => {
    it("turns each action into a function-call tool: the open arguments as JSON Schema, the fixed ones apart", async () => {
      const res = await h.rpc.getActionInfo({
        knId: KN,
        atId: "generate_treatment_plan",
        instanceIdentities: [{ disease_id: "disease_004790" }, { disease_id: "disease_000001" }],
      });
      expect(res.message).toBe("");
      expect(res.DynamicTools.map((t) => t.name)).toEqual(["generate_treatment_plan_1", "generate_treatment_plan_2"]);
      const [first] = res.DynamicTools;
      expect(first!.description).toContain("上、下气道梗阻");
      expect(first!.fixedParams).toEqual({
        dynamic_params: { disease_id: "disease_004790", disease_name: "上、下气道梗阻", lang: "zh-CN" },
        _instance_identities: [{ disease_id: "disease_004790" }],
      });
      const dynamic = (first!.parameters as { properties: { dynamic_params: Record<string, unknown> } }).properties
        .dynamic_params as { properties: Record<string, Record<string, unknown>>; required: string[] };
      expect(Object.keys(dynamic.properties)).toEqual(TREATMENT_PLAN_OPEN);
      // The body's required disease_id is fixed by the instance; patient is left to the agent.
      expect(dynamic.required).toEqual(["patient"]);
      // $ref resolved: Patient, and History inside it.
      expect(dynamic.properties["patient"]).toMatchObject({
        type: "object",
        description: "患者信息",
        required: ["age"],
        properties: {
          age: { type: "integer", description: "年龄（岁）" },
          gender: { type: "string", enum: ["male", "female"] },
          history: { type: "object", properties: { surgeries: { type: "array", items: { type: "string" } } } },
        },
      });
      expect(dynamic.properties["severity"]).toEqual({
        type: "string",
        description: "病情严重程度：mild 轻度，moderate 中度，severe 重度",
        enum: ["mild", "moderate", "severe"],
      });
      expect(first!.parameters).toMatchObject({
        type: "object",
        required: ["dynamic_params"],
        properties: { _instance_identities: { type: "array", items: { type: "object" } } },
      });
    });

    it("resolves an MCP tool's $defs for an action bound to an MCP server", async () => {
      const res = await h.rpc.getActionInfo({
        knId: KN,
        atId: "book_department_appointment",
        instanceIdentities: [{ department_id: "department_000002" }],
      });
      const [tool] = res.DynamicTools;
      expect(tool!.name).toBe("book_appointment");
      expect(tool!.fixedParams).toMatchObject({
        dynamic_params: { department_id: "department_000002", department_name: "呼吸内科" },
      });
      const dynamic = (tool!.parameters as { properties: { dynamic_params: Record<string, unknown> } }).properties
        .dynamic_params;
      expect(dynamic).toMatchObject({
        required: ["patient", "date"],
        properties: {
          date: { type: "string" },
          period: { enum: ["上午", "下午"] },
          patient: { type: "object", required: ["name", "phone"], properties: { phone: { type: "string" } } },
        },
      });
      expect(JSON.stringify(tool!.parameters)).not.toContain("$defs");
      expect(JSON.stringify(tool!.parameters)).not.toContain("$ref");
    });

    it("echoes the caller's identity in headers, for the runtime to send on execution", async () => {
      const res = await h.rpcWith({ "x-account-id": "app-7", "x-account-type": "app" }).getActionInfo({
        knId: KN,
        atId: "recall_drug_product",
        instanceIdentities: [{ drug_product_id: "drug_product_000001" }],
      });
      expect(res.headers).toEqual({ "x-account-id": "app-7", "x-account-type": "app" });
      expect(res.DynamicTools[0]!.fixedParams).toMatchObject({
        dynamic_params: { drug_product_id: "drug_product_000001", approval_number: expect.any(String) },
      });
    });

    it("returns no tool and says why when the action type is bound to nothing", async () => {
      const request = {
        knId: KN,
        atId: "suspend_company_production",
        instanceIdentities: [{ company_id: "company_000001" }],
      };
      const res = await h.rpc.getActionInfo(request);
      expect(res.DynamicTools).toEqual([]);
      expect(res.message).toContain("is bound to no executable tool or MCP tool");
      expect(res.message).toContain("search_schema");
      const zh = await h.rpcWith({ ...ACCOUNT, "accept-language": "zh" }).getActionInfo(request);
      expect(zh.message).toContain("没有绑定可执行的工具");
      expect(zh.message).toContain("search_schema");
    });

    it("returns no tool and says what to do when no instance given exists", async () => {
      const res = await h.rpc.getActionInfo({
        knId: KN,
        atId: "generate_treatment_plan",
        instanceIdentities: [{ disease_id: "disease_999999" }],
      });
      expect(res.DynamicTools).toEqual([]);
      expect(res.message).toContain("query_object_instance");
      expect(res.message).toContain("_instance_identity");
    });

    it("names the instances that got no tool when some did", async () => {
      const res = await h.rpc.getActionInfo({
        knId: KN,
        atId: "generate_treatment_plan",
        instanceIdentities: [{ disease_id: "disease_000001" }, { disease_id: "disease_999999" }],
      });
      expect(res.DynamicTools.map((t) => t.name)).toEqual(["generate_treatment_plan"]);
      expect(res.message).toContain('{"disease_id":"disease_999999"}');
    });

    it("holds at most 20 tools without instances, and says to name them", async () => {
      const res = await h.rpc.getActionInfo({ knId: KN, atId: "generate_treatment_plan" });
      expect(res.DynamicTools).toHaveLength(20);
      expect(res.message).toContain("tool definitions are returned for the first 20 only");
    });

    it("refuses an unknown action type, pointing at search_schema", async () => {
      const err = await failure(h.rpc.getActionInfo({ knId: KN, atId: "launch_rocket" }));
      expect(err.code).toBe(Code.NotFound);
      expect(err.rawMessage).toContain("launch_rocket");
      const [hint] = err.findDetails(AgentHintSchema);
      expect(hint?.nextRpc).toBe(SEARCH_SCHEMA_RPC);
      const [bad] = err.findDetails(BadRequestSchema);
      expect(bad?.fieldViolations.map((v) => v.field)).toEqual(["at_id"]);
      if (h.sim) expect(err.rawMessage).not.toContain(h.sim.url);
    });

    it("refuses identities without their primary keys, and a missing at_id", async () => {
      const keyless = await failure(
        h.rpc.getActionInfo({
          knId: KN,
          atId: "generate_treatment_plan",
          instanceIdentities: [{ disease_name: "肺炎" }],
        }),
      );
      expect(keyless.code).toBe(Code.InvalidArgument);
      expect(keyless.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field).toBe("_instance_identities[0]");
      const nameless = await failure(h.rpc.getActionInfo({ knId: KN }));
      expect(nameless.code).toBe(Code.InvalidArgument);
      expect(nameless.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(["at_id"]);
    });

    it("writes the function-call definitions with output_format, in the platform's shape", async () => {
      const identities = [{ disease_id: "disease_000001" }, { disease_id: "disease_000002" }];
      const res = await h.rpc.getActionInfo({
        knId: KN,
        atId: "generate_treatment_plan",
        instanceIdentities: identities,
        outputFormat: "json",
      });
      expect(res.DynamicTools).toEqual([]);
      const rest = await h.rest("get_action_info", {
        kn_id: KN,
        at_id: "generate_treatment_plan",
        _instance_identities: identities,
      });
      expect(JSON.parse(res.text)).toEqual(rest.body);
      const [first] = rest.body._dynamic_tools;
      expect(Object.keys(first).sort()).toEqual(
        ["api_call_strategy", "api_url", "description", "fixed_params", "name", "parameters"].sort(),
      );
      expect(first.parameters.properties.dynamic_params.properties.patient.properties.gender).toMatchObject({
        type: "string",
        enum: ["male", "female"],
      });
    });
  });

  describe("the MCP tool", () => {
    it("takes the platform's argument name _instance_identities and answers the tools", async () => {
      const { tools } = await h.mcp.listTools();
      const tool = tools.find((t) => t.name === "get_action_info")!;
      expect(tool.inputSchema.required).toEqual(["at_id"]);
      expect(Object.keys(tool.inputSchema.properties ?? {})).toEqual([
        "kn_id",
        "at_id",
        "_instance_identities",
        "output_format",
        "response_format",
      ]);
      const answer = await callOk(h.mcp, "get_action_info", {
        kn_id: KN,
        at_id: "generate_treatment_plan",
        _instance_identities: [{ disease_id: "disease_004790" }],
      });
      const [defined] = answer["_dynamic_tools"] as Record<string, unknown>[];
      expect(defined).toMatchObject({
        name: "generate_treatment_plan",
        api_call_strategy: "kn_action_recall",
        fixed_params: { _instance_identities: [{ disease_id: "disease_004790" }] },
      });
      expect(answer["headers"]).toEqual(ACCOUNT);
    });

    it("fails naming the argument, and the next tool for an unknown action type", async () => {
      const bad = await callFails(h.mcp, "get_action_info", {
        kn_id: KN,
        at_id: "generate_treatment_plan",
        _instance_identities: [{ disease_id: { nested: 1 } }],
      });
      expect(fieldsOf(bad)).toEqual(["_instance_identities[0].disease_id"]);
      const unknown = await callFails(h.mcp, "get_action_info", { kn_id: KN, at_id: "launch_rocket" });
      expect(unknown).toMatchObject({ code: "NOT_FOUND", next_tool: "search_schema" });
    });
  });

  describe("the REST route", () => {
    it("takes the older single _instance_identity, and kn_id from x-kn-id", async () => {
      const res = await h.rest(
        "get_action_info",
        { at_id: "generate_treatment_plan", _instance_identity: { disease_id: "disease_000003" } },
        { ...ACCOUNT, "x-kn-id": KN },
      );
      expect(res.status).toBe(200);
      expect(res.body._dynamic_tools[0].fixed_params._instance_identities).toEqual([{ disease_id: "disease_000003" }]);
    });

    it("says why there is no tool in message, and reports errors in the platform's envelope", async () => {
      const unbound = await h.rest("get_action_info", { kn_id: KN, at_id: "suspend_company_production" });
      expect(unbound.body).toEqual({
        headers: ACCOUNT,
        _dynamic_tools: [],
        message: expect.stringContaining("is bound to no executable tool"),
      });
      const unknown = await h.rest("get_action_info", { kn_id: KN, at_id: "launch_rocket" });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toMatchObject({ code: "ACTION_TYPE_NOT_FOUND", link: "" });
      expect(unknown.body.solution).toContain("SearchSchema");
      const malformed = await h.rest("get_action_info", {
        kn_id: KN,
        at_id: "generate_treatment_plan",
        _instance_identities: "disease_000001",
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body.details.field_violations[0].field).toBe("_instance_identities");
    });
  });
});

describe.each(BACKENDS)(
  "get_action_info with tool definitions the sample does not have, over the %s backend",
  (kind) => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness(kind, {}, writeEdgeBundles());
    });
    afterAll(() => h.close());
    const ward = [{ ward_id: "w1" }];

    it("refuses a tool that defines one parameter in two places, naming both (a platform problem, not the caller's)", async () => {
      const err = await failure(h.rpc.getActionInfo({ knId: "kn_edge", atId: "dup_param", instanceIdentities: ward }));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toContain('defines the parameter "lang" twice (in query and in body)');
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("DUPLICATE_TOOL_PARAMETER");
      const rest = await h.rest("get_action_info", {
        kn_id: "kn_edge",
        at_id: "dup_param",
        _instance_identities: ward,
      });
      expect(rest.status).toBe(400);
      expect(rest.body.code).toBe("DUPLICATE_TOOL_PARAMETER");
    });

    it("follows $ref three levels deep and cuts deeper ones and cycles to their type and description", async () => {
      const res = await h.rpc.getActionInfo({ knId: "kn_edge", atId: "deep_refs", instanceIdentities: ward });
      const open = (
        res.DynamicTools[0]!.parameters as { properties: { dynamic_params: { properties: Record<string, unknown> } } }
      ).properties.dynamic_params.properties;
      expect(Object.keys(open)).toEqual(["chain", "tree"]);
      expect(open["chain"]).toEqual({
        type: "object",
        description: "level 1",
        properties: {
          next: {
            type: "object",
            description: "level 2",
            properties: {
              next: {
                type: "object",
                description: "level 3",
                properties: { next: { type: "object", description: "level 4" } },
              },
            },
          },
        },
      });
      expect(open["tree"]).toEqual({
        type: "object",
        description: "a tree node",
        properties: { child: { type: "object", description: "a tree node" }, label: { type: "string" } },
      });
    });

    it("refuses a tool whose $ref points at nothing, naming the reference", async () => {
      const err = await failure(
        h.rpc.getActionInfo({ knId: "kn_edge", atId: "dangling_ref", instanceIdentities: ward }),
      );
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toContain("#/components/schemas/Missing");
    });
  },
);

describe("get_action_info with bindings the platform may hold but a bundle cannot", () => {
  const embedded = EmbeddedBackend.fromFiles([SAMPLE_BUNDLE], { timeZone: "Asia/Shanghai" });
  /** The sample engine, its action query answering `source` as the action type's binding. */
  const boundTo = (source: ActionSource): KnowledgeNetworkBackend =>
    Object.assign(Object.create(embedded) as KnowledgeNetworkBackend, {
      queryActions: async (...args: Parameters<KnowledgeNetworkBackend["queryActions"]>) => ({
        ...(await embedded.queryActions(...args)),
        action_source: source,
      }),
    });
  const input = {
    kn_id: KN,
    at_id: "generate_treatment_plan",
    instance_identities: [{ disease_id: "disease_000001" }],
  };

  it("says an MCP server does not offer the tool an action type names, listing those it does", async () => {
    const err = await failureOf(
      getActionInfo(
        { backend: boundTo({ type: "mcp", mcp_id: "mcp_hospital_service", tool_name: "gone" }) },
        testContext(),
        input,
      ),
    );
    expect(err).toMatchObject({ code: "not_found", reason: "MCP_TOOL_NOT_FOUND" });
    expect(err.text.zh).toContain("未找到指定工具");
    expect(err.hint?.validValues).toEqual(["book_appointment", "query_queue"]);
  });

  it("refuses a binding of a type it cannot execute", async () => {
    const err = await failureOf(getActionInfo({ backend: boundTo({ type: "workflow" }) }, testContext(), input));
    expect(err).toMatchObject({ code: "failed_precondition", reason: "UNSUPPORTED_ACTION_SOURCE" });
    expect(err.message).toContain('"workflow"');
  });
});
