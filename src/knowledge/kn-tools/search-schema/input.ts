import { z } from "zod";
import { zodText } from "../../../errors/text";

const TRUE_OR_FALSE = zodText("must be true or false", "必须是 true 或 false");

/** Concept groups one call may name. */
const MAX_CONCEPT_GROUPS = 50;

const LABELS = {
  object_types: "对象类型",
  relation_types: "关系类型",
  action_types: "行动类型",
  metric_types: "指标类型",
};

const include = (what: keyof typeof LABELS) =>
  z.boolean({ error: TRUE_OR_FALSE }).default(true).describe(`是否返回${LABELS[what]}（默认 true）`);

/** What SearchSchema returns and where it looks; every include flag defaults to true. */
export const searchScopeInput = z
  .object({
    concept_groups: z
      .array(z.string({ error: zodText("must be a string id", "必须是字符串形式的id") }))
      .max(
        MAX_CONCEPT_GROUPS,
        zodText(`at most ${MAX_CONCEPT_GROUPS} concept groups`, `最多 ${MAX_CONCEPT_GROUPS} 个概念分组`),
      )
      .default([])
      // Trimmed, blanks dropped, repeats dropped keeping the first: what the platform's tool does.
      .transform((groups) => [...new Set(groups.map((g) => g.trim()).filter((g) => g !== ""))])
      .describe("只在这些概念分组（id）内检索；不传则检索整个知识网络。分组 id 不存在时报错并列出已有分组"),
    include_object_types: include("object_types"),
    include_relation_types: include("relation_types"),
    include_action_types: include("action_types"),
    include_metric_types: include("metric_types"),
  })
  .superRefine((s, ctx) => {
    if (!s.include_object_types && !s.include_relation_types && !s.include_action_types && !s.include_metric_types) {
      ctx.addIssue({
        code: "custom",
        path: ["include_object_types"],
        message: zodText(
          "at least one concept type must be enabled: set one of include_object_types, include_relation_types, include_action_types, include_metric_types to true",
          "至少要启用一种概念类型：把 include_object_types、include_relation_types、include_action_types、include_metric_types 之一设为 true",
        ),
      });
    }
  });

const QUERY_REQUIRED = zodText(
  "required: the question, or keywords separated by spaces",
  "必填：问题，或用空格分隔的关键词",
);
const MAX_CONCEPTS_RANGE = zodText("must be a whole number from 1 to 100", "必须是 1 到 100 之间的整数");

/** Input of SearchSchema (the platform's search_schema, §3 of its tool notes). */
export const searchSchemaInput = z.object({
  query: z
    .string({ error: QUERY_REQUIRED })
    .trim()
    .min(1, QUERY_REQUIRED)
    .max(4000, zodText("must be at most 4000 characters", "不能超过 4000 个字符"))
    .describe("用户的问题，或用空格分隔的多个关键词，如“上气道梗阻有哪些症状”“药品 召回”"),
  kn_id: z.string().trim().default("").describe("业务知识网络 ID，如 kn_medical；不传时使用连接的 x-kn-id 请求头"),
  search_scope: searchScopeInput
    .default({
      concept_groups: [],
      include_object_types: true,
      include_relation_types: true,
      include_action_types: true,
      include_metric_types: true,
    })
    .describe("检索范围：概念分组，以及返回哪几类概念（只影响返回，不影响召回）"),
  max_concepts: z
    .number({ error: MAX_CONCEPTS_RANGE })
    .int(MAX_CONCEPTS_RANGE)
    .min(1, zodText("must be greater than 0 (1 to 100)", "必须大于 0（1 到 100）"))
    .max(100, zodText("must be at most 100", "不能大于 100"))
    .default(10)
    .describe(
      "每类概念最多返回几个（1-100，默认 10）；对象类型先取返回的关系类型两端（为完整起见可超过此数），再按相关性补足",
    ),
  schema_brief: z
    .boolean({ error: TRUE_OR_FALSE })
    .default(false)
    .describe("true 返回精简 Schema：不带标签、数据源、主键和属性/关系的说明（默认 false）"),
  enable_rerank: z
    .boolean({ error: TRUE_OR_FALSE })
    .default(true)
    .describe(
      "true（默认）按与问题的相关性排序（配置了重排模型用重排模型，否则用向量与词匹配）；false 保持知识网络中的顺序",
    ),
});
export type SearchSchemaInput = z.output<typeof searchSchemaInput>;
