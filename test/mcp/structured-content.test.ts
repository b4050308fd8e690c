import { create, toJson } from "@bufbuild/protobuf";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GetActionInfoResponseSchema, SubgraphObjectSchema } from "../../gen/contextloader/kntools/v1/kntools_pb";
import { ACCOUNT, BACKENDS, type Harness, startHarness } from "../knowledge/kn-tools/schema-actions-harness";
import { TOOL_NAMES } from "./mcp-client";

/**
 * MCP 2025-06-18 typed results, on both backends: every tool publishes an
 * outputSchema (the JSON Schema of its RPC answer, generated from the proto)
 * and answers structuredContent that validates against it — the SDK client
 * the harness connects with lists the tools first, so it checks every result
 * itself and fails one that does not match. Here: the platform's field names
 * in that content, get_action_info's function-call definitions, one spelling
 * of the instance fields across tools, and that the schemas refuse what they
 * should (a schema that accepts anything would make the SDK's check vacuous).
 */

const KN = "kn_medical";
const OBSTRUCTION = "disease_004790";

describe.each(BACKENDS)("structured content over MCP (%s backend)", (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await h.mcp.callTool({ name, arguments: args });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };

  it("lists every tool with an object outputSchema that compiles", async () => {
    const { tools } = await h.mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    const ajv = new AjvJsonSchemaValidator();
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      // The RPC answer's `text` is the MCP text content, not a field of the structured one.
      expect(Object.keys(tool.outputSchema?.properties ?? {}), tool.name).not.toContain("text");
      expect(() => ajv.getValidator(tool.outputSchema!), tool.name).not.toThrow();
    }
  });

  it("search_schema: structuredContent in the platform's names, validated, and refused when changed", async () => {
    const structured = await call("search_schema", { kn_id: KN, query: "上气道梗阻有哪些症状" });
    expect(Object.keys(structured)).toEqual(
      expect.arrayContaining(["object_types", "relation_types", "action_types", "metric_types"]),
    );
    const objectTypes = structured["object_types"] as Record<string, unknown>[];
    expect(objectTypes.map((o) => o["concept_id"])).toContain("disease");
    expect(objectTypes[0]).toHaveProperty("data_properties");
    expect(objectTypes[0]).toHaveProperty("concept_name");

    const { tools } = await h.mcp.listTools();
    const schema = tools.find((t) => t.name === "search_schema")!.outputSchema!;
    const validate = new AjvJsonSchemaValidator().getValidator(schema);
    expect(validate(structured).valid).toBe(true);
    expect(validate({ ...structured, colour: "red" }).valid).toBe(false);
    const { relation_types: _dropped, ...missing } = structured;
    expect(validate(missing).valid).toBe(false);
    expect(validate({ ...structured, object_types: [{ ...objectTypes[0], concept_id: 7 }] }).valid).toBe(false);
  });

  it("get_action_info: the platform's function-call definitions, the same as its REST route's", async () => {
    const identities = [{ disease_id: "disease_000001" }, { disease_id: "disease_000002" }];
    const structured = await call("get_action_info", {
      kn_id: KN,
      at_id: "generate_treatment_plan",
      _instance_identities: identities,
    });
    const rest = await h.rest("get_action_info", {
      kn_id: KN,
      at_id: "generate_treatment_plan",
      _instance_identities: identities,
    });
    expect(rest.status).toBe(200);
    expect(structured["headers"]).toEqual(ACCOUNT);
    expect(structured["_dynamic_tools"]).toEqual(rest.body._dynamic_tools);
    const tools = structured["_dynamic_tools"] as Record<string, Record<string, unknown>>[];
    expect(tools).toHaveLength(2);
    expect(tools[0]!["parameters"]).toMatchObject({
      type: "object",
      properties: { dynamic_params: { type: "object" }, _instance_identities: { type: "array" } },
    });
    expect(tools[0]!["fixed_params"]).toMatchObject({ _instance_identities: [identities[0]] });
    expect(tools[0]!["api_call_strategy"]).toBe("kn_action_recall");
  });

  it("names an instance's id, identity and display value alike in query_object_instance and query_instance_subgraph", async () => {
    const objects = await call("query_object_instance", {
      kn_id: KN,
      ot_id: "disease",
      condition: { field: "disease_id", operation: "==", value: OBSTRUCTION },
    });
    const [row] = objects["datas"] as Record<string, unknown>[];
    expect(row).toMatchObject({ _instance_identity: { disease_id: OBSTRUCTION } });
    const subgraph = await call("query_instance_subgraph", {
      kn_id: KN,
      relation_type_paths: [
        {
          object_types: [
            { id: "disease", condition: { field: "disease_id", operation: "==", value: OBSTRUCTION } },
            { id: "symptom" },
          ],
          relation_types: [{ relation_type_id: "has_symptom" }],
        },
      ],
    });
    const [entry] = subgraph["entries"] as { objects: Record<string, Record<string, unknown>> }[];
    const disease = Object.values(entry!.objects).find((o) => o["object_type_id"] === "disease")!;
    expect(disease).toMatchObject({
      _instance_id: expect.any(String),
      _instance_identity: row!["_instance_identity"],
      _display: row!["_display"],
    });
    expect(Object.keys(disease)).not.toContain("instance_identity");
  });

  it("answers the same names over Connect JSON", async () => {
    const res = await fetch(
      `${h.server.baseUrl}/contextloader.kntools.v1.KnowledgeToolsService/QueryInstanceSubgraph`,
      {
        method: "POST",
        headers: { "content-type": "application/json", ...ACCOUNT },
        body: JSON.stringify({
          kn_id: KN,
          relation_type_paths: [
            {
              object_types: [
                { id: "disease", condition: { field: "disease_id", operation: "==", value: OBSTRUCTION } },
                { id: "symptom" },
              ],
              relation_types: [{ relation_type_id: "has_symptom" }],
            },
          ],
        }),
      },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { entries: { objects: Record<string, Record<string, unknown>> }[] };
    const [first] = Object.values(body.entries[0]!.objects);
    expect(Object.keys(first!)).toEqual(expect.arrayContaining(["_instance_id", "_instance_identity", "_display"]));
    const action = await fetch(`${h.server.baseUrl}/contextloader.kntools.v1.KnowledgeToolsService/GetActionInfo`, {
      method: "POST",
      headers: { "content-type": "application/json", ...ACCOUNT },
      body: JSON.stringify({
        kn_id: KN,
        at_id: "generate_treatment_plan",
        _instance_identities: [{ disease_id: OBSTRUCTION }],
      }),
    });
    expect(Object.keys((await action.json()) as object)).toContain("_dynamic_tools");
    // grpcurl and buf curl print JSON names rather than field names: the same spelling.
    const object = create(SubgraphObjectSchema, { InstanceId: "disease-1", objectTypeId: "disease" });
    expect(Object.keys(toJson(SubgraphObjectSchema, object, { alwaysEmitImplicit: true }) as object)).toEqual(
      expect.arrayContaining(["_instance_id", "objectTypeId"]),
    );
    expect(
      Object.keys(
        toJson(GetActionInfoResponseSchema, create(GetActionInfoResponseSchema), {
          alwaysEmitImplicit: true,
        }) as object,
      ),
    ).toContain("_dynamic_tools");
  });
});
