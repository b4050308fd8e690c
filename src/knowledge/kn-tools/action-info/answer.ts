import type { Json } from "../../../core/json";
import { compact, table } from "../../../core/tables";
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

type JsonObject = Record<string, Json>;
const isObject = (v: Json | undefined): v is JsonObject => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The compact answer, for an agent to read: what every tool shares said once
 * (the action type, the bound tool, the execute URL and strategy, the
 * headers), the arguments still open as one table (a row per argument, nested
 * ones by dot path: type, whether required, description, allowed values), and
 * a row per tool with its instance and the arguments already fixed. The
 * function-call definitions themselves are the RPC's and the REST route's.
 */
export function actionInfoAnswer(r: ActionInfoResult): Json {
  const argumentTables = r.dynamic_tools.map((t) => table(argumentRows(openArguments(t.parameters))));
  const shared = new Set(argumentTables.map((a) => JSON.stringify(a))).size === 1 ? argumentTables[0] : undefined;
  const source = r.action_source;
  return compact({
    action_type: compact({ ...r.action_type }),
    tool: r.tool ? compact({ ...r.tool }) : undefined,
    bound_to: source
      ? source.type === "mcp"
        ? `mcp ${source.mcp_id}/${source.tool_name}`
        : `${source.type} ${source.box_id}/${source.tool_id}`
      : "",
    api_url: r.dynamic_tools[0]?.api_url,
    api_call_strategy: r.dynamic_tools[0]?.api_call_strategy,
    headers: r.headers,
    arguments: shared,
    tools: table(
      r.dynamic_tools.map((t, i) => ({
        name: t.name,
        instance: r.instances[i],
        identity: pairs(t.fixed_params._instance_identities[0] ?? {}),
        fixed: pairs(t.fixed_params.dynamic_params),
        ...(shared === undefined ? { arguments: argumentTables[i] } : {}),
      })),
    ),
    message: r.message,
  });
}

/** The `dynamic_params` object schema inside a tool's parameters. */
function openArguments(parameters: JsonObject): JsonObject {
  const properties = isObject(parameters["properties"]) ? parameters["properties"] : {};
  return isObject(properties["dynamic_params"]) ? properties["dynamic_params"] : {};
}

/** One row per property of an object schema, nested objects' properties after their own row by dot path. */
function argumentRows(schema: JsonObject, prefix = ""): Record<string, Json>[] {
  const properties = isObject(schema["properties"]) ? schema["properties"] : {};
  const required = Array.isArray(schema["required"]) ? schema["required"] : [];
  return Object.entries(properties).flatMap(([name, raw]) => {
    const p = isObject(raw) ? raw : {};
    const items = isObject(p["items"]) ? p["items"] : undefined;
    const row = {
      name: `${prefix}${name}`,
      type:
        items && typeof items["type"] === "string"
          ? `${String(p["type"])} of ${items["type"]}`
          : String(p["type"] ?? ""),
      required: required.includes(name),
      description: typeof p["description"] === "string" ? p["description"] : "",
      values: Array.isArray(p["enum"]) ? p["enum"].map(String).join(", ") : "",
    };
    return [row, ...argumentRows(p, `${prefix}${name}.`)];
  });
}

/** A flat "key=value; …" line of an object, nested keys by dot path. */
function pairs(value: JsonObject, prefix = ""): string {
  return Object.entries(value)
    .map(([k, v]) =>
      isObject(v) ? pairs(v, `${prefix}${k}.`) : `${prefix}${k}=${typeof v === "string" ? v : JSON.stringify(v)}`,
    )
    .filter((s) => s !== "")
    .join("; ");
}
