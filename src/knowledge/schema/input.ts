import { z } from "zod";
import { additionalContextField, requiredKnIds, sessionIdField, sessionTypeField } from "../input-fields";

/** Input of knowledge_retrieve in schema mode (spec keyword-context-recall §2, data-retrieval-tools §7.1). */
export const retrieveSchemaInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, "query is required: the user's full question")
    .max(4000, "query must be at most 4000 characters"),
  kn_ids: requiredKnIds,
  session_id: sessionIdField,
  additional_context: additionalContextField,
  top_k: z
    .number()
    .int()
    .min(1, "top_k must be between 1 and 100")
    .max(100, "top_k must be between 1 and 100")
    .default(10),
  skip_llm: z.boolean().default(true),
  compact_format: z.boolean().default(true),
  // The spec's parameter table says false (its prose calls true the default); the table wins.
  return_union: z.boolean().default(false),
  session_type: sessionTypeField,
});
export type RetrieveSchemaInput = z.output<typeof retrieveSchemaInput>;
