import { z } from "zod";
import { zodText } from "../../errors/text";
import { nullAsAbsent } from "../../errors/validation";
import { MAX_OBJECT_LIMIT, MAX_SUB_CONDITIONS } from "../../kn/types";
import { pathId } from "../../upstream/path-ids";

/**
 * kn_search's input (spec kn-search-proxy.zh.md "请求参数"), every default of
 * the spec's table applied. One schema reads both the RPC (proto JSON, unset
 * fields absent) and the JSON route's body (where null means absent); keys
 * the spec does not list are refused, as data-retrieval refuses them, so a
 * misspelt setting is an error rather than silently ignored.
 */

const MAX_KN_IDS = 20;

const int = (min: number, max: number, fallback: number) => {
  const whole = zodText(`must be a whole number from ${min} to ${max}`, `必须是 ${min} 到 ${max} 之间的整数`);
  const range = zodText(`must be from ${min} to ${max}`, `必须在 ${min} 到 ${max} 之间`);
  return nullAsAbsent(z.number({ error: whole }).int(whole).min(min, range).max(max, range).default(fallback));
};

const ratio = (min: number, fallback: number) => {
  const range = zodText(`must be from ${min} to 1`, `必须在 ${min} 到 1 之间`);
  return nullAsAbsent(
    z
      .number({ error: zodText(`must be a number from ${min} to 1`, `必须是 ${min} 到 1 之间的数`) })
      .min(min, range)
      .max(1, range)
      .default(fallback),
  );
};

const flag = (fallback: boolean) =>
  nullAsAbsent(z.boolean({ error: zodText("must be true or false", "必须是 true 或 false") }).default(fallback));

/** An unknown key of `what` (a section's name; undefined: the request itself), with the fields there are. */
function notAField(what: string | undefined, fields: string): string {
  return what === undefined
    ? zodText(
        `not a field of the kn_search request; its fields are ${fields}`,
        `不是 kn_search 请求的字段；它的字段有：${fields}`,
      )
    : zodText(`not a field of ${what}; its fields are ${fields}`, `不是 ${what} 的字段；它的字段有：${fields}`);
}

/** An object that names its unknown keys (each its own violation) and lists the known ones. */
const section = <S extends z.ZodRawShape>(what: string | undefined, shape: S) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? notAField(what, Object.keys(shape).join(", "))
        : issue.input === undefined
          ? undefined
          : zodText("must be an object", "必须是对象"),
  });

export const conceptRetrievalInput = section("concept_retrieval", {
  top_k: int(1, 100, 10),
  skip_llm: flag(true),
  return_union: flag(false),
  include_sample_data: flag(false),
  schema_brief: flag(true),
  enable_coarse_recall: flag(true),
  coarse_object_limit: int(1, 100_000, 2000),
  coarse_relation_limit: int(1, 100_000, 300),
  coarse_min_relation_count: int(1, 1_000_000, 5000),
  enable_property_brief: flag(true),
  per_object_property_top_k: int(1, 1000, 8),
  global_property_top_k: int(1, 10_000, 30),
});

export const semanticInstanceRetrievalInput = section("semantic_instance_retrieval", {
  initial_candidate_count: int(1, MAX_OBJECT_LIMIT, 50),
  per_type_instance_limit: int(1, 100, 5),
  max_semantic_sub_conditions: int(1, MAX_SUB_CONDITIONS, 10),
  semantic_field_keep_ratio: ratio(0.01, 0.2),
  semantic_field_keep_min: int(1, 1000, 5),
  semantic_field_keep_max: int(1, 1000, 15),
  semantic_field_rerank_batch_size: int(1, 1024, 128),
  min_direct_relevance: ratio(0, 0.3),
  enable_global_final_score_ratio_filter: flag(true),
  global_final_score_ratio: ratio(0, 0.25),
  exact_name_match_score: ratio(0, 0.85),
}).superRefine((s, ctx) => {
  if (s.semantic_field_keep_min > s.semantic_field_keep_max) {
    ctx.addIssue({
      code: "custom",
      path: ["semantic_field_keep_min"],
      message: zodText(
        `${s.semantic_field_keep_min} must not exceed semantic_field_keep_max (${s.semantic_field_keep_max})`,
        `${s.semantic_field_keep_min} 不能超过 semantic_field_keep_max（${s.semantic_field_keep_max}）`,
      ),
    });
  }
});

