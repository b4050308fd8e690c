import { z } from "zod";
import { type Json, jsonSchema, parsedJson } from "../core/json";
import { zodText } from "../errors/text";

/**
 * The platform's knowledge-network vocabulary (ontology-manager and
 * ontology-query, see ../shared/UPSTREAM.md), as the rest of the service sees
 * it. Field names are the platform's JSON names. System fields always use the
 * 2026 spelling (`_instance_id`, `_instance_identity`, `_display`): the HTTP
 * clients read either spelling and normalise.
 */

/** An instance's identity: a map of every primary key to its value. */
export type InstanceIdentity = Record<string, Json>;

/** One instance row: its properties plus the system fields. */
export type Row = Record<string, Json> & {
  _instance_id: string;
  _instance_identity: InstanceIdentity;
  _display: Json;
};

// ---------------------------------------------------------------------------
// Schema: knowledge networks, object types, relation types, action types

export interface DataProperty {
  name: string;
  display_name: string;
  type: string;
  comment: string;
  /** Operations a condition may use on this property; [] means none is declared. */
  condition_operations: string[];
}

export type ValueFrom = "input" | "property" | "const";

export interface LogicParameter {
  name: string;
  type: string;
  value_from: ValueFrom;
  /** For property: the data property name; for const: the value. */
  value?: Json;
  if_system_generate: boolean;
  /** Metric parameters: the comparison operation. */
  operation?: string;
  /** Operator parameters: where the value goes in the operator call. */
  source?: "header" | "query" | "body" | "path" | "";
  comment: string;
}

export interface LogicProperty {
  name: string;
  display_name: string;
  type: "metric" | "operator";
  comment: string;
  data_source: { type: string; id: string; name?: string };
  parameters: LogicParameter[];
}

export interface ObjectType {
  id: string;
  name: string;
  comment: string;
  tags: string[];
  primary_keys: string[];
  display_key: string;
  data_properties: DataProperty[];
  logic_properties: LogicProperty[];
}

export interface RelationType {
  id: string;
  name: string;
  comment: string;
  source_object_type_id: string;
  target_object_type_id: string;
}

export interface ActionType {
  id: string;
  name: string;
  action_type: string;
  object_type_id: string;
  comment: string;
  tags: string[];
}

export interface KnowledgeNetworkSummary {
  id: string;
  name: string;
  comment: string;
  tags: string[];
}

/** A knowledge network with its types (ontology-manager `mode=export`). */
export interface KnowledgeNetwork extends KnowledgeNetworkSummary {
  object_types: ObjectType[];
  relation_types: RelationType[];
  action_types: ActionType[];
}

// ---------------------------------------------------------------------------
// Conditions (ontology-query's condition language)

export const LEAF_OPERATIONS = [
  "==",
  "!=",
  ">",
  ">=",
  "<",
  "<=",
  "in",
  "not_in",
  "like",
  "not_like",
  "range",
  "out_range",
  "exist",
  "not_exist",
  "regex",
  "match",
  "match_phrase",
  "multi_match",
  "knn",
  // Newer ontology-query operations: the engine implements none of them (no property of a bundle lists them),
  // but a platform property may, and a condition naming them must reach it intact.
  "contain",
  "not_contain",
  "prefix",
  "not_prefix",
  "empty",
  "not_empty",
  "null",
  "not_null",
  "true",
  "false",
  "between",
] as const;
export type LeafOperation = (typeof LEAF_OPERATIONS)[number];

/** At most this many sub-conditions in one and/or node (the platform's limit). */
export const MAX_SUB_CONDITIONS = 100;

export interface LogicalCondition {
  operation: "and" | "or";
  sub_conditions: Condition[];
}

export interface LeafCondition {
  operation: LeafOperation;
  /** A data property name; `*` for match/match_phrase/knn over every text field. */
  field?: string;
  /** multi_match: the fields to match. */
  fields?: string[];
  value?: Json;
  value_from?: "const";
  /** knn: how to limit ("k" by default) and by how much (100 by default). */
  limit_key?: "k" | "max_distance" | "min_score";
  limit_value?: number;
  /** multi_match: best_fields by default. */
  match_type?: string;
}

export type Condition = LogicalCondition | LeafCondition;

