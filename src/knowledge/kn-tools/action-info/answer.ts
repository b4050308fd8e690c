import type { Json } from "../../../core/json";
import { compact } from "../../../core/tables";
import type { ActionInfoResult } from "./get-action-info";

/**
 * The platform tool's get_action_info answer: `headers` (the caller's
 * identity) and `_dynamic_tools`, plus `message` when there is something to
 * explain. What the REST route returns and the RPC message is built from.
 */
export function actionInfoJson(r: ActionInfoResult): Record<string, Json> {
  return {
    headers: r.headers,
    _dynamic_tools: r.dynamic_tools.map((t) => ({ ...t }) as unknown as Json),
    ...(r.message !== "" ? { message: r.message } : {}),
  };
}

/**
 * The compact answer: what every tool shares said once (the action type, what
 * it is bound to, the execute URL and strategy, the headers, and the schema
 * of the arguments left open when it is the same for every tool), then per
 * tool its name, description, instance and fixed arguments.
 */
export function actionInfoAnswer(r: ActionInfoResult): Json {
  const schemas = new Set(r.dynamic_tools.map((t) => JSON.stringify(t.parameters)));
  const shared = schemas.size === 1 ? r.dynamic_tools[0]!.parameters : undefined;
  const source = r.action_source;
  return compact({
    action_type: compact({ ...r.action_type }),
    bound_to: source
      ? source.type === "mcp"
        ? `mcp ${source.mcp_id}/${source.tool_name}`
        : `${source.type} ${source.box_id}/${source.tool_id}`
      : "",
    api_url: r.dynamic_tools[0]?.api_url,
    api_call_strategy: r.dynamic_tools[0]?.api_call_strategy,
    headers: r.headers,
    parameters: shared,
    tools: r.dynamic_tools.map((t) =>
      compact({
        name: t.name,
        description: t.description,
        _instance_identities: t.fixed_params._instance_identities,
        fixed_params: t.fixed_params.dynamic_params,
        parameters: shared === undefined ? t.parameters : undefined,
      }),
    ),
    message: r.message,
  });
}
