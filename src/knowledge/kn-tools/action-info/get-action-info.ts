import type { CallContext } from "../../../core/call-context";
import type { Json } from "../../../core/json";
import { type Language, text, verbatim } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";
import type { ActionQueryResult, ActionSource, InstantiatedAction } from "../../../kn/actions";
import { knIdOf } from "../../../kn/kn-id";
import type { InstanceIdentity } from "../../../kn/types";
import type { KnowledgeDeps } from "../../deps";
import type { GetActionInfoInput } from "./input";
import { fromMcpInputSchema, fromOpenApi, type ObjectSchema, withoutFixed } from "./tool-schema";

export type ActionInfoDeps = Pick<KnowledgeDeps, "backend">;

/** Tools one answer holds at most: an agent cannot choose among more. */
export const MAX_DYNAMIC_TOOLS = 20;

/** How the agent runtime calls a dynamic tool: through the platform's action driver. */
export const API_CALL_STRATEGY = "kn_action_recall";

const SEARCH_SCHEMA_RPC = "contextloader.kntools.v1.KnowledgeToolsService/SearchSchema";

/** One executable action as a function-call tool. */
export interface DynamicTool {
  name: string;
  description: string;
  /** JSON Schema of what the agent fills: `dynamic_params` (the arguments not fixed) and `_instance_identities`. */
  parameters: Record<string, Json>;
  /** The platform's execute endpoint of the action type. */
  api_url: string;
  /** What is already decided: the arguments the instance and the action type fix, and the instance. */
  fixed_params: { dynamic_params: Record<string, Json>; _instance_identities: InstanceIdentity[] };
  api_call_strategy: string;
}

export interface ActionInfoResult {
  /** The caller's identity headers, for the runtime to send when it executes. */
  headers: Record<string, string>;
  dynamic_tools: DynamicTool[];
  /** Why there is no tool, or why some instances got none; "" otherwise. */
  message: string;
  action_type: { id: string; name: string; object_type_id: string };
  /** What the action type is bound to (null: nothing). */
  action_source: ActionSource | null;
  /** The bound tool itself, when there are tools. */
  tool: { name: string; description: string } | undefined;
  /** For each dynamic tool, its instance's display value (its identity when the platform gives none). */
  instances: string[];
}

/**
 * get_action_info: an action type, for some instances, as function-call
 * tools the agent runtime can execute through the platform. The platform says
 * what the action type is bound to and, per instance, the arguments the
 * instance and the action type fix; the bound tool's definition (a tool box
 * tool's OpenAPI spec, or an MCP tool's input schema) gives the rest. Each
 * action (one per instance) becomes a tool whose parameters are the
 * arguments still open; nothing bound, or no instance it applies to, is an
 * empty list with a message saying why and what to do.
 */
export async function getActionInfo(
  deps: ActionInfoDeps,
  ctx: CallContext,
  input: GetActionInfoInput,
): Promise<ActionInfoResult> {
  const knId = knIdOf(input.kn_id, ctx);
  const result = await deps.backend
    .queryActions(ctx, knId, input.at_id, input.instance_identities)
    .catch((err: unknown) => {
      throw err instanceof ToolError ? explained(err, input.at_id) : err;
    });
  const actionType = result.action_type ?? { id: input.at_id, name: input.at_id, object_type_id: "", comment: "" };
  const answer: ActionInfoResult = {
    headers: identityHeaders(ctx),
    dynamic_tools: [],
    message: "",
    action_type: { id: actionType.id, name: actionType.name, object_type_id: actionType.object_type_id },
    action_source: result.action_source,
    tool: undefined,
    instances: [],
  };
  const language = ctx.language;
  const label = language === "zh" ? `${actionType.name}（${actionType.id}）` : `${actionType.name} (${actionType.id})`;
  if (!result.action_source) {
    answer.message = text(
      `Action type ${label} is bound to no executable tool or MCP tool, so no tool definition can be made. Bind an execution resource to it on the platform, or find another action type with search_schema.`,
      `行动类型 ${label} 没有绑定可执行的工具或 MCP 工具，无法生成工具定义。请在平台上为它绑定执行资源，或用 search_schema 查找其他行动类型。`,
    )[language];
    return answer;
  }
  if (result.actions.length === 0) {
    const asked = input.instance_identities.length;
    answer.message = (
      asked > 0
        ? text(
            `${asked > 1 ? `None of the ${asked} given instances fits` : "The given instance does not fit"} action type ${label} (the instance does not exist, or does not meet the action's conditions). Find the instances to act on with query_object_instance, copy the _instance_identity it returns as it is into _instance_identities, and call again.`,
            `给定的${asked > 1 ? ` ${asked} 个` : ""}实例都不适用行动类型 ${label}（实例不存在，或不满足该行动的适用条件）。请用 query_object_instance 查出要操作的实例，把返回的 _instance_identity 原样填入 _instance_identities 后重试。`,
          )
        : text(
            `Action type ${label} currently applies to no instance. First find the instances to act on with query_object_instance, then put their _instance_identity into _instance_identities.`,
            `行动类型 ${label} 当前没有适用的实例。请先用 query_object_instance 查出要操作的实例，再把其 _instance_identity 填入 _instance_identities。`,
          )
    )[language];
    return answer;
  }
  const tool = await boundTool(deps, ctx, result.action_source);
  const actions = result.actions.slice(0, MAX_DYNAMIC_TOOLS);
  answer.tool = { name: tool.name, description: tool.description };
  answer.instances = actions.map((action, i) => instanceName(action, identityOf(action, input.instance_identities, i)));
  answer.dynamic_tools = actions.map((action, i) =>
    dynamicTool(tool, action, identityOf(action, input.instance_identities, i), result, {
      label,
      instance: answer.instances[i]!,
      suffix: actions.length > 1 ? `_${i + 1}` : "",
      language,
    }),
  );
  answer.message = partialMessage(input.instance_identities, result, label, language);
  return answer;
}

