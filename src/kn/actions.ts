import type { Json } from "../core/json";
import type { InstanceIdentity } from "./types";

/**
 * Actions: what an action type does for given instances (ontology-query's
 * action query), and the definitions of the tools actions are bound to
 * (agent-operator-integration's tool boxes and MCP servers).
 */

/**
 * What an action type is bound to: a tool of a tool box (`type: "tool"`,
 * `box_id`, `tool_id`) or a tool of an MCP server (`type: "mcp"`, `mcp_id`,
 * `tool_name`). Other types are passed through for the caller to refuse.
 */
export interface ActionSource {
  type: string;
  box_id?: string;
  tool_id?: string;
  mcp_id?: string;
  tool_name?: string;
}

/** One action: the action type instantiated for one instance. */
export interface InstantiatedAction {
  /** The tool arguments already decided (instance properties and constants), nested by their dot paths. */
  parameters: Record<string, Json>;
  /** The arguments left to the caller (the action type's `input` parameters), nested by their dot paths. */
  dynamic_params: Record<string, Json>;
  /** The instance it is for, when the platform says. */
  _instance_identity?: InstanceIdentity;
  /** That instance's display value, when the platform says. */
  _display?: Json;
}

/** The action type itself, as the action query describes it. */
export interface ActionTypeInfo {
  id: string;
  name: string;
  object_type_id: string;
  comment: string;
}

/** POST .../action-types/{at}: an action type's actions for some instances. */
export interface ActionQueryResult {
  action_type?: ActionTypeInfo;
  /** null when the action type is bound to nothing. */
  action_source: ActionSource | null;
  /** One per instance the action applies to, in the order of the identities asked for. */
  actions: InstantiatedAction[];
  /** Instances the action applies to in all (may exceed `actions`). */
  total_count: number;
  /**
   * Where the platform executes the action type (POST `{_instance_identities,
   * dynamic_params}`): ontology-query's `.../action-types/{at}/execute`. The
   * embedded engine, which executes nothing, gives the path without a host.
   */
  execute_url: string;
}

/** A tool of a tool box, as agent-operator-integration defines it. */
export interface ToolBoxTool {
  tool_id: string;
  name: string;
  description: string;
  /** The tool's OpenAPI fragments: `parameters`, `request_body`, `components`, as the platform gives them. */
  metadata: { api_spec: Record<string, Json> } & Record<string, Json>;
}

/** A tool an MCP server offers (its tools/list entry). */
export interface McpToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of its arguments; `$defs` may hold what `$ref`s point to. */
  inputSchema: Record<string, Json>;
}
