import { z } from "zod";
import { type Json, jsonSchema, parsedJson } from "../core/json";

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
          .max(MAX_SUB_CONDITIONS, `an and/or node takes at most ${MAX_SUB_CONDITIONS} sub_conditions`)
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
            message: `an ${c.operation} node needs sub_conditions`,
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
    .min(1, "limit must be at least 1")
    .max(MAX_OBJECT_LIMIT, `limit must be at most ${MAX_OBJECT_LIMIT}`),
  need_total: z.boolean().optional(),
  sort: z.array(z.object({ field: z.string().min(1), direction: z.enum(["asc", "desc"]) })).optional(),
  search_after: z.array(jsonSchema).optional(),
  include_logic_params: z.boolean().optional(),
});

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
          .min(2, "a path needs at least two object types"),
        relation_types: z
          .array(
            z.object({
              relation_type_id: z.string().min(1),
              source_object_type_id: z.string().min(1),
              target_object_type_id: z.string().min(1),
            }),
          )
          .min(1, "a path needs at least one relation type"),
        limit: z.number().int().min(1).max(MAX_OBJECT_LIMIT).optional(),
      }),
    )
    .min(1, "relation_type_paths must not be empty"),
  include_logic_params: z.boolean().optional(),
});

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
