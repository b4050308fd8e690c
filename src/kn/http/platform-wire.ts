import { z } from "zod";
import { type Json, parsedJson, parsedJsonObject } from "../../core/json";
import { badResponse } from "../../upstream/http-json";
import type {
  ActionType,
  InstanceIdentity,
  ObjectType,
  RelationType,
  Row,
  SubgraphEntry,
  SubgraphObject,
} from "../types";

/**
 * The platform's response bodies as zod schemas, and their normalisation to
 * the interface's types. Lenient where the platform is: extra fields are
 * dropped, absent or null optional fields get their defaults (Go services send
 * `null` for empty lists), both spellings of the system fields are read
 * (2026: `_instance_id`, `_instance_identity`, `_display`; before: `id`,
 * `unique_identities`, `display` on subgraph objects, nothing in rows; see
 * toRow).
 */

/** A string the platform may send as null or leave out: "" then. */
export const text = z
  .string()
  .nullish()
  .transform((v) => v ?? "");
/** A list of strings the platform may send as null or leave out: [] then. */
export const texts = z
  .array(z.string())
  .nullish()
  .transform((v) => v ?? []);
/** A list the platform may send as null or leave out: [] then. */
export const list = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullish()
    .transform((v): z.output<T>[] => v ?? []);
const jsonRecord = parsedJsonObject;

// ---------------------------------------------------------------------------
// ontology-manager

const dataPropertySchema = z.object({
  name: z.string().min(1),
  display_name: text,
  type: text,
  comment: text,
  condition_operations: texts,
});

const parameterSchema = z.object({
  name: z.string().min(1),
  type: text,
  value_from: z.enum(["input", "property", "const"]),
  value: parsedJson.optional(),
  if_system_generate: z
    .boolean()
    .nullish()
    .transform((v) => v ?? false),
  operation: z.string().optional(),
  source: z
    .enum(["header", "query", "body", "path", ""])
    .nullish()
    .transform((v) => v ?? ""),
  comment: text,
});

const logicPropertySchema = z.object({
  name: z.string().min(1),
  display_name: text,
  type: z.enum(["metric", "operator"]),
  comment: text,
  data_source: z.object({ type: text, id: z.string().min(1), name: z.string().optional() }),
  parameters: list(parameterSchema),
});

export const objectTypeSchema: z.ZodType<ObjectType, unknown> = z.object({
  id: z.string().min(1),
  name: text,
  comment: text,
  tags: texts,
  primary_keys: z.array(z.string().min(1)).min(1, "an object type needs its primary_keys"),
  display_key: text,
  data_properties: list(dataPropertySchema),
  logic_properties: list(logicPropertySchema),
});

/** `{entries: [...]}`, or a bare array as one published spec shows. */
export const objectTypesResponseSchema = z.union([
  z.object({ entries: list(objectTypeSchema) }).transform((r) => r.entries),
  z.array(objectTypeSchema),
]);

const summarySchema = z.object({ id: z.string().min(1), name: text, comment: text, tags: texts });

export const knowledgeNetworkListSchema = z.object({
  entries: list(summarySchema),
  total_count: z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? 0),
});

export const relationTypeSchema: z.ZodType<RelationType, unknown> = z.object({
  id: z.string().min(1),
  name: text,
  comment: text,
  source_object_type_id: z.string().min(1),
  target_object_type_id: z.string().min(1),
});

export const actionTypeSchema: z.ZodType<ActionType, unknown> = z.object({
  id: z.string().min(1),
  name: text,
  action_type: text,
  object_type_id: z.string().min(1),
  comment: text,
  tags: texts,
});

export const knowledgeNetworkSchema = summarySchema.extend({
  object_types: list(objectTypeSchema),
  relation_types: list(relationTypeSchema),
  action_types: list(actionTypeSchema),
});

// ---------------------------------------------------------------------------
// ontology-query

/** Instance rows: `datas` must be there (null is an empty page), the rest is optional. */
export const objectQueryResponseSchema = z.object({
  datas: z.array(jsonRecord).nullable(),
  total_count: z.number().int().nullish(),
  search_after: z.array(parsedJson).nullish(),
});

export const propertiesResponseSchema = z.object({
  datas: z.array(jsonRecord).nullable(),
});

