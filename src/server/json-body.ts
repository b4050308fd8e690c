import { promisify } from "node:util";
import * as zlib from "node:zlib";
import { type DescField, type DescMessage, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { JsonShapeScanner } from "../core/json-shape";
import { text, verbatim } from "../errors/text";
import { type FieldViolation, invalidArgument, type ToolError } from "../errors/tool-error";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";
import { jsonMeter, readRequestBody, shapeRefusal, tooLarge } from "./request-body";

/** The content encodings a Connect unary JSON body may arrive in, as the router accepts them. */
const inflate = { gzip: promisify(zlib.gunzip), br: promisify(zlib.brotliDecompress) };
export type JsonBodyEncoding = keyof typeof inflate;

/** Messages whose JSON form is free-form or not an object of fields. */
const opaqueJsonTypes = new Set([
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.Any",
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
  "google.protobuf.FieldMask",
]);

/**
 * Reads and checks the JSON body of a Connect unary call before the framework
 * decodes it, so that a body that cannot be decoded fails like every other bad
 * request: INVALID_ARGUMENT with a field violation per unknown or mistyped
 * field (naming the valid fields), through the interceptor that logs, counts
 * and adds the trace id. The framework would answer such bodies without any
 * detail. The body is read whole before the call takes an admission slot; one
 * over `maxBytes` is RESOURCE_EXHAUSTED, one nested deeper than `maxDepth` or
 * holding more than `maxValues` values INVALID_ARGUMENT, each answered as soon
 * as the bytes read show it, before anything parses the body. A compressed
 * body (`encoding`) is inflated here, at most `maxBytes` of it, and measured
 * whole before it is parsed.
 * Returns the parsed body, or the error to raise; rejects when the client
 * goes away first.
 */
export async function readUnaryJson(
  req: NodeServerRequest,
  res: NodeServerResponse,
  input: DescMessage,
  limits: { maxBytes: number; maxDepth: number; maxValues: number },
  encoding?: JsonBodyEncoding,
): Promise<{ body: JsonValue; problem?: ToolError }> {
  const read = await readRequestBody(req, res, limits.maxBytes, encoding ? undefined : jsonMeter(limits));
  if (read.problem) return { body: {}, problem: read.problem };
  let bytes = read.body;
  if (encoding) {
    try {
      bytes = await inflate[encoding](bytes, { maxOutputLength: limits.maxBytes });
    } catch (err) {
      const problem =
        (err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE"
          ? tooLarge(limits.maxBytes)
          : badBody([
              {
                field: "request",
                description: text(
                  `not valid ${encoding}: ${(err as Error).message}`,
                  `不是有效的 ${encoding} 数据：${(err as Error).message}`,
                ),
              },
            ]);
      return { body: {}, problem };
    }
    const scanner = new JsonShapeScanner(limits);
    if (scanner.write(bytes)) return { body: {}, problem: shapeRefusal(scanner) };
  }
  const json = bytes.toString("utf8");
  let body: JsonValue;
  try {
    body = json.trim() === "" ? {} : (JSON.parse(json) as JsonValue);
  } catch (err) {
    return {
      body: {},
      problem: badBody([
        {
          field: "request",
          description: text(`not valid JSON: ${(err as Error).message}`, `不是有效的 JSON：${(err as Error).message}`),
        },
      ]),
    };
  }
  const unknown = unknownFields(input, body, "");
  if (unknown.length > 0) return { body: {}, problem: badBody(unknown) };
  try {
    fromJson(input, body, { ignoreUnknownFields: false });
  } catch (err) {
    return { body: {}, problem: badBody([typeViolation(input, (err as Error).message)]) };
  }
  return { body };
}

function badBody(violations: FieldViolation[]): ToolError {
  return invalidArgument(violations, {
    message: text(
      "Use the field names and types of the request message (see the violations), then call again.",
      "按请求消息的字段名和类型（见 violations）改正后再调用。",
    ),
  });
}

/** Every key of `json` that names no field of `desc`, recursively, with the valid names. */
function unknownFields(desc: DescMessage, json: JsonValue, path: string): FieldViolation[] {
  if (opaqueJsonTypes.has(desc.typeName) || json === null || typeof json !== "object" || Array.isArray(json)) return [];
  const out: FieldViolation[] = [];
  const byName = fieldsByName(desc);
  for (const [key, value] of Object.entries(json)) {
    const field = byName.get(key);
    const here = path === "" ? key : `${path}.${key}`;
    if (!field) {
      out.push({
        field: here,
        description: text(
          `unknown field; ${desc.name} has: ${desc.fields.map((f) => f.name).join(", ")}`,
          `未知字段；${desc.name} 的字段有：${desc.fields.map((f) => f.name).join(", ")}`,
        ),
      });
      continue;
    }
    out.push(...nested(field, value, here));
  }
  return out;
}

const fieldNames = new WeakMap<DescMessage, Map<string, DescField>>();

/** A message's fields by proto and JSON name, built once per message type: a body may hold thousands of keys. */
function fieldsByName(desc: DescMessage): Map<string, DescField> {
  let byName = fieldNames.get(desc);
  if (!byName) {
    byName = new Map();
    for (const f of desc.fields) byName.set(f.name, f).set(f.jsonName, f);
    fieldNames.set(desc, byName);
  }
  return byName;
}

function nested(field: DescField, value: JsonValue, path: string): FieldViolation[] {
  if (value === null) return [];
  switch (field.fieldKind) {
    case "message":
      return unknownFields(field.message, value, path);
    case "list":
      if (field.listKind !== "message" || !Array.isArray(value)) return [];
      return value.flatMap((item, i) => unknownFields(field.message, item, `${path}[${i}]`));
    case "map":
      if (field.mapKind !== "message" || typeof value !== "object" || Array.isArray(value)) return [];
      return Object.entries(value).flatMap(([k, v]) => unknownFields(field.message, v, `${path}.${k}`));
    default:
      return [];
  }
}

/** protobuf-es says "cannot decode field pkg.Msg.field_name from JSON: <why>"; name the field. */
function typeViolation(input: DescMessage, message: string): FieldViolation {
  const match = /cannot decode field ([\w.]+)\.(\w+) from JSON: (.*)$/s.exec(message);
  if (!match) return { field: "request", description: verbatim(message) };
  const [, owner, name, why] = match;
  const field = owner === input.typeName ? name! : `${owner}.${name}`;
  return { field, description: text(`wrong type or value: ${why}`, `类型或值不对：${why}`) };
}
