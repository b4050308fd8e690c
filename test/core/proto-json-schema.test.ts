import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
import { describe, expect, it } from "vitest";
import {
  ConditionSchema,
  QueryInstanceSubgraphResponseSchema,
  QueryObjectInstancesRequestSchema,
} from "../../gen/contextloader/kntools/v1/kntools_pb";
import { RecallHandoffSchema } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { protoJsonSchema } from "../../src/core/proto-json-schema";
import { productServices } from "../../src/routes";

/**
 * The JSON Schema of a message as the service writes it (proto field names,
 * implicit fields present): checked against what toJson actually writes, for
 * every product RPC's answer, a recursive message and 64-bit integers.
 */

const JSON_WRITE = { useProtoFieldName: true, alwaysEmitImplicit: true } as const;
const ajv = new AjvJsonSchemaValidator();

describe("protoJsonSchema", () => {
  it("accepts every product RPC's empty answer as toJson writes it, and nothing else", () => {
    const outputs = productServices.flatMap((s) => Object.values(s.method).map((m) => m.output));
    expect(outputs.length).toBeGreaterThan(15);
    for (const desc of outputs) {
      const validate = ajv.getValidator(protoJsonSchema(desc));
      const written = toJson(desc, create(desc), JSON_WRITE);
      expect(validate(written).valid, `${desc.typeName}: ${validate(written).errorMessage}`).toBe(true);
      expect(validate({ ...(written as object), not_a_field: 1 }).valid, desc.typeName).toBe(false);
    }
  });

  it("writes a recursive message once under $defs and follows it to any depth", () => {
    const schema = protoJsonSchema(QueryObjectInstancesRequestSchema);
    expect(Object.keys(schema["$defs"] as object)).toContain(ConditionSchema.typeName);
    const validate = ajv.getValidator(schema);
    const condition = (depth: number): unknown =>
      depth === 0
        ? { field: "disease_name", operation: "like", value: "肺" }
        : { operation: "and", sub_conditions: [condition(depth - 1)] };
    // Written by toJson from the parsed request: every implicit field of every level present.
    const written = toJson(
      QueryObjectInstancesRequestSchema,
      fromJson(QueryObjectInstancesRequestSchema, { ot_id: "disease", condition: condition(5) } as JsonValue),
      JSON_WRITE,
    ) as Record<string, unknown>;
    expect(JSON.stringify(written)).toContain('"value":"肺"');
    expect(validate(written).valid, validate(written).errorMessage).toBe(true);
    const bad = { ...written, condition: { operation: "and", sub_conditions: [{ field: 3 }] } };
    expect(validate(bad).valid).toBe(false);
  });

  it("reads 64-bit integers as strings, as proto3 JSON writes them", () => {
    const answer = create(QueryInstanceSubgraphResponseSchema, {
      entries: [{ totalCount: 9007199254740993n, message: "" }],
    });
    const written = toJson(QueryInstanceSubgraphResponseSchema, answer, JSON_WRITE) as {
      entries: { total_count: unknown }[];
    };
    expect(written.entries[0]!.total_count).toBe("9007199254740993");
    const validate = ajv.getValidator(protoJsonSchema(QueryInstanceSubgraphResponseSchema));
    expect(validate(written).valid).toBe(true);
    expect(validate({ ...written, entries: [{ ...written.entries[0], total_count: 1.5 }] }).valid).toBe(false);
  });

  it("requires what is always written and leaves out what it is told to", () => {
    const schema = protoJsonSchema(RecallHandoffSchema, { omit: ["message"] });
    expect(schema["required"]).toEqual(expect.arrayContaining(["reason", "relevant_memory_keys", "confidence"]));
    expect(Object.keys(schema["properties"] as object)).not.toContain("message");
  });
});
