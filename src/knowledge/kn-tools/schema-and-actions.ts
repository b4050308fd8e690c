import { defineTool, type Tool } from "../../core/tool";
import type { ToolError } from "../../errors/tool-error";
import { parseOrThrow } from "../../errors/validation";
import type { HttpRoute } from "../../server/http-routes";
import { type JsonRouteOptions, jsonRoute } from "../../server/json-route";
import type { KnowledgeDeps } from "../deps";
import { searchSchemaAnswer, searchSchemaJson } from "./search-schema/answer";
import { searchSchemaInput } from "./search-schema/input";
import { searchSchema } from "./search-schema/search-schema";

/** The same three as MCP tools (search_schema, get_action_info, find_skills). */
export const schemaAndActionTools: Tool<KnowledgeDeps>[] = [
  defineTool({
    name: "search_schema",
    title: "探索业务知识网络的 Schema（对象、关系、行动、指标类型）",
    description: `统一的 Schema 探索入口：根据问题（或空格分隔的关键词）返回业务知识网络中相关的对象类型、关系类型、行动类型和指标类型，只返回 Schema，不返回实例。

何时使用：回答涉及业务数据的问题前，先用它弄清有哪些类型、每个属性叫什么、可用哪些条件操作符；网络很大时可用 search_scope.concept_groups 限定在某几个概念分组内。

返回：object_types（id、name、display_key、primary_keys）；properties（每行一个数据属性，operations 为该属性允许的条件操作符，"default" 即 default_operations）；logic_properties（指标/算子及需要填写的 inputs）；relation_types（from → to）；action_types（可对实例执行的行动）；metric_types（指标定义，object_type 与 logic_property 指明用哪个对象类型的哪个逻辑属性取值）；ranking_method；warnings（排序降级等）。

下一步：按条件查实例用 query_object_instance（ot_id 取 object_types 的 id，条件只用 operations 里的操作符）；沿关系取多跳数据用 query_instance_subgraph；取指标/算子值用 get_logic_properties_values；对实例执行行动前用 get_action_info（at_id 取 action_types 的 id）；找可用技能用 find_skills。`,
    input: searchSchemaInput,
    run: async (deps, ctx, input) => searchSchemaAnswer(await searchSchema(deps, ctx, input)),
  }),
];

/** The platform's agent-retrieval routes these tools answer on. */
const ROUTE_BASE = "/api/agent-retrieval/in/v1/kn";

/**
 * Their REST routes: the platform tool's paths, bodies and answers (errors in
 * its envelope `{code, description, solution, link, details}`), so agent
 * configurations written for it keep working. Unknown body keys are refused.
 */
export function schemaAndActionRoutes(
  deps: KnowledgeDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">,
): HttpRoute[] {
  return [
    jsonRoute({
      ...route,
      path: `${ROUTE_BASE}/search_schema`,
      handle: async (raw, ctx) =>
        searchSchemaJson(await searchSchema(deps, ctx, parseOrThrow(searchSchemaInput.strict(), raw ?? {}))),
      renderError: platformError,
    }),
  ];
}

/**
 * The platform tool's error envelope: `code` the stable reason, `description`
 * what went wrong, `solution` the next step, `details` the invalid fields,
 * the values to choose from, the platform's own error code when it failed,
 * and the trace id.
 */
function platformError(err: ToolError, traceId: string) {
  return {
    code: err.reason,
    description: err.message,
    solution: err.hint?.message ?? "",
    link: "",
    details: {
      ...(err.violations.length > 0 ? { field_violations: err.violations } : {}),
      ...(err.hint?.validValues?.length ? { valid_values: err.hint.validValues } : {}),
      ...(err.metadata["error_code"] ? { upstream_error_code: err.metadata["error_code"] } : {}),
      trace_id: traceId,
    },
  };
}