/**
 * Reads a condition tree, mapping the platform's `=` alias to `==`. One object
 * schema for every node (and/or nodes need sub_conditions), rather than a
 * union: conditions arrive by the hundred in a subgraph request, and a union
 * tries each branch on every node.
 */
export const conditionSchema: z.ZodType<Condition> = z.lazy(
  () =>
    z
      .object({
        operation: z.preprocess((op) => (op === "=" ? "==" : op), z.enum(["and", "or", ...LEAF_OPERATIONS])),
        sub_conditions: z
          .array(conditionSchema)
          .max(
            MAX_SUB_CONDITIONS,
            zodText(
              `at most ${MAX_SUB_CONDITIONS} in one and/or node`,
              `一个 and/or 节点最多 ${MAX_SUB_CONDITIONS} 个`,
            ),
          )
          .optional(),
        field: z.string().min(1).optional(),
        fields: z.array(z.string().min(1)).optional(),
        value: parsedJson.optional(),
        value_from: z.literal("const").optional(),
        limit_key: z.enum(["k", "max_distance", "min_score"]).optional(),
        limit_value: z.number().optional(),
        match_type: z.string().optional(),
      })
      .superRefine((c, ctx) => {
        if ((c.operation === "and" || c.operation === "or") && c.sub_conditions === undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["sub_conditions"],
            message: zodText(`required in an ${c.operation} node`, `${c.operation} 节点必须提供`),
          });
        }
      }) as z.ZodType<Condition>,
);

export function isLogical(c: Condition): c is LogicalCondition {
  return c.operation === "and" || c.operation === "or";
}

// ---------------------------------------------------------------------------
// Queries

export interface SortField {
  field: string;
  direction: "asc" | "desc";
}

/** POST .../object-types/{ot}: one page of instances. */
export interface ObjectQuery {
  condition?: Condition;
  /** Data properties to return (default all); system fields always come back. */
  properties?: string[];
  /** 1..10000. */
  limit: number;
  need_total?: boolean;
  /** Default: `_score` desc, then the primary keys asc. */
  sort?: SortField[];
  /** The `search_after` of the previous page. */
  search_after?: Json[];
  /** Logic property cells (their parameters, unfilled ones flagged) in every row. */
  include_logic_params?: boolean;
}

export const MAX_OBJECT_LIMIT = 10_000;

export const objectQuerySchema = z.object({
  condition: conditionSchema.optional(),
  properties: z.array(z.string().min(1)).optional(),
  limit: z
    .number()
    .int()
    .min(1, zodText("must be at least 1", "不能小于 1"))
    .max(MAX_OBJECT_LIMIT, zodText(`must be at most ${MAX_OBJECT_LIMIT}`, `不能大于 ${MAX_OBJECT_LIMIT}`)),
  need_total: z.boolean().optional(),
  sort: z.array(z.object({ field: z.string().min(1), direction: z.enum(["asc", "desc"]) })).optional(),
  search_after: z.array(jsonSchema).optional(),
  include_logic_params: z.boolean().optional(),
});

const CONDITION_KEYS = new Set([
  "operation",
  "sub_conditions",
  "field",
  "fields",
  "value",
  "value_from",
  "limit_key",
  "limit_value",
  "match_type",
]);
const QUERY_KEYS = new Set(["condition", "properties", "limit", "need_total", "sort", "search_after"]);
const OPERATIONS: ReadonlySet<unknown> = new Set(["and", "or", ...LEAF_OPERATIONS]);
const LIMIT_KEYS: ReadonlySet<unknown> = new Set(["k", "max_distance", "min_score"]);

/**
 * True when `value` is an ObjectQuery exactly as objectQuerySchema would give
 * it back: no key the schema does not know (it would drop them), no `=` alias
 * (it would rewrite it), every field of its type and within its limits. The
 * embedded engine then uses it as it is; anything else goes through the
 * schema, which normalises it or says precisely what is wrong. kn_search
 * sends a hundred queries a call, and parsing each with the schema was a
 * seventh of its time. test/kn/conditions.test.ts holds the two to agreement.
 */
export function isCanonicalObjectQuery(value: unknown): value is ObjectQuery {
  if (!isRecord(value) || !onlyKeys(value, QUERY_KEYS)) return false;
  const { condition, properties, limit, need_total, sort, search_after } = value;
  return (
    (condition === undefined || isCanonicalCondition(condition)) &&
    (properties === undefined || isArrayOf(properties, isNonEmptyString)) &&
    isLimit(limit) &&
    (need_total === undefined || typeof need_total === "boolean") &&
    (sort === undefined || isArrayOf(sort, isCanonicalSort)) &&
    (search_after === undefined || isArrayOf(search_after, isJson))
  );
}

