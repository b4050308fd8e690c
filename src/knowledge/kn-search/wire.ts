import { z } from "zod";
import { parsedJson, type Json } from "../../core/json";
import type { KnSearchInput } from "./input";

/**
 * kn_search's answer, the same whichever mode computed it, and its JSON form
 * (spec kn-search-proxy.zh.md "响应结构"): what data-retrieval's
 * `POST /tools/kn_search` answers, what our `POST /kn/kn_search` answers,
 * and what the simulator serves. Brief and full schema differ in which
 * fields are present, so optional fields here are absent in brief mode.
 */
export interface KnSearchAnswer {
  session_id: string;
  object_types: KnObjectType[];
  relation_types: KnRelationType[];
  action_types: KnActionType[];
  /** Undefined with only_schema. */
  nodes: KnNode[] | undefined;
  /** Why no node came back, when none did. */
  message: string | undefined;
  warnings: KnWarning[];
}

export interface KnWarning {
  target: string;
  reason: string;
  message: string;
}

export interface KnProperty {
  name: string;
  display_name: string;
  /** Full schema only, as are the fields below. */
  type?: string;
  comment?: string;
  condition_operations?: string[];
}

export interface KnLogicProperty {
  name: string;
  display_name: string;
  type?: string;
  comment?: string;
  data_source?: Record<string, Json>;
  parameters?: Record<string, Json>[];
}

export interface KnObjectType {
  kn_id: string;
  concept_id: string;
  concept_name: string;
  comment: string;
  data_properties: KnProperty[];
  logic_properties: KnLogicProperty[];
  /** Full schema only. */
  primary_keys?: string[];
  display_key?: string;
  tags?: string[];
  /** With include_sample_data: one instance's properties, null when the type has none. */
  sample_data?: Record<string, Json> | null;
}

export interface KnRelationType {
  kn_id: string;
  concept_id: string;
  concept_name: string;
  source_object_type_id: string;
  target_object_type_id: string;
  /** Full schema only. */
  comment?: string;
}

export interface KnActionType {
  id: string;
  name: string;
  action_type: string;
  object_type_id: string;
  object_type_name: string;
  comment: string;
  tags: string[];
  kn_id: string;
}

export interface KnNode {
  kn_id: string;
  object_type_id: string;
  object_type_name: string;
  /** The spec's `<object_type_id>_name`. */
  instance_name: string;
  unique_identities: Record<string, Json>;
  final_score: number;
  data_properties: Record<string, Json>;
}

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

/**
 * The answer in the spec's JSON shapes: a brief object type is concept_id,
 * concept_name, comment, data_properties and logic_properties by name and
 * display_name (and sample_data); a full one adds concept_type, the
 * properties' details, primary_keys, display_key and tags. Each node is
 * `{object_type_id, <object_type_id>_name, unique_identities, final_score,
 * data_properties}`. Beyond the spec: kn_id on every concept and node (which
 * network, when several are searched), object_type_name on nodes,
 * session_id, and warnings when there are any.
 */
export function renderAnswer(a: KnSearchAnswer): Record<string, Json> {
  const out: Record<string, Json> = {
    object_types: a.object_types.map((o) => {
      const full = o.primary_keys !== undefined;
      return {
        ...(full ? { concept_type: "object_type" } : {}),
        concept_id: o.concept_id,
        concept_name: o.concept_name,
        comment: o.comment,
        data_properties: o.data_properties.map((p) => ({ ...p })),
        logic_properties: o.logic_properties.map((p) => ({ ...p })),
        ...(full ? { primary_keys: o.primary_keys!, display_key: o.display_key ?? "", tags: o.tags ?? [] } : {}),
        ...(o.sample_data !== undefined ? { sample_data: o.sample_data } : {}),
        kn_id: o.kn_id,
      };
    }),
    relation_types: a.relation_types.map((r) => ({
      ...(r.comment !== undefined ? { concept_type: "relation_type" } : {}),
      concept_id: r.concept_id,
      concept_name: r.concept_name,
      source_object_type_id: r.source_object_type_id,
      target_object_type_id: r.target_object_type_id,
      ...(r.comment !== undefined ? { comment: r.comment } : {}),
      kn_id: r.kn_id,
    })),
    action_types: a.action_types.map((t) => ({ ...t })),
  };
  if (a.nodes !== undefined) {
    out["nodes"] = a.nodes.map((n) => ({
      object_type_id: n.object_type_id,
      [`${n.object_type_id}_name`]: n.instance_name,
      unique_identities: n.unique_identities,
      final_score: n.final_score,
      data_properties: n.data_properties,
      object_type_name: n.object_type_name,
      kn_id: n.kn_id,
    }));
  }
  if (a.message !== undefined) out["message"] = a.message;
  out["session_id"] = a.session_id;
  if (a.warnings.length > 0) out["warnings"] = a.warnings.map((w) => ({ ...w }));
  return out;
}

// Reading an answer: data-retrieval's is checked as the spec describes it, with
// its nullable fields read as absent and fields beyond the spec ignored.

const text = z.string().nullish().transform((s) => s ?? "");
const optionalText = z.string().nullish().transform((s) => s ?? undefined);
const texts = z.array(z.string()).nullish().transform((l) => l ?? undefined);
const jsonObject = z.record(z.string(), parsedJson);

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
  parameters: z.array(jsonObject).nullish().transform((v) => v ?? undefined),
});

/** The object type answered; `kn_id` and the network searched fill what data-retrieval leaves out. */
function answerSchema(defaultKnId: string, sessionId: string) {
  const knId = z.string().nullish().transform((s) => s || defaultKnId);
  const objectType = z.object({
    kn_id: knId,
    concept_id: z.string(),
    concept_name: z.string(),
    comment: text,
    data_properties: z.array(propertySchema).nullish().transform((l) => l ?? []),
    logic_properties: z.array(logicPropertySchema).nullish().transform((l) => l ?? []),
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
    tags: z.array(z.string()).nullish().transform((l) => l ?? []),
    kn_id: knId,
  });
  // A node's name is keyed by its type: `<object_type_id>_name`.
  const node = z.looseObject({
    kn_id: knId,
    object_type_id: z.string().min(1),
    object_type_name: text,
    unique_identities: jsonObject,
    final_score: z.number().nullish().transform((s) => s ?? 0),
    data_properties: jsonObject.nullish().transform((p) => p ?? {}),
  });
  return z
    .object({
      object_types: z.array(objectType).nullish().transform((l) => l ?? []),
      relation_types: z.array(relationType).nullish().transform((l) => l ?? []),
      action_types: z.array(actionType).nullish().transform((l) => l ?? []),
      nodes: z.array(node).nullish().transform((l) => l ?? undefined),
      message: z.string().nullish().transform((m) => m || undefined),
      warnings: z.array(z.object({ target: text, reason: text, message: text })).nullish().transform((l) => l ?? []),
    })
    .transform((a): KnSearchAnswer => {
      // Types data-retrieval did not name come from the object types it returned.
      const typeNames = new Map(a.object_types.map((o) => [o.concept_id, o.concept_name]));
      return {
        session_id: sessionId,
        object_types: a.object_types,
        relation_types: a.relation_types,
        action_types: a.action_types,
        nodes: a.nodes?.map(({ kn_id, object_type_id, object_type_name, unique_identities, final_score, data_properties, ...rest }) => ({
          kn_id,
          object_type_id,
          object_type_name: object_type_name || (typeNames.get(object_type_id) ?? ""),
          instance_name: nameOf(rest[`${object_type_id}_name`]),
          unique_identities,
          final_score,
          data_properties,
        })),
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
