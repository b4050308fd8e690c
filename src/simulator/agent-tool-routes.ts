import { z } from "zod";
import { type Json, jsonSchema } from "../core/json";
import { verbatim } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { violationsOf } from "../errors/validation";
import { type ConceptKind, MAX_CONCEPT_LIMIT } from "../kn/concepts";
import { conditionSchema } from "../kn/types";
import type { Call, Route } from "./route";

/** Below ontology-manager's and ontology-query's prefixes. */
const KN = "/knowledge-networks";

/** A typed search's body, as ontology-manager takes it (sort is always `_score` desc here). */
const searchBody = z.object({
  concept_groups: z.array(z.string().min(1)).optional(),
  condition: conditionSchema.optional(),
  sort: z.array(z.object({ field: z.string(), direction: z.enum(["asc", "desc"]) })).optional(),
  limit: z.number({ error: "limit is required: a whole number in 1..10000" }).int().min(1).max(MAX_CONCEPT_LIMIT),
  need_total: z.boolean().optional(),
});

/** Parses a request body or throws the platform's INVALID_ARGUMENT with one violation per field. */
function parseBody<S extends z.ZodType>(schema: S, body: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const violations = violationsOf(parsed.error);
  throw new ToolError({
    code: "invalid_argument",
    reason: "INVALID_QUERY",
    message: verbatim(`invalid ${what}: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`),
    violations,
  });
}

function typedSearch(kind: ConceptKind, path: string): Route {
  return {
    method: "POST",
    pattern: `${KN}/:kn/${path}`,
    service: "ontologyManager",
    methodOverride: true,
    async run({ ctx, backend, params, body }: Call) {
      const q = parseBody(searchBody, body, `${path} search`);
      const entries = await backend.searchConcepts(ctx, params["kn"]!, kind, {
        condition: q.condition,
        concept_groups: q.concept_groups,
        limit: q.limit,
      });
      return { entries: entries as unknown as Json[], ...(q.need_total ? { total_count: entries.length } : {}) };
    },
  };
}

/**
 * The platform routes the agent tools use beyond instances: ontology-manager's
 * concept groups and typed searches, ontology-query's action query, and
 * agent-operator-integration's tool box tools and MCP tool lists.
 */
export const agentToolRoutes: Route[] = [
  {
    method: "GET",
    pattern: `${KN}/:kn/concept-groups`,
    service: "ontologyManager",
    async run({ ctx, backend, params, query }) {
      const all = await backend.listConceptGroups(ctx, params["kn"]!);
      const offset = Number(query.get("offset") ?? 0) || 0;
      const limit = Number(query.get("limit") ?? 0) || all.length;
      return { entries: all.slice(offset, offset + limit) as unknown as Json[], total_count: all.length };
    },
  },
  typedSearch("object_types", "object-types"),
  typedSearch("relation_types", "relation-types"),
  typedSearch("action_types", "action-types"),
  typedSearch("metrics", "metrics"),
  {
    method: "POST",
    pattern: `${KN}/:kn/action-types/:at`,
    service: "ontologyQuery",
    async run({ ctx, backend, params, query, body, spelling }) {
      const started = performance.now();
      const field = spelling === "new" ? "_instance_identities" : "unique_identities";
      const q = parseBody(
        z.object({
          [field]: z.array(z.record(z.string(), jsonSchema)).optional(),
          dynamic_params: z.record(z.string(), jsonSchema).optional(),
        }),
        body,
        "action query",
      ) as Record<string, unknown>;
      const identities = (q[field] ?? []) as Record<string, Json>[];
      const result = await backend.queryActions(ctx, params["kn"]!, params["at"]!, identities);
      const actions = result.actions.map(({ _instance_identity, _display, ...a }) =>
        spelling === "new" ? { ...a, _instance_identity: _instance_identity ?? null, _display: _display ?? null } : a,
      );
      return {
        ...(query.get("include_type_info") === "true" && result.action_type
          ? { action_type: result.action_type as unknown as Json }
          : {}),
        action_source: result.action_source as unknown as Json,
        actions: actions as unknown as Json[],
        total_count: result.total_count,
        overall_ms: Math.round(performance.now() - started),
      };
    },
  },
  {
    method: "GET",
    pattern: "/tool-box/:box/tool/:tool",
    service: "operatorIntegration",
    run: ({ ctx, backend, params }) =>
      backend.getToolBoxTool(ctx, params["box"]!, params["tool"]!) as unknown as Promise<Json>,
  },
  {
    method: "GET",
    pattern: "/mcp/proxy/:mcp/tools",
    service: "operatorIntegration",
    run: async ({ ctx, backend, params }) => ({
      tools: (await backend.listMcpTools(ctx, params["mcp"]!)) as unknown as Json[],
    }),
  },
];