const SORT_KEYS = new Set(["field", "direction"]);

function isCanonicalSort(s: unknown): boolean {
  return (
    isRecord(s) &&
    onlyKeys(s, SORT_KEYS) &&
    isNonEmptyString(s["field"]) &&
    (s["direction"] === "asc" || s["direction"] === "desc")
  );
}

function isLimit(v: unknown): boolean {
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= MAX_OBJECT_LIMIT;
}

function isCanonicalCondition(c: unknown): boolean {
  if (!isRecord(c) || !onlyKeys(c, CONDITION_KEYS) || !OPERATIONS.has(c["operation"])) return false;
  const subs = c["sub_conditions"];
  if (subs === undefined) {
    if (c["operation"] === "and" || c["operation"] === "or") return false;
  } else if (!Array.isArray(subs) || subs.length > MAX_SUB_CONDITIONS || !subs.every(isCanonicalCondition)) {
    return false;
  }
  const { field, fields, value_from, limit_key, limit_value, match_type } = c;
  return (
    (field === undefined || isNonEmptyString(field)) &&
    (fields === undefined || isArrayOf(fields, isNonEmptyString)) &&
    (value_from === undefined || value_from === "const") &&
    (limit_key === undefined || LIMIT_KEYS.has(limit_key)) &&
    (limit_value === undefined || (typeof limit_value === "number" && Number.isFinite(limit_value))) &&
    (match_type === undefined || typeof match_type === "string")
  );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function onlyKeys(v: Record<string, unknown>, known: ReadonlySet<string>): boolean {
  for (const k in v) if (!known.has(k)) return false;
  return true;
}

function isArrayOf(v: unknown, item: (x: unknown) => boolean): boolean {
  return Array.isArray(v) && v.every(item);
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

/** What jsonSchema accepts: finite numbers, and arrays and records of JSON. */
function isJson(v: unknown): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJson);
  return isRecord(v) && Object.values(v).every(isJson);
}

export interface ObjectQueryResult {
  /** Rows, each with `_score` when the condition scored text. */
  datas: Row[];
  /** Present when need_total was asked (the platform omits it when 0). */
  total_count?: number;
  /** Pass back to get the next page; absent on the last page. */
  search_after?: Json[];
}

/** One node of a relation_path: an object type with its own filter and limit. */
export interface PathObjectType {
  id: string;
  condition?: Condition;
  sort?: SortField[];
  /** Objects taken at this node, default 10. */
  limit?: number;
}

/** One edge of a path, in the direction of the walk. */
export interface PathEdge {
  relation_type_id: string;
  /** The object type at the start of this edge (object_types[i]). */
  source_object_type_id: string;
  /** The object type at its end (object_types[i + 1]). */
  target_object_type_id: string;
}

export interface RelationTypePath {
  object_types: PathObjectType[];
  relation_types: PathEdge[];
  /** Paths returned, default 10. */
  limit?: number;
}

export interface SubgraphQuery {
  relation_type_paths: RelationTypePath[];
  /** Logic property cells in every object's properties. */
  include_logic_params?: boolean;
}

export const subgraphQuerySchema = z.object({
  relation_type_paths: z
    .array(
      z.object({
        object_types: z
          .array(
            z.object({
              id: z.string().min(1),
              condition: conditionSchema.optional(),
              sort: z.array(z.object({ field: z.string().min(1), direction: z.enum(["asc", "desc"]) })).optional(),
              limit: z.number().int().min(1).max(MAX_OBJECT_LIMIT).optional(),
            }),
          )
          .min(2, zodText("a path needs at least two object types", "一条路径至少需要两个对象类型")),
        relation_types: z
          .array(
            z.object({
              relation_type_id: z.string().min(1),
              source_object_type_id: z.string().min(1),
              target_object_type_id: z.string().min(1),
            }),
          )
          .min(1, zodText("a path needs at least one relation type", "一条路径至少需要一个关系类型")),
        limit: z.number().int().min(1).max(MAX_OBJECT_LIMIT).optional(),
      }),
    )
    .min(1, zodText("must not be empty", "不能为空")),
  include_logic_params: z.boolean().optional(),
});