/** A subgraph object in either spelling: 2026 (`_instance_id`, `_instance_identity`, `_display`) or older. */
interface WireSubgraphObject {
  _instance_id?: string;
  id?: string;
  _instance_identity?: Record<string, Json>;
  unique_identities?: Record<string, Json>;
  _display?: Json;
  display?: Json;
  object_type_id: string;
  object_type_name?: string | null;
  properties?: Record<string, Json> | null;
}

interface WireRelation {
  relation_type_id: string;
  relation_type_name?: string | null;
  source_object_id: string;
  target_object_id: string;
}

interface WireSubgraphEntry {
  objects?: Record<string, WireSubgraphObject> | null;
  relation_paths?: { relations?: WireRelation[] | null; length?: number }[] | null;
  total_count?: number | null;
}

/*
 * Subgraph answers hold hundreds of objects. Parsed field by field, zod built
 * a copy of every object and relation, a third of reading the answer (and the
 * defaults of `text` and `list` made it seven times slower still): an entry is
 * checked in place here, with the path of the first thing wrong, and
 * toSubgraphEntry fills in the defaults.
 */
const subgraphEntrySchema = z.custom<WireSubgraphEntry>().superRefine((entry, ctx) => {
  const problem = entryProblem(entry);
  if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
});

export const subgraphResponseSchema = z.object({ entries: z.array(subgraphEntrySchema).nullable() });

type Problem = { path: (string | number)[]; message: string };

const isText = (v: unknown): v is string => typeof v === "string";
const isId = (v: unknown) => isText(v) && v !== "";
const absent = (v: unknown) => v === undefined || v === null;
const recordOrAbsent = (v: unknown) => absent(v) || isRecord(v as Json);

function entryProblem(entry: unknown): Problem | undefined {
  if (!isRecord(entry as Json)) return { path: [], message: "expected an object" };
  const e = entry as Record<string, unknown>;
  if (!recordOrAbsent(e["objects"])) return { path: ["objects"], message: "expected an object of objects" };
  for (const [key, o] of Object.entries((e["objects"] as Record<string, unknown> | null) ?? {})) {
    const problem = objectProblem(o);
    if (problem) return { path: ["objects", key, ...problem.path], message: problem.message };
  }
  const paths = e["relation_paths"];
  if (!absent(paths) && !Array.isArray(paths)) return { path: ["relation_paths"], message: "expected an array" };
  for (const [i, p] of ((paths as unknown[] | null) ?? []).entries()) {
    if (!isRecord(p as Json)) return { path: ["relation_paths", i], message: "expected an object" };
    const { relations, length } = p as Record<string, unknown>;
    if (length !== undefined && !Number.isInteger(length))
      return { path: ["relation_paths", i, "length"], message: "expected an integer" };
    if (!absent(relations) && !Array.isArray(relations))
      return { path: ["relation_paths", i, "relations"], message: "expected an array" };
    for (const [j, r] of ((relations as unknown[] | null) ?? []).entries()) {
      const problem = relationProblem(r);
      if (problem) return { path: ["relation_paths", i, "relations", j, ...problem.path], message: problem.message };
    }
  }
  const total = e["total_count"];
  if (!absent(total) && !Number.isInteger(total)) return { path: ["total_count"], message: "expected an integer" };
  return undefined;
}

function objectProblem(o: unknown): Problem | undefined {
  if (!isRecord(o as Json)) return { path: [], message: "expected an object" };
  const v = o as Record<string, unknown>;
  for (const name of ["_instance_id", "id"]) {
    if (v[name] !== undefined && !isId(v[name])) return { path: [name], message: "expected a non-empty string" };
  }
  for (const name of ["_instance_identity", "unique_identities"]) {
    if (v[name] !== undefined && !isRecord(v[name] as Json)) return { path: [name], message: "expected a JSON object" };
  }
  if (!isId(v["object_type_id"])) return { path: ["object_type_id"], message: "expected a non-empty string" };
  if (!absent(v["object_type_name"]) && !isText(v["object_type_name"]))
    return { path: ["object_type_name"], message: "expected a string" };
  if (!recordOrAbsent(v["properties"])) return { path: ["properties"], message: "expected a JSON object" };
  return undefined;
}

function relationProblem(r: unknown): Problem | undefined {
  if (!isRecord(r as Json)) return { path: [], message: "expected an object" };
  const v = r as Record<string, unknown>;
  for (const name of ["relation_type_id", "source_object_id", "target_object_id"]) {
    if (!isId(v[name])) return { path: [name], message: "expected a non-empty string" };
  }
  if (!absent(v["relation_type_name"]) && !isText(v["relation_type_name"]))
    return { path: ["relation_type_name"], message: "expected a string" };
  return undefined;
}

