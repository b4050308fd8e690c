import { z } from "zod";
import { type Json, jsonSchema } from "../../../core/json";
import { measureTree } from "../../../core/tree-size";
import { type Text, text, zodText } from "../../../errors/text";
import { MAX_SUB_CONDITIONS } from "../../../kn/types";
import {
  ALL_KNN_LIMIT_KEYS,
  ALL_OPERATIONS,
  DEFAULT_KNN_K,
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_LEAVES,
  VALUE_SHAPES,
  type ValueShape,
} from "./operators";

/** A condition as a caller writes it, before it is checked against an object type. */
export interface ConditionInput {
  operation: string;
  field?: string;
  sub_conditions?: ConditionInput[];
  value?: Json;
  value_from?: string;
  limit_key?: string;
  limit_value?: number;
  fields?: string[];
  match_type?: string;
}

const REF = { $ref: "#/$defs/Condition" };
const scalar = { type: ["string", "number", "boolean"] };
const fieldSchema = {
  type: "string",
  minLength: 1,
  description: "数据属性名（search_schema 返回的 data_properties[].name）",
};
const valueFrom = { const: "const", description: "值来源，只有 const（可省略）" };

const opsOf = (shape: ValueShape) => Object.entries(VALUE_SHAPES).flatMap(([op, s]) => (s === shape ? [op] : []));

/** A leaf variant of the JSON Schema: its operations, its value and which keys it needs. */
function leaf(title: string, operations: string[], value: Record<string, unknown> | undefined, extra = {}) {
  return {
    title,
    type: "object",
    properties: {
      field: fieldSchema,
      operation: { enum: operations },
      ...(value ? { value, value_from: valueFrom } : {}),
      ...extra,
    },
    required: value ? ["field", "operation", "value"] : ["field", "operation"],
    ...(value ? {} : { not: { required: ["value"] } }),
  };
}

/**
 * One variant per kind of node, told apart by `operation`: what an agent reads
 * to write a condition (the operations, the value each takes, which keys are
 * needed). Whether a field allows an operation depends on the object type and
 * is checked when the call is made.
 */
const VARIANTS = [
  {
    title: "组合条件（and / or）",
    type: "object",
    properties: {
      operation: { enum: ["and", "or"] },
      sub_conditions: { type: "array", maxItems: MAX_SUB_CONDITIONS, items: REF },
    },
    required: ["operation", "sub_conditions"],
  },
  leaf("比较：值为单个字符串、数字或布尔（= 同 ==）", [...opsOf("scalar"), "="], scalar),
  leaf(
    "文本：like/not_like 为子串匹配（不要写 % 通配符），regex 正则，prefix 前缀，match/match_phrase 全文检索（field 可为 *）",
    opsOf("text").filter((op) => op !== "multi_match"),
    { type: "string", minLength: 1 },
  ),
  leaf("集合：值为非空数组", opsOf("list"), { type: "array", minItems: 1, items: scalar }),
  leaf("区间：值为 [下界, 上界]；out_range 表示 < 下界 或 >= 上界", opsOf("pair"), {
    type: "array",
    minItems: 2,
    maxItems: 2,
    items: { type: ["string", "number"] },
  }),
  leaf("数组包含：值为单个值或非空数组", opsOf("value_or_list"), {
    anyOf: [scalar, { type: "array", minItems: 1, items: scalar }],
  }),
  leaf("存在性与真假：不带 value", opsOf("none"), undefined),
  leaf(
    "向量近邻 knn：值为要向量化的文本（field 可为 *）；limit_key/limit_value 控制返回多少",
    ["knn"],
    {
      anyOf: [
        { type: "string", minLength: 1 },
        { type: "array", minItems: 1, items: { type: "number" } },
      ],
    },
    {
      limit_key: {
        enum: [...ALL_KNN_LIMIT_KEYS],
        description:
          "k（默认，取最近的 k 个）、min_score（相似度不低于）或 max_distance（距离不超过；min_distance 同义）",
      },
      limit_value: { type: "number", description: `limit_key 的取值；k 默认 ${DEFAULT_KNN_K}` },
    },
  ),
  {
    title: "多字段全文检索 multi_match：在 fields 上匹配 value",
    type: "object",
    properties: {
      operation: { const: "multi_match" },
      fields: { type: "array", minItems: 1, items: { type: "string" } },
      value: { type: "string", minLength: 1 },
      value_from: valueFrom,
      match_type: { type: "string", description: "默认 best_fields" },
    },
    required: ["operation", "value"],
  },
];

