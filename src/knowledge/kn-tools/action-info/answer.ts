import type { Json } from "../../../core/json";
import type { ActionInfoResult } from "./get-action-info";

/**
 * The platform tool's get_action_info answer: `headers` (the caller's
 * identity) and `_dynamic_tools`, plus `message` when there is something to
 * explain. What the REST route returns.
 */
export function actionInfoJson(r: ActionInfoResult): Record<string, Json> {
  return {
    headers: r.headers,
    _dynamic_tools: r.dynamic_tools.map((t) => ({ ...t }) as unknown as Json),
    ...(r.message !== "" ? { message: r.message } : {}),
  };
}

/**
 * The answer an agent reads (MCP, output_format, `?response_format`): the
 * platform's function-call definitions themselves, as actionInfoJson, in the
 * format asked for. A runtime registers `_dynamic_tools` as tools and executes
 * them; a summary in other field names (an earlier version's rows of open
 * arguments) left the agent without what it needed to make the call.
 */
export function actionInfoAnswer(r: ActionInfoResult): Json {
  return actionInfoJson(r);
}
