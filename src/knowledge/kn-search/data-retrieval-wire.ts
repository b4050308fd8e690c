import { z } from "zod";
import { parsedJsonObject } from "../../core/json";
import type { KnSearchAnswer } from "./answer";
import type { KnSearchInput } from "./input";

/** The spec's JSON request body for data-retrieval, every setting explicit so both ends apply the same defaults. */
export function requestBody(input: KnSearchInput, sessionId: string): Record<string, unknown> {
  return {
    query: input.query,
    kn_ids: input.kn_ids,
    session_id: sessionId,
    ...(input.additional_context ? { additional_context: input.additional_context } : {}),
    retrieval_config: input.retrieval_config,
    only_schema: input.only_schema,
  };
}

// Reading an answer: data-retrieval's is checked as the spec describes it, with
// its nullable fields read as absent and fields beyond the spec ignored.

const text = z
  .string()
  .nullish()
  .transform((s) => s ?? "");
const optionalText = z
  .string()
  .nullish()
  .transform((s) => s ?? undefined);
const texts = z
  .array(z.string())
  .nullish()
  .transform((l) => l ?? undefined);
const jsonObject = parsedJsonObject;

const propertySchema = z.object({
  name: text,
  display_name: text,
  type: optionalText,
  comment: optionalText,
  condition_operations: texts,
});

const logicPropertySchema = z.object({
  name: text,
  display_name: text,
  type: optionalText,
  comment: optionalText,
  data_source: jsonObject.nullish().transform((v) => v ?? undefined),
  parameters: z
    .array(jsonObject)
    .nullish()
    .transform((v) => v ?? undefined),
});

/** The object type answered; `kn_id` and the network searched fill what data-retrieval leaves out. */
function answerSchema(defaultKnId: string, sessionId: string) {
  const knId = z
    .string()
    .nullish()
    .transform((s) => s || defaultKnId);
  const objectType = z.object({
    kn_id: knId,
    concept_id: z.string(),
    concept_name: z.string(),
    comment: text,
    data_properties: z
      .array(propertySchema)
      .nullish()
      .transform((l) => l ?? []),
    logic_properties: z
      .array(logicPropertySchema)
      .nullish()
      .transform((l) => l ?? []),
    primary_keys: texts,
    display_key: optionalText,
    tags: texts,
    sample_data: jsonObject.nullable().optional(),
  });
  const relationType = z.object({
    kn_id: knId,
    concept_id: z.string(),
    concept_name: z.string(),
    source_object_type_id: z.string(),
    target_object_type_id: z.string(),
    comment: optionalText,
  });
  const actionType = z.object({
    id: z.string(),
    name: text,
    action_type: text,
    object_type_id: text,
    object_type_name: text,
    comment: text,
    tags: z
      .array(z.string())
      .nullish()
      .transform((l) => l ?? []),
    kn_id: knId,
  });
  // A node's name is keyed by its type: `<object_type_id>_name`.
  const node = z.looseObject({
    kn_id: knId,
    object_type_id: z.string().min(1),
    object_type_name: text,
    unique_identities: jsonObject,
    final_score: z
      .number()
      .nullish()
      .transform((s) => s ?? 0),
    data_properties: jsonObject.nullish().transform((p) => p ?? {}),
  });
  return z
    .object({
      object_types: z
        .array(objectType)
        .nullish()
        .transform((l) => l ?? []),
      relation_types: z
        .array(relationType)
        .nullish()
        .transform((l) => l ?? []),
      action_types: z
        .array(actionType)
        .nullish()
        .transform((l) => l ?? []),
      nodes: z
        .array(node)
        .nullish()
        .transform((l) => l ?? undefined),
      message: z
        .string()
        .nullish()
        .transform((m) => m || undefined),
      warnings: z
        .array(z.object({ target: text, reason: text, message: text }))
        .nullish()
        .transform((l) => l ?? []),
    })
    .transform((a): KnSearchAnswer => {
      // Types data-retrieval did not name come from the object types it returned.
      const typeNames = new Map(a.object_types.map((o) => [o.concept_id, o.concept_name]));
      return {
        session_id: sessionId,
        object_types: a.object_types,
        relation_types: a.relation_types,
        action_types: a.action_types,
        nodes: a.nodes?.map(
          ({ kn_id, object_type_id, object_type_name, unique_identities, final_score, data_properties, ...rest }) => ({
            kn_id,
            object_type_id,
            object_type_name: object_type_name || (typeNames.get(object_type_id) ?? ""),
            instance_name: nameOf(rest[`${object_type_id}_name`]),
            unique_identities,
            final_score,
            data_properties,
          }),
        ),
        message: a.message,
        warnings: a.warnings,
      };
    });
}

function nameOf(value: unknown): string {
  return value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The zod schema of data-retrieval's answer to one call: its kn_id is the
 * first network asked for (data-retrieval searches that one), its session the
 * one sent.
 */
export function upstreamAnswerSchema(input: KnSearchInput, sessionId: string) {
  return answerSchema(input.kn_ids[0]!.knowledge_network_id, sessionId);
}
