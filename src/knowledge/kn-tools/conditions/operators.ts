import { type Text, text } from "../../../errors/text";
import type { LeafOperation } from "../../../kn/types";

/**
 * The condition language's operations and the shape of the value each takes:
 * what the validator enforces and what the tools' JSON Schema shows an agent
 * (ANCHOR-TOOLS §2; ontology-query's own list, less `before` and `current`,
 * whose value shapes the platform does not publish).
 */

/** How a leaf's `value` must look for its operation. */
export type ValueShape =
  /** A string, number or boolean. */
  | "scalar"
  /** A non-empty string. */
  | "text"
  /** A value, or a non-empty list of values. */
  | "value_or_list"
  /** A non-empty list of strings, numbers or booleans. */
  | "list"
  /** [low, high]. */
  | "pair"
  /** No value at all. */
  | "none"
  /** A text to embed, or a vector of numbers. */
  | "vector_query";

export const GROUP_OPERATIONS = ["and", "or"] as const;

/** Each leaf operation's value shape, in the order the schema lists them. */
export const VALUE_SHAPES: Record<LeafOperation, ValueShape> = {
  "==": "scalar",
  "!=": "scalar",
  ">": "scalar",
  ">=": "scalar",
  "<": "scalar",
  "<=": "scalar",
  like: "text",
  not_like: "text",
  regex: "text",
  prefix: "text",
  not_prefix: "text",
  match: "text",
  match_phrase: "text",
  multi_match: "text",
  contain: "value_or_list",
  not_contain: "value_or_list",
  in: "list",
  not_in: "list",
  range: "pair",
  out_range: "pair",
  between: "pair",
  exist: "none",
  not_exist: "none",
  empty: "none",
  not_empty: "none",
  null: "none",
  not_null: "none",
  true: "none",
  false: "none",
  knn: "vector_query",
};

const LEAF_OPERATION_NAMES = Object.keys(VALUE_SHAPES) as LeafOperation[];

/** The platform's alias, read as the operation it stands for. */
export const OPERATION_ALIASES: Record<string, LeafOperation> = { "=": "==" };

/** Every operation a condition may name, aliases included. */
export const ALL_OPERATIONS: readonly string[] = [
  ...GROUP_OPERATIONS,
  ...LEAF_OPERATION_NAMES,
  ...Object.keys(OPERATION_ALIASES),
];

/** Operations that may take `field: "*"` (every property that allows them). */
export const ANY_FIELD_OPERATIONS: ReadonlySet<string> = new Set(["match", "match_phrase", "knn"]);

/** Operations that may take `field: "__id"` (instance ids, `_instance_id` of an answer). */
export const ID_FIELD_OPERATIONS: ReadonlySet<string> = new Set(["==", "in"]);

/** knn's limits as the platform's search services take them: the k nearest (default), a minimum similarity, a maximum distance. */
export const KNN_LIMIT_KEYS = ["k", "min_score", "max_distance"] as const;
export type KnnLimitKey = (typeof KNN_LIMIT_KEYS)[number];

/**
 * The platform tool's own name for the distance bound (its KnCondLimitKey
 * `min_distance`, ANCHOR-TOOLS §2): the same radial search as max_distance,
 * neighbours at most limit_value away. ontology-query and the platform's
 * vector search know only `max_distance`, so it is sent as that.
 */
export const KNN_LIMIT_ALIASES: Readonly<Record<string, KnnLimitKey>> = { min_distance: "max_distance" };

/** Every limit_key a condition may give, aliases included. */
export const ALL_KNN_LIMIT_KEYS: readonly string[] = [...KNN_LIMIT_KEYS, ...Object.keys(KNN_LIMIT_ALIASES)];
export const DEFAULT_KNN_K = 100;
export const MAX_KNN_K = 10_000;

/** At most this many and/or groups nested in one another. */
export const MAX_CONDITION_DEPTH = 10;

/**
 * At most this many leaves (and as many and/or groups) in one condition: an
 * agent's filter has a handful, and a condition is checked against the
 * object type leaf by leaf; larger ones are refused before that, unread.
 */
export const MAX_CONDITION_LEAVES = 1000;

/** Each shape in words, for messages. */
export const SHAPE_WORDS: Record<ValueShape, Text> = {
  scalar: text("a string, number or boolean", "字符串、数字或布尔值"),
  text: text("a non-empty string", "非空字符串"),
  value_or_list: text("a value or a non-empty list of values", "一个值或非空的值列表"),
  list: text("a non-empty list of strings, numbers or booleans", "由字符串、数字或布尔值组成的非空列表"),
  pair: text("[low, high], two strings or numbers", "[low, high]，两个字符串或数字"),
  none: text("no value (leave value out)", "无值（不传 value）"),
  vector_query: text("a text to embed or a vector of numbers", "要向量化的文本或数字向量"),
};
