import { z } from "zod";
import type { Json } from "../core/json";
import type { Tool } from "../core/tool";

/** The five tools the spec defines, in its order: what ListTools returns and what the recall agent's LLM is offered. */
export const SPEC_TOOLS = [
  "search_memories",
  "get_memory_detail",
  "extract_search_keywords",
  "expand_context_window",
  "handoff",
] as const;

/** An OpenAI function-calling tool definition. */
export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, Json> };
}

/**
 * The five spec tools of the registry (tools.ts) as OpenAI function
 * definitions, in the spec's order, from the same tool records MCP lists:
 * each JSON Schema is derived from the zod schema the service validates the
 * tool's input with, so what an agent is told is what is enforced.
 */
export function toolDefinitions(
  registry: readonly Pick<Tool<unknown>, "name" | "description" | "input">[],
): ToolDefinition[] {
  const tools = new Map(registry.map((t) => [t.name, t]));
  return SPEC_TOOLS.map((name) => {
    const tool = tools.get(name);
    if (!tool) throw new Error(`toolDefinitions: the registry has no ${name}`);
    const jsonSchema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, Json>;
    const { $schema: _draft, ...parameters } = jsonSchema;
    return { type: "function", function: { name, description: tool.description, parameters } };
  });
}