/**
 * A subgraph entry keyed by each object's own id. The id and identity come
 * from the system fields, never from splitting the key: type ids may contain
 * "-". Relations name objects by the platform's keys, so they are mapped
 * through the same table.
 */
export function toSubgraphEntry(entry: WireSubgraphEntry): SubgraphEntry {
  const objects: Record<string, SubgraphObject> = {};
  const idOfKey = new Map<string, string>();
  for (const [key, o] of Object.entries(entry.objects ?? {})) {
    const id = o._instance_id ?? o.id ?? key;
    const identity = o._instance_identity ?? o.unique_identities;
    if (identity === undefined) {
      throw badResponse(
        "ontology-query",
        `subgraph object ${key} has neither _instance_identity nor unique_identities`,
        undefined,
        // (Not text(…): this module's `text` is a schema.)
        {
          en: "a subgraph object without _instance_identity or unique_identities",
          zh: "子图中的对象既没有 _instance_identity 也没有 unique_identities",
        },
      );
    }
    idOfKey.set(key, id);
    objects[id] = {
      _instance_id: id,
      _instance_identity: identity,
      _display: o._display ?? o.display ?? null,
      object_type_id: o.object_type_id,
      object_type_name: o.object_type_name ?? "",
      properties: o.properties ?? {},
    };
  }
  return {
    objects,
    ...(typeof entry.total_count === "number" ? { total_count: entry.total_count } : {}),
    relation_paths: (entry.relation_paths ?? []).map((p) => {
      const relations = (p.relations ?? []).map((r) => ({
        relation_type_id: r.relation_type_id,
        relation_type_name: r.relation_type_name ?? "",
        source_object_id: idOfKey.get(r.source_object_id) ?? r.source_object_id,
        target_object_id: idOfKey.get(r.target_object_id) ?? r.target_object_id,
      }));
      return { relations, length: p.length ?? relations.length };
    }),
  };
}

/** What building a row's system fields needs of its object type. */
export type RowShape = Pick<ObjectType, "id" | "primary_keys" | "display_key">;

/** True when a row carries the 2026 system fields and needs nothing else to be a Row. */
export function hasSystemFields(raw: Record<string, Json>): boolean {
  return typeof raw["_instance_id"] === "string" && isRecord(raw["_instance_identity"]);
}

/**
 * A platform row as a Row. Rows with the system fields are taken as they are;
 * rows without (the platform before 2026 sent none in instance and property
 * rows) get them built from the object type: the identity from its primary
 * keys, the id as "{type}-{pk values joined by _}", the display from its
 * display key. The old names `id` and `display` are not read in rows: there
 * they may be data properties (ontology-query's own examples use `id` as a
 * primary key).
 */
export function toRow(raw: Record<string, Json>, shape: RowShape | undefined): Row {
  if (hasSystemFields(raw)) return { ...raw, _display: raw["_display"] ?? null } as Row;
  if (shape === undefined) throw new Error("toRow: a row without system fields needs its object type");
  const missing = shape.primary_keys.filter((k) => raw[k] === undefined || raw[k] === null);
  if (missing.length > 0) {
    throw badResponse(
      "ontology-query",
      `a ${shape.id} row has no system fields and no value for primary key ${missing.join(", ")}: ${JSON.stringify(raw).slice(0, 200)}`,
      undefined,
      {
        en: `a ${shape.id} row without system fields or primary key ${missing.join(", ")}`,
        zh: `${shape.id} 的一行既没有系统字段，也没有主键 ${missing.join(", ")}`,
      },
    );
  }
  const identity: InstanceIdentity = {};
  for (const k of shape.primary_keys) identity[k] = raw[k]!;
  return {
    ...raw,
    _instance_id: `${shape.id}-${shape.primary_keys.map((k) => String(identity[k])).join("_")}`,
    _instance_identity: identity,
    _display: raw[shape.display_key] ?? null,
  };
}

function isRecord(v: Json | undefined): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

// ---------------------------------------------------------------------------
// operator market

const jsonObject = jsonRecord.nullish().transform((v) => v ?? {});

export const operatorSchema = z.object({
  operator_id: z.string().min(1),
  name: text,
  metadata: z
    .object({ api_spec: jsonObject })
    .catchall(parsedJson)
    .nullish()
    .transform((v) => v ?? { api_spec: {} }),
  operator_info: jsonObject,
});