const PATH_KEYS = new Set(["object_types", "relation_types", "limit"]);
const PATH_OBJECT_KEYS = new Set(["id", "condition", "sort", "limit"]);
const PATH_EDGE_KEYS = new Set(["relation_type_id", "source_object_type_id", "target_object_type_id"]);

/**
 * The same as isCanonicalObjectQuery for subgraph queries: true when
 * subgraphQuerySchema would give `value` back unchanged. Keyword context and
 * kn_search send one with dozens of paths and conditions per call.
 */
export function isCanonicalSubgraphQuery(value: unknown): value is SubgraphQuery {
  if (!isRecord(value) || !onlyKeys(value, SUBGRAPH_KEYS)) return false;
  const paths = value["relation_type_paths"];
  return Array.isArray(paths) && paths.length > 0 && paths.every(isCanonicalPath);
}

const SUBGRAPH_KEYS = new Set(["relation_type_paths"]);

function isCanonicalPath(p: unknown): boolean {
  if (!isRecord(p) || !onlyKeys(p, PATH_KEYS)) return false;
  const { object_types, relation_types, limit } = p;
  return (
    Array.isArray(object_types) &&
    object_types.length >= 2 &&
    object_types.every(
      (o) =>
        isRecord(o) &&
        onlyKeys(o, PATH_OBJECT_KEYS) &&
        isNonEmptyString(o["id"]) &&
        (o["condition"] === undefined || isCanonicalCondition(o["condition"])) &&
        (o["sort"] === undefined || isArrayOf(o["sort"], isCanonicalSort)) &&
        (o["limit"] === undefined || isLimit(o["limit"])),
    ) &&
    Array.isArray(relation_types) &&
    relation_types.length >= 1 &&
    relation_types.every(
      (r) =>
        isRecord(r) &&
        onlyKeys(r, PATH_EDGE_KEYS) &&
        isNonEmptyString(r["relation_type_id"]) &&
        isNonEmptyString(r["source_object_type_id"]) &&
        isNonEmptyString(r["target_object_type_id"]),
    ) &&
    (limit === undefined || isLimit(limit))
  );
}

/** An object in a subgraph answer. */
export interface SubgraphObject {
  _instance_id: string;
  _instance_identity: InstanceIdentity;
  _display: Json;
  object_type_id: string;
  object_type_name: string;
  properties: Record<string, Json>;
}

export interface SubgraphRelation {
  relation_type_id: string;
  relation_type_name: string;
  /** The object at the start of this edge of the walk. */
  source_object_id: string;
  /** The object at its end. */
  target_object_id: string;
}

export interface SubgraphEntry {
  /** Keyed by `_instance_id` ("{object_type_id}-{pk values joined by _}"); never split the key. */
  objects: Record<string, SubgraphObject>;
  relation_paths: { relations: SubgraphRelation[]; length: number }[];
  /** Paths matching the template in all, limits aside, when the backend counts them. */
  total_count?: number;
}

/** One entry per requested path, in request order. */
export interface SubgraphResult {
  entries: SubgraphEntry[];
}

/** POST .../object-types/{ot}/properties. */
export interface PropertiesQuery {
  identities: InstanceIdentity[];
  properties: string[];
  /** Per logic property: its dynamic parameters. */
  dynamic_params?: Record<string, Record<string, Json>>;
}

export interface PropertiesResult {
  /** One entry per requested identity, in request order; null where nothing matched. */
  rows: (Record<string, Json> | null)[];
  /** The requested identities that matched no instance. */
  unmatched: InstanceIdentity[];
}

/** An operator's definition in the operator market. */
export interface OperatorDetail {
  operator_id: string;
  name: string;
  /** The operator's OpenAPI fragments: parameters and request body schema, as the market gives them. */
  metadata: { api_spec: { parameters?: Json; request_body?: Json } & Record<string, Json> } & Record<string, Json>;
  operator_info: { execution_mode?: string } & Record<string, Json>;
}

/** A metric logic property's value (the platform's shape). */
export interface MetricValue {
  model: { unit_type: string; unit: string };
  datas: { labels: Record<string, string>; times: number[]; values: (number | null)[] }[];
  step: string;
  is_variable: boolean;
  is_calendar: boolean;
}
