import { type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf";
import type { Json } from "./json";

/**
 * The JSON Schema of a message as this service writes it in JSON: proto3's
 * JSON mapping with the proto field names and every implicit field present
 * (`useProtoFieldName`, `alwaysEmitImplicit`, as the Connect JSON answers).
 * Generated from the descriptor, so it cannot drift from the RPC's answer: MCP
 * publishes it as a tool's outputSchema and its structuredContent is that
 * answer.
 *
 * Always present, hence `required`: scalars, enums, repeated and map fields
 * without explicit presence. A message field, a proto3 `optional` and a oneof
 * member appear only when set. Unknown keys are refused
 * (`additionalProperties: false`), so a field added to the answer and not to
 * the contract fails validation instead of slipping through. Messages are
 * defined once under `$defs` and referenced, which also covers recursive
 * ones (a condition's sub-conditions).
 */
export function protoJsonSchema(desc: DescMessage, opts: { omit?: readonly string[] } = {}): Record<string, Json> {
  const defs: Record<string, Json> = {};
  const root = messageSchema(desc, defs, new Set(opts.omit ?? []));
  return Object.keys(defs).length === 0 ? root : { ...root, $defs: defs };
}

function messageSchema(desc: DescMessage, defs: Record<string, Json>, omit: ReadonlySet<string>): Record<string, Json> {
  const wkt = wellKnown(desc.typeName);
  if (wkt) return wkt;
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  for (const field of desc.fields) {
    if (omit.has(field.name)) continue;
    properties[field.name] = fieldSchema(field, defs);
    if (alwaysWritten(field)) required.push(field.name);
  }
  return { type: "object", properties, required, additionalProperties: false };
}

/** A reference to the message's definition, written the first time it is met. */
function refTo(desc: DescMessage, defs: Record<string, Json>): Record<string, Json> {
  const wkt = wellKnown(desc.typeName);
  if (wkt) return wkt;
  if (!(desc.typeName in defs)) {
    defs[desc.typeName] = {};
    defs[desc.typeName] = messageSchema(desc, defs, new Set());
  }
  return { $ref: `#/$defs/${desc.typeName}` };
}

function fieldSchema(field: DescField, defs: Record<string, Json>): Json {
  switch (field.fieldKind) {
    case "scalar":
      return scalarSchema(field.scalar);
    case "enum":
      return enumSchema(
        field.enum.typeName,
        field.enum.values.map((v) => v.name),
      );
    case "message":
      return refTo(field.message, defs);
    case "list":
      return {
        type: "array",
        items:
          field.listKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.listKind === "enum"
              ? enumSchema(
                  field.enum.typeName,
                  field.enum.values.map((v) => v.name),
                )
              : refTo(field.message, defs),
      };
    case "map":
      return {
        type: "object",
        additionalProperties:
          field.mapKind === "scalar"
            ? scalarSchema(field.scalar)
            : field.mapKind === "enum"
              ? enumSchema(
                  field.enum.typeName,
                  field.enum.values.map((v) => v.name),
                )
              : refTo(field.message, defs),
      };
  }
}

/** Written whether set or not: implicit presence, no oneof (a message is written only when set). */
function alwaysWritten(field: DescField): boolean {
  if (field.oneof !== undefined) return false;
  if (field.fieldKind === "list" || field.fieldKind === "map") return true;
  if (field.fieldKind === "message") return false;
  return field.presence === IMPLICIT;
}

/** FeatureSet.FieldPresence.IMPLICIT: proto3 fields without `optional`. */
const IMPLICIT = 2;

function enumSchema(typeName: string, names: string[]): Json {
  // google.protobuf.NullValue is written as JSON null.
  return typeName === "google.protobuf.NullValue" ? { type: "null" } : { type: "string", enum: names };
}

function scalarSchema(scalar: ScalarType): Json {
  switch (scalar) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", minimum: -2147483648, maximum: 2147483647 };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      // 64-bit integers are JSON strings: a number would lose digits past 2^53.
      return { type: "string", pattern: "^-?[0-9]+$" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: "string", pattern: "^[0-9]+$" };
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return { anyOf: [{ type: "number" }, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }] };
  }
}

/** The well-known types, which proto3 JSON writes in their own forms. */
function wellKnown(typeName: string): Record<string, Json> | undefined {
  switch (typeName) {
    case "google.protobuf.Struct":
      return { type: "object" };
    case "google.protobuf.Value":
      return {};
    case "google.protobuf.ListValue":
      return { type: "array" };
    case "google.protobuf.Timestamp":
      return { type: "string", format: "date-time" };
    case "google.protobuf.Duration":
      return { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" };
    case "google.protobuf.FieldMask":
      return { type: "string" };
    case "google.protobuf.Empty":
      return { type: "object", additionalProperties: false };
    case "google.protobuf.Any":
      return { type: "object", properties: { "@type": { type: "string" } }, required: ["@type"] };
    case "google.protobuf.StringValue":
    case "google.protobuf.BytesValue":
    case "google.protobuf.Int64Value":
    case "google.protobuf.UInt64Value":
      return { type: "string" };
    case "google.protobuf.BoolValue":
      return { type: "boolean" };
    case "google.protobuf.Int32Value":
    case "google.protobuf.UInt32Value":
      return { type: "integer" };
    case "google.protobuf.FloatValue":
    case "google.protobuf.DoubleValue":
      return { anyOf: [{ type: "number" }, { type: "string", enum: ["NaN", "Infinity", "-Infinity"] }] };
    default:
      return undefined;
  }
}