interface BoundTool {
  name: string;
  description: string;
  schema: ObjectSchema;
}

const FIX_BINDING = text(
  "The action type's binding must be fixed on the platform; choose another action type meanwhile.",
  "需要在平台上修正这个行动类型的绑定；在此之前请选择其他行动类型。",
);

/** The definition of what the action type is bound to, as one object schema of arguments. */
async function boundTool(deps: ActionInfoDeps, ctx: CallContext, source: ActionSource): Promise<BoundTool> {
  if (source.type === "tool" && source.box_id && source.tool_id) {
    const tool = await deps.backend.getToolBoxTool(ctx, source.box_id, source.tool_id);
    return { name: tool.name, description: tool.description, schema: fromOpenApi(tool.name, tool.metadata.api_spec) };
  }
  if (source.type === "mcp" && source.mcp_id && source.tool_name) {
    const tools = await deps.backend.listMcpTools(ctx, source.mcp_id);
    const tool = tools.find((t) => t.name === source.tool_name);
    if (!tool) {
      throw new ToolError({
        code: "not_found",
        reason: "MCP_TOOL_NOT_FOUND",
        message: text(
          `the action type is bound to tool ${source.tool_name} of MCP server ${source.mcp_id}, which the server does not offer`,
          `行动类型绑定的是 MCP 服务 ${source.mcp_id} 的工具 ${source.tool_name}，而该服务不提供这个工具（未找到指定工具）`,
        ),
        metadata: { mcp_id: source.mcp_id, tool_name: source.tool_name },
        hint: {
          message: FIX_BINDING,
          validValues: tools.map((t) => t.name),
        },
      });
    }
    return { name: tool.name, description: tool.description, schema: fromMcpInputSchema(tool.name, tool.inputSchema) };
  }
  throw new ToolError({
    code: "failed_precondition",
    reason: "UNSUPPORTED_ACTION_SOURCE",
    message: text(
      `the action type is bound to a source of type "${source.type}" (${JSON.stringify(source)}); only tool box tools ("tool", with box_id and tool_id) and MCP tools ("mcp", with mcp_id and tool_name) can be executed`,
      `行动类型绑定的执行资源类型为 "${source.type}"（${JSON.stringify(source)}）；只有工具箱工具（"tool"，带 box_id 和 tool_id）和 MCP 工具（"mcp"，带 mcp_id 和 tool_name）可以执行`,
    ),
    metadata: { action_source_type: source.type },
    hint: { message: FIX_BINDING },
  });
}

function dynamicTool(
  tool: BoundTool,
  action: InstantiatedAction,
  identity: InstanceIdentity | undefined,
  result: ActionQueryResult,
  naming: { label: string; instance: string; suffix: string; language: Language },
): DynamicTool {
  const open = withoutFixed(tool.schema, action.parameters);
  const say = (en: string, zh: string) => text(en, zh)[naming.language];
  return {
    name: `${tool.name}${naming.suffix}`,
    description: say(
      `${tool.description} (action: ${naming.label}; instance: ${naming.instance})`,
      `${tool.description}（行动：${naming.label}；实例：${naming.instance}）`,
    ),
    parameters: {
      type: "object",
      properties: {
        dynamic_params: {
          type: "object",
          description: say(
            "The action's dynamic parameters: fill them in from the user's request; the parameters already decided are in fixed_params and need not be filled in again",
            "行动执行动态参数：由你根据用户的要求填写；已确定的参数在 fixed_params 中，不必再填",
          ),
          properties: open.properties,
          ...(open.required ? { required: open.required } : {}),
        },
        _instance_identities: {
          type: "array",
          description: say(
            "The instances the action is executed on (already given in fixed_params)",
            "执行行动的实例（已在 fixed_params 中给出）",
          ),
          items: { type: "object", additionalProperties: {} },
        },
      },
      ...(open.required ? { required: ["dynamic_params"] } : {}),
    },
    api_url: result.execute_url,
    fixed_params: { dynamic_params: action.parameters, _instance_identities: identity ? [identity] : [] },
    api_call_strategy: API_CALL_STRATEGY,
  };
}