export const propertyFilterInput = section("property_filter", {
  max_properties_per_instance: int(1, 1000, 20),
  max_property_value_length: int(1, 100_000, 500),
  enable_property_filter: flag(true),
});

export const retrievalConfigInput = section("retrieval_config", {
  concept_retrieval: nullAsAbsent(conceptRetrievalInput.prefault({})),
  semantic_instance_retrieval: nullAsAbsent(semanticInstanceRetrievalInput.prefault({})),
  property_filter: nullAsAbsent(propertyFilterInput.prefault({})),
});

const QUERY_REQUIRED = zodText(
  "required: a question, or keywords separated by spaces",
  "必填：问题，或用空格分隔的关键词",
);
const NETWORK_REQUIRED = zodText("required", "必填");

export const knSearchInput = section(undefined, {
  query: z
    .string({ error: QUERY_REQUIRED })
    .trim()
    .min(1, QUERY_REQUIRED)
    .max(4000, zodText("must be at most 4000 characters", "不能超过 4000 个字符"))
    .describe("完整的问题，或空格分隔的关键词（最多取 5 个），如“上气道梗阻 呼吸困难”"),
  kn_ids: z
    .array(
      z.strictObject(
        {
          knowledge_network_id: pathId(z.string({ error: NETWORK_REQUIRED }).trim().min(1, NETWORK_REQUIRED)),
        },
        {
          error: (issue) =>
            issue.code === "unrecognized_keys"
              ? zodText(
                  "not a field of a kn_ids item: it has only knowledge_network_id",
                  "不是 kn_ids 元素的字段：它只有 knowledge_network_id",
                )
              : undefined,
        },
      ),
      {
        error: zodText(
          'required: a list like [{"knowledge_network_id": "kn_medical"}]',
          '必填：形如 [{"knowledge_network_id": "kn_medical"}] 的列表',
        ),
      },
    )
    .min(
      1,
      zodText(
        'needs at least one knowledge network, e.g. [{"knowledge_network_id": "kn_medical"}]',
        '至少需要一个知识网络，例如 [{"knowledge_network_id": "kn_medical"}]',
      ),
    )
    .max(MAX_KN_IDS, zodText(`at most ${MAX_KN_IDS} knowledge networks`, `最多 ${MAX_KN_IDS} 个知识网络`))
    .describe('要检索的业务知识网络，如 [{"knowledge_network_id": "kn_medical"}]'),
  session_id: nullAsAbsent(
    z
      .string({ error: zodText("must be a string", "必须是字符串") })
      .trim()
      .max(256, zodText("must be at most 256 characters", "不能超过 256 个字符"))
      .default(""),
  ).describe("会话 ID：保存历次召回，配合 return_union 返回并集；不填则新建并返回"),
  additional_context: nullAsAbsent(
    z
      .string({ error: zodText("must be a string", "必须是字符串") })
      .max(20_000, zodText("must be at most 20000 characters", "不能超过 20000 个字符"))
      .default(""),
  ).describe("二次检索时的补充信息（改写后的问题、上次缺了什么），用于排序"),
  retrieval_config: nullAsAbsent(retrievalConfigInput.prefault({})).describe(
    "召回设置，通常不填：concept_retrieval（top_k、skip_llm、return_union、include_sample_data、schema_brief…）、semantic_instance_retrieval（per_type_instance_limit…）、property_filter",
  ),
  only_schema: flag(false).describe("true 只返回概念（对象、关系、动作类型），不召回实例"),
});

export type KnSearchInput = z.output<typeof knSearchInput>;
export type ConceptRetrievalConfig = KnSearchInput["retrieval_config"]["concept_retrieval"];
export type SemanticInstanceConfig = KnSearchInput["retrieval_config"]["semantic_instance_retrieval"];
export type PropertyFilterConfig = KnSearchInput["retrieval_config"]["property_filter"];

/** A query of several words separated by white space is that many keywords; at most this many are searched. */
export const MAX_KEYWORDS = 5;

/** The keywords of a query: its white-space separated parts (at most MAX_KEYWORDS), or the whole query. */
export function keywordsOf(query: string): string[] {
  const parts = query.split(/\s+/).filter((p) => p !== "");
  return parts.length > 1 ? [...new Set(parts)].slice(0, MAX_KEYWORDS) : [query.trim()];
}
