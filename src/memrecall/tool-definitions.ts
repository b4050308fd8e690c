import { z } from "zod";
import type { Json } from "../core/json";
import { memrecallTools, SPEC_TOOLS } from "./tools";

/** An OpenAI function-calling tool definition. */
export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, Json> };
}

/**
 * The five spec tools as OpenAI function definitions, in the spec's order
 * (what ListTools returns), from the same tool records MCP lists: each JSON
 * Schema is derived from the zod schema the service validates the tool's input
 * with, so what an agent is told is what is enforced.
 */
export function toolDefinitions(maxContextWindow: number): ToolDefinition[] {
  const tools = new Map(memrecallTools(maxContextWindow).map((t) => [t.name, t]));
  return SPEC_TOOLS.map((name) => {
    const tool = tools.get(name)!;
    const jsonSchema = z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Record<string, Json>;
    const { $schema: _draft, ...parameters } = jsonSchema;
    return { type: "function", function: { name, description: tool.description, parameters } };
  });
}
