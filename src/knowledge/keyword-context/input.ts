import { z } from "zod";
import { knIdEntry, MAX_KN_IDS, sessionIdField, sessionTypeField } from "../input-fields";

/**
 * Input of knowledge_retrieve in keyword mode. Required fields are checked in
 * the spec's order by the retrieval itself (see retrieve-keyword-context.ts),
 * so each gets the spec's own error.
 */
export const keywordContextInput = z.object({
  query: z.string().trim().max(200, "query must be one keyword (at most 200 characters), not a question").default(""),
  kn_ids: z.array(knIdEntry).max(MAX_KN_IDS).default([]),
  session_id: sessionIdField,
  object_type_id: z.string().trim().max(256, "object_type_id must be at most 256 characters").default(""),
  compact_format: z.boolean().default(true),
  session_type: sessionTypeField,
});
export type KeywordContextInput = z.output<typeof keywordContextInput>;