/** How an instance is named to the agent: its display value, else its identity. */
function instanceName(action: InstantiatedAction, identity: InstanceIdentity | undefined): string {
  return action._display !== undefined && action._display !== null
    ? String(action._display)
    : JSON.stringify(identity ?? {});
}

/** The instance an action is for: the platform says, else the identity asked for at its position. */
function identityOf(action: InstantiatedAction, asked: InstanceIdentity[], i: number): InstanceIdentity | undefined {
  return action._instance_identity ?? (asked.length === 0 ? undefined : asked[i]);
}

/** Why some instances have no tool: they did not match, or there were more than one answer holds. */
function partialMessage(
  asked: InstanceIdentity[],
  result: ActionQueryResult,
  label: string,
  language: Language,
): string {
  const parts: string[] = [];
  if (asked.length > 0 && result.actions.length < asked.length) {
    const matched = new Set(result.actions.map((a) => JSON.stringify(a._instance_identity ?? null)));
    const missing = asked.filter((identity) => !matched.has(JSON.stringify(identity)));
    // Which ones is known only when the platform says whose each action is.
    const known = result.actions.every((a) => a._instance_identity !== undefined);
    const listed = known && missing.length > 0 ? missing.map((m) => JSON.stringify(m)) : [];
    const named = listed.length > 0 ? text(`: ${listed.join(", ")}`, `：${listed.join("、")}`) : verbatim("");
    const unfit = asked.length - result.actions.length;
    parts.push(
      text(
        `${unfit} instance(s) do not fit action type ${label} (the instance does not exist, or does not meet the action's conditions)${named.en}.`,
        `${unfit} 个实例不适用行动类型 ${label}（实例不存在，或不满足该行动的适用条件）${named.zh}。`,
      )[language],
    );
  }
  const total = Math.max(result.total_count, result.actions.length);
  if (total > MAX_DYNAMIC_TOOLS) {
    parts.push(
      text(
        `The action type applies to ${total} instances; tool definitions are returned for the first ${MAX_DYNAMIC_TOOLS} only. Name the instances to act on in _instance_identities.`,
        `该行动类型适用于 ${total} 个实例，只返回了前 ${MAX_DYNAMIC_TOOLS} 个的工具定义；请在 _instance_identities 中指定要操作的实例。`,
      )[language],
    );
  }
  return parts.join(language === "zh" ? "" : " ");
}

/** The caller's identity, as the runtime must send it when it executes. */
function identityHeaders(ctx: CallContext): Record<string, string> {
  return {
    ...(ctx.caller.accountId !== "" ? { "x-account-id": ctx.caller.accountId } : {}),
    "x-account-type": ctx.caller.accountType,
  };
}

/**
 * The platform's or the engine's failure, with the agent's next step: an
 * unknown network names kn_id, an unknown action type points at
 * search_schema; both keep the valid ids the backend listed.
 */
function explained(err: ToolError, atId: string): ToolError {
  if (err.code === "not_found" && err.reason === "KNOWLEDGE_NETWORK_NOT_FOUND") {
    return new ToolError({
      code: err.code,
      reason: err.reason,
      message: err.text,
      violations: [{ field: "kn_id", description: text("no such knowledge network", "没有这个知识网络") }],
      metadata: err.metadata,
      hint: {
        message: text(
          "Pass the id of an existing knowledge network as kn_id (or in the x-kn-id header).",
          "用 kn_id（或 x-kn-id 请求头）传入一个存在的知识网络的id。",
        ),
        ...(err.hint?.validValues ? { validValues: err.hint.validValues } : {}),
      },
      cause: err,
    });
  }
  if (err.code === "not_found") {
    return new ToolError({
      code: err.code,
      reason: err.reason === "UPSTREAM_NOT_FOUND" ? "ACTION_TYPE_NOT_FOUND" : err.reason,
      message: err.text,
      violations: [
        {
          field: "at_id",
          description: text(`${atId} is not an action type of this network`, `${atId} 不是这个知识网络的行动类型`),
        },
      ],
      metadata: err.metadata,
      hint: {
        message: text(
          "Use an action type id from the action_types that SearchSchema returns.",
          "使用 SearchSchema 返回的 action_types 中的行动类型id。",
        ),
        nextRpc: SEARCH_SCHEMA_RPC,
        ...(err.hint?.validValues ? { validValues: err.hint.validValues } : {}),
      },
      cause: err,
    });
  }
  if (err.code === "invalid_argument") {
    return new ToolError({
      code: err.code,
      reason: err.reason,
      message: err.text,
      violations: err.violations,
      metadata: err.metadata,
      hint: {
        message: text(
          "Copy each instance's _instance_identity as it is from a query_object_instance or query_instance_subgraph answer (QueryObjectInstances, QueryInstanceSubgraph): every primary key, nothing made up.",
          "从 query_object_instance 或 query_instance_subgraph（QueryObjectInstances、QueryInstanceSubgraph）的应答中原样复制每个实例的 _instance_identity：包含每个主键，不可臆造。",
        ),
      },
      cause: err,
    });
  }
  return err;
}
