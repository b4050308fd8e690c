import { z } from "zod";
import { jsonSchema } from "../../core/json";
import { conditionSchema } from "../types";

/**
 * The parts of the KN bundle that the platform's agent tools read besides
 * instances: what action types are bound to and with which arguments, concept
 * groups, metric definitions, and the tool definitions (tool boxes, MCP
 * servers) that agent-operator-integration would serve. All optional.
 */

const actionParameterSchema = z.object({
  /** The tool argument it fills, a dot path for nested ones ("patient.age"). */
  name: z.string().min(1),
  type: z.string().default(""),
  /** Where it goes in the tool call: "header" | "query" | "path" | "body" (informative). */
  source: z.string().default(""),
  /** property: the instance's data property `value`; const: `value` itself; input: the caller gives it. */
  value_from: z.enum(["property", "const", "input"]),
  value: jsonSchema.optional(),
  comment: z.string().default(""),
});

const actionSourceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("tool"), box_id: z.string().min(1), tool_id: z.string().min(1) }),
  z.object({ type: z.literal("mcp"), mcp_id: z.string().min(1), tool_name: z.string().min(1) }),
]);

/** What an action type adds to the bundle's action_types entries. */
export const actionBindingFields = {
  /** The tool it runs; absent: bound to nothing (the action cannot be executed). */
  action_source: actionSourceSchema.optional(),
  parameters: z.array(actionParameterSchema).default([]),
  /** Which instances it applies to (over its object type's data properties); absent: all. */
  condition: conditionSchema.optional(),
};

const conceptGroupSchema = z.object({
  id: z.string().min(1),
  name: z.string().default(""),
  comment: z.string().default(""),
  tags: z.array(z.string()).default([]),
  /** Its object types; its relation types are those between two of them, its action types those on them. */
  object_type_ids: z.array(z.string().min(1)).min(1, "a concept group needs at least one object type"),
});

const metricDefinitionSchema = z.object({
  id: z.string().min(1),
  name: z.string().default(""),
  comment: z.string().default(""),
  unit_type: z.string().default(""),
  unit: z.string().default(""),
  metric_type: z.string().default("atomic"),
  scope_type: z.literal("object_type").default("object_type"),
  scope_ref: z.string().min(1),
  time_dimension: z.record(z.string(), jsonSchema).optional(),
  calculation_formula: z.record(z.string(), jsonSchema).default({}),
  analysis_dimensions: z.array(z.string()).default([]),
});

const toolBoxSchema = z.object({
  box_id: z.string().min(1),
  name: z.string().default(""),
  tools: z.array(
    z.object({
      tool_id: z.string().min(1),
      name: z.string().min(1),
      description: z.string().default(""),
      /** The tool's OpenAPI fragments, as agent-operator-integration serves them. */
      metadata: z.object({ api_spec: z.record(z.string(), jsonSchema) }).catchall(jsonSchema),
    }),
  ),
});

const mcpServerSchema = z.object({
  mcp_id: z.string().min(1),
  name: z.string().default(""),
  tools: z.array(
    z.object({
      name: z.string().min(1),
      description: z.string().default(""),
      inputSchema: z.record(z.string(), jsonSchema),
    }),
  ),
});

/** The bundle's top-level sections for the agent tools. */
export const agentToolSections = {
  concept_groups: z.array(conceptGroupSchema).default([]),
  metric_definitions: z.array(metricDefinitionSchema).default([]),
  tool_boxes: z.array(toolBoxSchema).default([]),
  mcp_servers: z.array(mcpServerSchema).default([]),
};

/** What the reference checks read of a parsed bundle (bundle.ts's Bundle has this shape). */
interface CheckedBundle {
  object_types: { id: string; data_properties: { name: string }[] }[];
  action_types: ({ id: string; object_type_id: string } & z.output<z.ZodObject<typeof actionBindingFields>>)[];
  concept_groups: z.output<typeof agentToolSections.concept_groups>;
  metric_definitions: z.output<typeof agentToolSections.metric_definitions>;
  tool_boxes: z.output<typeof agentToolSections.tool_boxes>;
  mcp_servers: z.output<typeof agentToolSections.mcp_servers>;
}

/** What in these sections names something that does not exist. */
export function agentToolProblems(b: CheckedBundle): string[] {
  const problems: string[] = [];
  const types = new Map(b.object_types.map((t) => [t.id, t]));
  const unique = (what: string, ids: string[]) => {
    const seen = new Set<string>();
    for (const id of ids) {
      if (seen.has(id)) problems.push(`${what}: duplicate id ${id}`);
      seen.add(id);
    }
  };
  unique(
    "concept_groups",
    b.concept_groups.map((g) => g.id),
  );
  unique(
    "metric_definitions",
    b.metric_definitions.map((m) => m.id),
  );
  unique(
    "tool_boxes",
    b.tool_boxes.map((t) => t.box_id),
  );
  unique(
    "mcp_servers",
    b.mcp_servers.map((s) => s.mcp_id),
  );
  for (const g of b.concept_groups)
    for (const id of g.object_type_ids)
      if (!types.has(id)) problems.push(`concept group ${g.id}: unknown object type ${id}`);
  for (const m of b.metric_definitions)
    if (!types.has(m.scope_ref)) problems.push(`metric ${m.id}: scope_ref ${m.scope_ref} is not an object type`);
  const boxes = new Map(b.tool_boxes.map((box) => [box.box_id, new Set(box.tools.map((t) => t.tool_id))]));
  const servers = new Map(b.mcp_servers.map((s) => [s.mcp_id, new Set(s.tools.map((t) => t.name))]));
  for (const a of b.action_types) {
    const props = new Set(types.get(a.object_type_id)?.data_properties.map((p) => p.name) ?? []);
    for (const p of a.parameters) {
      if (p.value_from === "property" && (typeof p.value !== "string" || !props.has(p.value)))
        problems.push(`action type ${a.id}: parameter ${p.name} names no data property of ${a.object_type_id}`);
    }
    const src = a.action_source;
    if (src?.type === "tool" && !boxes.get(src.box_id)?.has(src.tool_id))
      problems.push(`action type ${a.id}: tool ${src.tool_id} of tool box ${src.box_id} is not in tool_boxes`);
    if (src?.type === "mcp" && !servers.get(src.mcp_id)?.has(src.tool_name))
      problems.push(`action type ${a.id}: tool ${src.tool_name} of MCP server ${src.mcp_id} is not in mcp_servers`);
  }
  return problems;
}
