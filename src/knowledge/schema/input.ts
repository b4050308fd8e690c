import { z } from "zod";
import { zodText } from "../../errors/text";
import { additionalContextField, requiredKnIds, sessionIdField, sessionTypeField } from "../input-fields";

/** Input of knowledge_retrieve in schema mode (spec keyword-context-recall §2, data-retrieval-tools §7.1). */
export const retrieveSchemaInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, zodText("required: the user's full question", "必填：用户的完整问题"))
    .max(4000, zodText("must be at most 4000 characters", "不能超过 4000 个字符"))
    .describe("用户的完整问题，如“上气道梗阻有哪些症状”"),
  kn_ids: requiredKnIds,
  session_id: sessionIdField,
  additional_context: additionalContextField,
  top_k: z
    .number()
    .int()
    .min(1, zodText("must be between 1 and 100", "必须在 1 到 100 之间"))
    .max(100, zodText("must be between 1 and 100", "必须在 1 到 100 之间"))
    .default(10)
    .describe("返回最相关的关系类型数量（1-100，默认 10）；对象类型取这些关系的两端，最多约 2×top_k 个"),
  skip_llm: z
    .boolean()
    .default(true)
    .describe("true（默认）跳过大模型，用向量与词匹配排序；false 由大模型挑选相关关系类型（需服务配置 LLM）"),
  compact_format: z.boolean().default(true).describe("RPC：true（默认）返回紧凑的 YAML 文本，false 返回结构化结果"),
  // The spec's parameter table says false (its prose calls true the default); the table wins.
  return_union: z
    .boolean()
    .default(false)
    .describe("多轮时 true 返回本会话累计的 Schema（并集），false（默认）只返回本轮新增的"),
  session_type: sessionTypeField,
});
export type RetrieveSchemaInput = z.output<typeof retrieveSchemaInput>;