/**
 * The condition argument: parsed loosely (any operation name, any value), so
 * that every problem is reported by the check against the object type with
 * its path, what the property allows and a corrected example (see
 * check-condition.ts), never as a bare schema error; and shown to agents as
 * a recursive JSON Schema of one variant per kind of node. Its size is
 * measured first, without recursion: a condition of more than
 * MAX_CONDITION_LEAVES leaves or groups, or nested deeper than the checker
 * reads, is refused before any of it is parsed.
 */
export const conditionInput = z.preprocess(
  (value, ctx) => {
    const problem = sizeProblem(value);
    if (problem !== undefined) ctx.addIssue({ code: "custom", message: zodText(problem.en, problem.zh), input: value });
    return value;
  },
  z.lazy(() => conditionNode),
);

/** Nesting the size check lets through to the parser: one level past the checker's limit, so the checker names it. */
const PARSED_DEPTH = MAX_CONDITION_DEPTH + 2;

function sizeProblem(value: unknown): Text | undefined {
  const subConditions = (node: unknown): readonly unknown[] | undefined => {
    const subs =
      node !== null && typeof node === "object" ? (node as { sub_conditions?: unknown }).sub_conditions : undefined;
    return Array.isArray(subs) ? subs : undefined;
  };
  const size = measureTree(value, subConditions, {
    leaves: MAX_CONDITION_LEAVES,
    groups: MAX_CONDITION_LEAVES,
    depth: PARSED_DEPTH,
  });
  switch (size.over) {
    case undefined:
      return undefined;
    case "leaves":
      return text(
        `has more than ${MAX_CONDITION_LEAVES} leaf conditions; a condition takes at most ${MAX_CONDITION_LEAVES}: compare one field with several values using in, or query in several calls`,
        `叶子条件超过 ${MAX_CONDITION_LEAVES} 个；一个条件最多 ${MAX_CONDITION_LEAVES} 个：请用 in 把一个字段与多个值比较，或分几次查询`,
      );
    case "groups":
      return text(
        `has more than ${MAX_CONDITION_LEAVES} and/or groups; a condition takes at most ${MAX_CONDITION_LEAVES}`,
        `and/or 组超过 ${MAX_CONDITION_LEAVES} 个；一个条件最多 ${MAX_CONDITION_LEAVES} 个`,
      );
    case "depth":
      return text(
        `and/or groups are nested more than ${MAX_CONDITION_DEPTH} deep; flatten them (an and inside an and is one and)`,
        `and/or 组嵌套超过 ${MAX_CONDITION_DEPTH} 层；请把它们展平（and 里面的 and 就是同一个 and）`,
      );
  }
}

const conditionNode: z.ZodType<ConditionInput> = z.lazy(() =>
  z
    .object({
      operation: z
        .string()
        .meta({ enum: [...ALL_OPERATIONS], description: "and/or 组合子条件；其余为叶子条件的操作符" }),
      field: z
        .string()
        .optional()
        .describe("数据属性名；* 表示所有支持该操作的属性（match、match_phrase、knn）；__id 表示实例 ID（== 或 in）"),
      sub_conditions: z
        .array(conditionNode)
        .optional()
        .describe(
          `and/or 的子条件，每组最多 ${MAX_SUB_CONDITIONS} 个，嵌套最多 ${MAX_CONDITION_DEPTH} 层；{"operation":"and","sub_conditions":[]} 表示不过滤`,
        ),
      value: jsonSchema.optional().describe("比较的值，形状由 operation 决定（见各变体）"),
      value_from: z
        .string()
        .optional()
        .meta({ enum: ["const"], description: "值来源，只有 const（可省略）" }),
      limit_key: z
        .string()
        .optional()
        .meta({
          enum: [...ALL_KNN_LIMIT_KEYS],
          description: "仅 knn：k、min_score 或 max_distance（min_distance 同 max_distance）",
        }),
      limit_value: z.number().optional().describe("仅 knn：limit_key 的取值"),
      fields: z.array(z.string()).optional().describe("仅 multi_match：要匹配的属性"),
      match_type: z.string().optional().describe("仅 multi_match：best_fields（默认）等"),
    })
    .strict()
    .meta({
      id: "Condition",
      title: "过滤条件",
      description:
        "对象类实例的过滤条件（平台的条件语言）。叶子条件：field + operation + value；组合条件：operation 为 and/or，sub_conditions 为子条件。每个属性允许的 operation 以 search_schema 返回的 condition_operations 为准，调用前会按对象类校验。",
      oneOf: VARIANTS,
    }),
);
