import { z } from "zod";

/**
 * Request fields several knowledge tools share, with the same limits and
 * messages everywhere (spec keyword-context-recall §2–§4, data-retrieval-tools §7).
 */

/** Knowledge networks one call may name. */
export const MAX_KN_IDS = 20;

/** One entry of kn_ids. */
export const knIdEntry = z.object({
  knowledge_network_id: z.string().trim().min(1, "knowledge_network_id is required"),
});

/** kn_ids when the call needs at least one network. */
export const requiredKnIds = z
  .array(knIdEntry)
  .min(1, 'kn_ids needs at least one knowledge network, e.g. [{"knowledge_network_id": "kn_medical"}]')
  .max(MAX_KN_IDS, `at most ${MAX_KN_IDS} knowledge networks`);

export const sessionIdField = z.string().trim().max(256, "session_id must be at most 256 characters").default("");

export const additionalContextField = z
  .string()
  .max(20_000, "additional_context must be at most 20000 characters")
  .default("");

/** Where the session lives: "" for the default (Redis when configured), "redis" or "in_memory" (spec §2.5). */
export const sessionTypeField = z
  .enum(["", "redis", "in_memory"], { error: 'session_type must be "redis" or "in_memory"' })
  .default("");
