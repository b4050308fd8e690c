import { z } from "zod";
import { zodText } from "../../errors/text";
import { pathId } from "../../upstream/path-ids";
import { knIdEntry, MAX_KN_IDS, sessionIdField, sessionTypeField } from "../input-fields";

/**
 * Input of knowledge_retrieve in keyword mode. Required fields are checked in
 * the spec's order by the retrieval itself (see retrieve-keyword-context.ts),
 * so each gets the spec's own error.
 */
export const keywordContextInput = z.object({
  query: z
    .string()
    .trim()
    .max(
      200,
      zodText(
        "must be one keyword (at most 200 characters), not a question",
        "必须是一个关键词（最多 200 个字符），不是问题",
      ),
    )
    .default("")
    .describe("一个关键词（实体名），如“上气道梗阻”；不是整句问题"),
  kn_ids: z
    .array(knIdEntry)
    .max(MAX_KN_IDS)
    .default([])
    .describe('与 retrieve_schema 相同的知识网络，如 [{"knowledge_network_id": "kn_medical"}]'),
  session_id: sessionIdField,
  object_type_id: pathId(z.string().trim().max(256, zodText("must be at most 256 characters", "不能超过 256 个字符")))
    .default("")
    .describe("关键词所属的对象类型 ID，须在本会话的 Schema 中，如 disease、person"),
  compact_format: z.boolean().default(true).describe("RPC：true（默认）返回紧凑的 YAML 文本，false 返回结构化结果"),
  session_type: sessionTypeField,
});
export type KeywordContextInput = z.output<typeof keywordContextInput>;
