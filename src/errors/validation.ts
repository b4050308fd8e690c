import { type DescMessage, type MessageShape, toJson } from "@bufbuild/protobuf";
import { z } from "zod";
import { type OutputFormat, outputFormatField } from "../core/output-format";
import { fromZodMessage, zodText } from "./text";
import { type FieldViolation, type Hint, invalidArgument } from "./tool-error";

const english = z.locales.en().localeError;
const chinese = z.locales.zhCN().localeError;

/**
 * Zod's own messages (a wrong type, a string too long) in both languages, from zod's maintained
 * locales; a schema's own message (zodText) takes precedence over it, as zod applies error maps.
 */
const bothLanguages: z.core.$ZodErrorMap = (issue) => {
  const en = english(issue);
  const zh = chinese(issue);
  const say = (m: typeof en) => (typeof m === "string" ? m : (m?.message ?? ""));
  return zodText(say(en), say(zh));
};

/** schema.safeParse with zod's own messages in both languages: what violationsOf reads. */
export function safeParseBoth<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  return schema.safeParse(value, { error: bothLanguages });
}

/**
 * Validates a decoded request against a zod schema written in the spec's terms:
 * the message is read as proto JSON with the proto (snake_case) field names,
 * implicit fields present with their zero values ("" / 0 / false / []) and
 * `optional` fields absent when unset, so a schema can default them. The same
 * schemas describe the tools to agents (JSON Schema), so what an agent is told
 * and what is enforced cannot drift apart.
 *
 * On failure: INVALID_ARGUMENT with one BadRequest field violation per problem,
 * named as callers see the field in every protocol (`kn_ids[0].knowledge_network_id`).
 */
export function validateRequest<D extends DescMessage, S extends z.ZodType>(
  desc: D,
  message: MessageShape<D>,
  schema: S,
): z.output<S> {
  return parseOrThrow(schema, requestJson(desc, message));
}

/**
 * validateRequest for a request with an `output_format` field: the format is
 * read apart (json, yaml, toon, or undefined when unset), the rest by the
 * schema, and the violations of both reported together.
 */
export function validateFormattedRequest<D extends DescMessage, S extends z.ZodType>(
  desc: D,
  message: MessageShape<D>,
  schema: S,
): { input: z.output<S>; format: OutputFormat | undefined } {
  const { output_format, ...rest } = requestJson(desc, message) as Record<string, unknown>;
  const format = safeParseBoth(outputFormatField, output_format);
  const input = safeParseBoth(schema, rest);
  const violations = [
    ...(format.success ? [] : violationsOf(format.error).map((v) => ({ ...v, field: "output_format" }))),
    ...(input.success ? [] : violationsOf(input.error)),
  ];
  if (!format.success || !input.success) throw invalidArgument(violations);
  return { input: input.data, format: format.data };
}

function requestJson<D extends DescMessage>(desc: D, message: MessageShape<D>): unknown {
  try {
    return toJson(desc, message, { useProtoFieldName: true, alwaysEmitImplicit: true });
  } catch (err) {
    // Binary proto can carry what JSON cannot (NaN or Infinity in a Struct, a time out of range): the request is
    // bad, not the server, and the violation names the field that holds it.
    throw invalidArgument([
      {
        field: unrepresentable(desc, message, "") ?? "request",
        description: {
          en: `not representable as JSON: ${(err as Error).message}`,
          zh: `无法表示为 JSON：${(err as Error).message}`,
        },
      },
    ]);
  }
}

/** The path of the innermost message field of `message` that toJson refuses, as callers name fields. */
function unrepresentable(desc: DescMessage, message: unknown, prefix: string): string | undefined {
  const m = message as Record<string, unknown>;
  const refused = (d: DescMessage, value: unknown, path: string): string | undefined => {
    try {
      toJson(d, value as MessageShape<typeof d>);
      return undefined;
    } catch {
      // A well-known type (Timestamp, Struct) is one field to callers: its insides are not theirs to name.
      return d.typeName.startsWith("google.protobuf.") ? path : (unrepresentable(d, value, `${path}.`) ?? path);
    }
  };
  for (const f of desc.fields) {
    const holder = f.oneof ? (m[f.oneof.localName] as { case?: string; value?: unknown } | undefined) : undefined;
    const value = f.oneof ? (holder?.case === f.localName ? holder.value : undefined) : m[f.localName];
    if (value === undefined) continue;
    const path = `${prefix}${f.name}`;
    if (f.fieldKind === "message") {
      const bad = refused(f.message, value, path);
      if (bad) return bad;
    } else if (f.fieldKind === "list" && f.listKind === "message") {
      for (const [i, item] of (value as unknown[]).entries()) {
        const bad = refused(f.message, item, `${path}[${i}]`);
        if (bad) return bad;
      }
    } else if (f.fieldKind === "map" && f.mapKind === "message") {
      for (const [k, item] of Object.entries(value as Record<string, unknown>)) {
        const bad = refused(f.message, item, `${path}.${k}`);
        if (bad) return bad;
      }
    }
  }
  return undefined;
}

/** Parses plain JSON (a REST body, an already-converted request) or throws INVALID_ARGUMENT. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, hint?: Hint): z.output<S> {
  const result = safeParseBoth(schema, value);
  if (result.success) return result.data;
  throw invalidArgument(violationsOf(result.error), hint);
}

/**
 * One violation per distinct (field, message) of a zod error. Its messages are in both languages when the
 * parse was safeParseBoth's and the schema's own messages were zodText's; any other message is shown as it is.
 */
export function violationsOf(error: z.ZodError): FieldViolation[] {
  const seen = new Set<string>();
  const out: FieldViolation[] = [];
  const add = (field: string, message: string) => {
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ field, description: fromZodMessage(message) });
  };
  for (const issue of error.issues) {
    // A strict object names its unknown keys in one issue: each is a violation of its own field.
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) add(fieldPath([...issue.path, k]), issue.message);
    } else {
      add(fieldPath(issue.path), issue.message);
    }
  }
  return out;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += (out === "" ? "" : ".") + String(segment);
  }
  return out === "" ? "request" : out;
}

/** A field where JSON null means "not given" (REST clients send it for unset fields): the schema's default applies. */
export const nullAsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === null ? undefined : v), schema);
