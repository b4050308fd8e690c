import { z } from "zod";
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

const int = (name: string, min: number, max: number, fallback: number) =>
  nullAsAbsent(
    z
      .number({ error: `${name} must be a whole number from ${min} to ${max}` })
      .int(`${name} must be a whole number from ${min} to ${max}`)
      .min(min, `${name} must be from ${min} to ${max}`)
      .max(max, `${name} must be from ${min} to ${max}`)
      .default(fallback),
  );

const ratio = (name: string, min: number, fallback: number) =>
  nullAsAbsent(
    z
      .number({ error: `${name} must be a number from ${min} to 1` })
      .min(min, `${name} must be from ${min} to 1`)
      .max(1, `${name} must be from ${min} to 1`)
      .default(fallback),
  );

const flag = (name: string, fallback: boolean) =>
  nullAsAbsent(z.boolean({ error: `${name} must be true or false` }).default(fallback));

/** An object that names its unknown keys and lists the known ones. */
const section = <S extends z.ZodRawShape>(what: string, shape: S) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `${what} has no field ${issue.keys.map((k) => JSON.stringify(k)).join(", ")}; its fields are ${Object.keys(shape).join(", ")}`
        : issue.input === undefined
          ? undefined
          : `${what} must be an object`,
  });

export const conceptRetrievalInput = section("concept_retrieval", {
  top_k: int("top_k", 1, 100, 10),
  skip_llm: flag("skip_llm", true),
  return_union: flag("return_union", false),
  include_sample_data: flag("include_sample_data", false),
  schema_brief: flag("schema_brief", true),
  enable_coarse_recall: flag("enable_coarse_recall", true),
  coarse_object_limit: int("coarse_object_limit", 1, 100_000, 2000),
  coarse_relation_limit: int("coarse_relation_limit", 1, 100_000, 300),
  coarse_min_relation_count: int("coarse_min_relation_count", 1, 1_000_000, 5000),
  enable_property_brief: flag("enable_property_brief", true),
  per_object_property_top_k: int("per_object_property_top_k", 1, 1000, 8),
  global_property_top_k: int("global_property_top_k", 1, 10_000, 30),
});

export const semanticInstanceRetrievalInput = section("semantic_instance_retrieval", {
  initial_candidate_count: int("initial_candidate_count", 1, MAX_OBJECT_LIMIT, 50),
  per_type_instance_limit: int("per_type_instance_limit", 1, 100, 5),
  max_semantic_sub_conditions: int("max_semantic_sub_conditions", 1, MAX_SUB_CONDITIONS, 10),
  semantic_field_keep_ratio: ratio("semantic_field_keep_ratio", 0.01, 0.2),
  semantic_field_keep_min: int("semantic_field_keep_min", 1, 1000, 5),
  semantic_field_keep_max: int("semantic_field_keep_max", 1, 1000, 15),
  semantic_field_rerank_batch_size: int("semantic_field_rerank_batch_size", 1, 1024, 128),
  min_direct_relevance: ratio("min_direct_relevance", 0, 0.3),
  enable_global_final_score_ratio_filter: flag("enable_global_final_score_ratio_filter", true),
  global_final_score_ratio: ratio("global_final_score_ratio", 0, 0.25),
  exact_name_match_score: ratio("exact_name_match_score", 0, 0.85),
}).superRefine((s, ctx) => {
  if (s.semantic_field_keep_min > s.semantic_field_keep_max) {
    ctx.addIssue({
      code: "custom",
      path: ["semantic_field_keep_min"],
      message: `semantic_field_keep_min (${s.semantic_field_keep_min}) must not exceed semantic_field_keep_max (${s.semantic_field_keep_max})`,
    });
  }
});

export const propertyFilterInput = section("property_filter", {
  max_properties_per_instance: int("max_properties_per_instance", 1, 1000, 20),
  max_property_value_length: int("max_property_value_length", 1, 100_000, 500),
  enable_property_filter: flag("enable_property_filter", true),
});

export const retrievalConfigInput = section("retrieval_config", {
  concept_retrieval: nullAsAbsent(conceptRetrievalInput.prefault({})),
  semantic_instance_retrieval: nullAsAbsent(semanticInstanceRetrievalInput.prefault({})),
  property_filter: nullAsAbsent(propertyFilterInput.prefault({})),
});

export const knSearchInput = section("the kn_search request", {
  query: z
    .string({ error: "query is required: a question, or keywords separated by spaces" })
    .trim()
    .min(1, "query is required: a question, or keywords separated by spaces")
    .max(4000, "query must be at most 4000 characters")
    .describe("完整的问题，或空格分隔的关键词（最多取 5 个），如“上气道梗阻 呼吸困难”"),
  kn_ids: z
    .array(
      z.strictObject(
        {
          knowledge_network_id: pathId(
            z.string({ error: "knowledge_network_id is required" }).trim().min(1, "knowledge_network_id is required"),
          ),
        },
        {
          error: (issue) =>
            issue.code === "unrecognized_keys"
              ? `a kn_ids item has only knowledge_network_id (got ${issue.keys.join(", ")})`
              : undefined,
        },
      ),
      { error: 'kn_ids is required: a list like [{"knowledge_network_id": "kn_medical"}]' },
    )
    .min(1, 'kn_ids needs at least one knowledge network, e.g. [{"knowledge_network_id": "kn_medical"}]')
    .max(MAX_KN_IDS, `at most ${MAX_KN_IDS} knowledge networks`)
    .describe('要检索的业务知识网络，如 [{"knowledge_network_id": "kn_medical"}]'),
  session_id: nullAsAbsent(
    z
      .string({ error: "session_id must be a string" })
      .trim()
      .max(256, "session_id must be at most 256 characters")
      .default(""),
  ).describe("会话 ID：保存历次召回，配合 return_union 返回并集；不填则新建并返回"),
  additional_context: nullAsAbsent(
    z
      .string({ error: "additional_context must be a string" })
      .max(20_000, "additional_context must be at most 20000 characters")
      .default(""),
  ).describe("二次检索时的补充信息（改写后的问题、上次缺了什么），用于排序"),
  retrieval_config: nullAsAbsent(retrievalConfigInput.prefault({})).describe(
    "召回设置，通常不填：concept_retrieval（top_k、skip_llm、return_union、include_sample_data、schema_brief…）、semantic_instance_retrieval（per_type_instance_limit…）、property_filter",
  ),
  only_schema: flag("only_schema", false).describe("true 只返回概念（对象、关系、动作类型），不召回实例"),
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
