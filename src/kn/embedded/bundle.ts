import { readFileSync } from "node:fs";
import { z } from "zod";
import { issuesInBrief, type Json, jsonSchema, parsedJson } from "../../core/json";
import { actionBindingFields, agentToolProblems, agentToolSections } from "./bundle-extensions";

/**
 * The KN bundle: one JSON file holding a knowledge network's schema and data,
 * the format operators ship their own networks in (DESIGN.md, "The embedded
 * knowledge network"). Unknown extra fields are ignored; missing optional
 * sections are empty.
 */

const parameterSchema = z.object({
  name: z.string().min(1),
  type: z.string().default(""),
  value_from: z.enum(["input", "const", "property"]),
  if_system_generate: z.boolean().default(false),
  value: jsonSchema.optional(),
  operation: z.string().optional(),
  source: z.enum(["header", "query", "body", "path", ""]).optional(),
  comment: z.string().default(""),
});

const logicPropertySchema = z.object({
  name: z.string().min(1),
  display_name: z.string().default(""),
  type: z.enum(["metric", "operator"]),
  comment: z.string().default(""),
  parameters: z.array(parameterSchema).default([]),
  data_source: z.object({ type: z.string(), id: z.string().min(1), name: z.string().optional() }),
  /** Metrics: the unit of the values (platform MetricModel). */
  unit_type: z.string().optional(),
  unit: z.string().optional(),
});

const dataPropertySchema = z.object({
  name: z.string().min(1),
  display_name: z.string().default(""),
  type: z.string().default("varchar"),
  comment: z.string().default(""),
  /** Absent or null: the defaults of the property's type. */
  condition_operations: z.array(z.string()).nullish(),
});

const objectTypeSchema = z.object({
  id: z.string().min(1),
  name: z.string().default(""),
  comment: z.string().default(""),
  tags: z.array(z.string()).default([]),
  primary_keys: z.array(z.string().min(1)).min(1, "an object type needs at least one primary key"),
  display_key: z.string().min(1),
  data_properties: z.array(dataPropertySchema).min(1),
  logic_properties: z.array(logicPropertySchema).default([]),
});

const relationTypeSchema = z.object({
  id: z.string().min(1),
  name: z.string().default(""),
  comment: z.string().default(""),
  source_object_type_id: z.string().min(1),
  target_object_type_id: z.string().min(1),
  /** Links every source whose source_property equals a target's target_property (besides the listed pairs). */
  mapping: z.object({ source_property: z.string().min(1), target_property: z.string().min(1) }).optional(),
});

const actionTypeSchema = z.object({
  id: z.string().min(1),
  name: z.string().default(""),
  action_type: z.string().default(""),
  object_type_id: z.string().min(1),
  comment: z.string().default(""),
  tags: z.array(z.string()).default([]),
  ...actionBindingFields,
});

/** A primary key value, or a map of every primary key for composite keys. */
const instanceKeySchema = z.union([
  z.string(),
  z.number(),
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
]);

export const bundleSchema = z.object({
  knowledge_network: z.object({
    id: z.string().min(1),
    name: z.string().default(""),
    comment: z.string().default(""),
    tags: z.array(z.string()).default([]),
  }),
  object_types: z.array(objectTypeSchema).default([]),
  relation_types: z.array(relationTypeSchema).default([]),
  action_types: z.array(actionTypeSchema).default([]),
  objects: z.record(z.string(), z.array(z.record(z.string(), parsedJson))).default({}),
  relations: z.record(z.string(), z.array(z.tuple([instanceKeySchema, instanceKeySchema]))).default({}),
  /** "<object_type_id>.<logic property>" → primary key value → [[ts_ms, value], ...]. */
  metrics: z
    .record(z.string(), z.record(z.string(), z.array(z.tuple([z.number(), z.number().nullable()]))))
    .default({}),
  ...agentToolSections,
});

export type Bundle = z.output<typeof bundleSchema>;
export type BundleObjectType = Bundle["object_types"][number];
export type BundleRelationType = Bundle["relation_types"][number];
export type InstanceKey = z.output<typeof instanceKeySchema>;
export type BundleRow = Record<string, Json>;

/** A bundle that cannot be used: start-up stops with this message, naming the file. */
export class BundleError extends Error {
  override name = "BundleError";
}

/** Reads, parses and checks one bundle file. */
export function loadBundleFile(path: string): Bundle {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new BundleError(`KN bundle ${path}: cannot read it: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new BundleError(`KN bundle ${path}: not valid JSON: ${(err as Error).message}`);
  }
  return parseBundle(raw, path);
}

/** Checks a parsed bundle: its shape, then that every reference resolves. */
export function parseBundle(raw: unknown, where: string): Bundle {
  const parsed = bundleSchema.safeParse(raw);
  if (!parsed.success) {
    throw new BundleError(`KN bundle ${where}: ${issuesInBrief(parsed.error, 5)}`);
  }
  const bundle = parsed.data;
  const problems = referenceProblems(bundle);
  if (problems.length > 0) throw new BundleError(`KN bundle ${where}: ${problems.slice(0, 5).join("; ")}`);
  return bundle;
}

function referenceProblems(b: Bundle): string[] {
  const problems: string[] = [];
  const types = new Map(b.object_types.map((t) => [t.id, t]));
  if (types.size !== b.object_types.length) problems.push("object_types: duplicate id");
  for (const t of b.object_types) {
    const props = new Set(t.data_properties.map((p) => p.name));
    for (const k of t.primary_keys)
      if (!props.has(k)) problems.push(`object type ${t.id}: primary key ${k} is not a data property`);
    if (!props.has(t.display_key))
      problems.push(`object type ${t.id}: display_key ${t.display_key} is not a data property`);
    for (const lp of t.logic_properties) {
      for (const p of lp.parameters) {
        if (p.value_from === "property" && (typeof p.value !== "string" || !props.has(p.value))) {
          problems.push(`object type ${t.id}: logic property ${lp.name} parameter ${p.name} names no data property`);
        }
      }
    }
  }
  const relationIds = new Set<string>();
  for (const r of b.relation_types) {
    if (relationIds.has(r.id)) problems.push(`relation_types: duplicate id ${r.id}`);
    relationIds.add(r.id);
    for (const end of [r.source_object_type_id, r.target_object_type_id]) {
      if (!types.has(end)) problems.push(`relation type ${r.id}: unknown object type ${end}`);
    }
  }
  for (const a of b.action_types)
    if (!types.has(a.object_type_id)) problems.push(`action type ${a.id}: unknown object type ${a.object_type_id}`);
  for (const otId of Object.keys(b.objects))
    if (!types.has(otId)) problems.push(`objects: unknown object type ${otId}`);
  for (const relId of Object.keys(b.relations))
    if (!relationIds.has(relId)) problems.push(`relations: unknown relation type ${relId}`);
  for (const key of Object.keys(b.metrics)) {
    const [otId, prop] = key.split(".", 2);
    const lp = types.get(otId ?? "")?.logic_properties.find((p) => p.name === prop);
    if (lp?.type !== "metric") problems.push(`metrics: ${key} is not a metric logic property`);
  }
  problems.push(...agentToolProblems(b));
  return problems;
}
