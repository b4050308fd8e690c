import { z } from "zod";
import { parsedJson } from "../../core/json";
import type { ActionSource, InstantiatedAction } from "../actions";
import type { ConceptGroup, MetricDefinition } from "../concepts";
import { actionTypeSchema, list, objectTypeSchema, relationTypeSchema, text, texts } from "./platform-wire";

/**
 * The platform's answers that the agent tools read: concept groups and typed
 * searches (ontology-manager), action queries (ontology-query), tool box tools
 * and MCP tool lists (agent-operator-integration). Lenient as the platform is
 * (null for empty lists, extra fields dropped), strict where a missing field
 * would make the answer useless.
 */

const jsonRecord = z.record(z.string(), parsedJson);
const score = z.object({ _score: z.number().nullish() });

/** Keeps `_score` only when the platform sent one. */
function withScore<T extends object>(hit: T & { _score?: number | null }): T & { _score?: number } {
  const { _score, ...rest } = hit;
  return (_score === undefined || _score === null ? rest : { ...rest, _score }) as T & { _score?: number };
}

// ---------------------------------------------------------------------------
// ontology-manager

const conceptGroupSchema: z.ZodType<ConceptGroup, unknown> = z.object({
  id: z.string().min(1),
  name: text,
  comment: text,
  tags: texts,
});

export const conceptGroupListSchema = z.object({
  entries: list(conceptGroupSchema),
  total_count: z
    .number()
    .int()
    .nullish()
    .transform((v) => v ?? 0),
});

const metricSchema: z.ZodType<MetricDefinition, unknown> = z
  .object({
    id: z.string().min(1),
    name: text,
    comment: text,
    unit_type: text,
    unit: text,
    metric_type: text,
    scope_type: text,
    scope_ref: text,
    time_dimension: jsonRecord.nullish(),
    calculation_formula: jsonRecord.nullish().transform((v) => v ?? {}),
    analysis_dimensions: texts,
  })
  .transform(({ time_dimension, ...m }) => (time_dimension ? { ...m, time_dimension } : m));

/** `{entries: [...]}` of a typed search: each hit the concept plus its `_score`. */
const hits = <T extends object>(item: z.ZodType<T, unknown>) =>
  z.object({ entries: list(z.intersection(item, score).transform(withScore)) }).transform((r) => r.entries);

export const conceptHitSchemas = {
  object_types: hits(objectTypeSchema),
  relation_types: hits(relationTypeSchema),
  action_types: hits(actionTypeSchema),
  metrics: hits(metricSchema),
};

// ---------------------------------------------------------------------------
// ontology-query

const actionSourceSchema: z.ZodType<ActionSource, unknown> = z
  .object({
    type: z.string().min(1),
    box_id: z.string().optional(),
    tool_id: z.string().optional(),
    mcp_id: z.string().optional(),
    tool_name: z.string().optional(),
  })
  .transform(
    (s) =>
      Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined && v !== "")) as unknown as ActionSource,
  );

const actionSchema: z.ZodType<InstantiatedAction, unknown> = z
  .object({
    parameters: jsonRecord.nullish().transform((v) => v ?? {}),
    dynamic_params: jsonRecord.nullish().transform((v) => v ?? {}),
    _instance_identity: jsonRecord.optional(),
    unique_identities: jsonRecord.optional(),
    _display: parsedJson.optional(),
  })
  .transform(({ unique_identities, _instance_identity, ...a }) => {
    const identity = _instance_identity ?? unique_identities;
    return identity ? { ...a, _instance_identity: identity } : a;
  });

/** The action query's answer; `action_source` null (or absent) when the action type is bound to nothing. */
export const actionQueryResponseSchema = z.object({
  action_type: z
    .object({ id: z.string().min(1), name: text, object_type_id: text, comment: text })
    .nullish()
    .transform((v) => v ?? undefined),
  action_source: actionSourceSchema.nullish().transform((v) => v ?? null),
  actions: list(actionSchema),
  total_count: z.number().int().nullish(),
});

// ---------------------------------------------------------------------------
// agent-operator-integration

export const toolBoxToolSchema = z.object({
  tool_id: z.string().min(1),
  name: z.string().min(1),
  description: text,
  metadata: z
    .object({ api_spec: jsonRecord.nullish().transform((v) => v ?? {}) })
    .catchall(parsedJson)
    .nullish()
    .transform((v) => v ?? { api_spec: {} }),
});

export const mcpToolListSchema = z
  .object({
    tools: list(
      z.object({
        name: z.string().min(1),
        description: text,
        inputSchema: jsonRecord.nullish().transform((v) => v ?? { type: "object", properties: {} }),
      }),
    ),
  })
  .transform((r) => r.tools);
