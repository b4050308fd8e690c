import {
  FindSkillsResponseSchema,
  GetActionInfoResponseSchema,
  SearchSchemaResponseSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { defineTool, type Tool } from "../../core/tool";
import { parseOrThrow } from "../../errors/validation";
import type { HttpRoute } from "../../server/http-routes";
import type { JsonRouteOptions } from "../../server/json-route";
import { platformRoute } from "../../server/platform-route";
import type { KnowledgeDeps } from "../deps";
import { actionInfoAnswer, actionInfoJson } from "./action-info/answer";
import { actionInfoResponse } from "./action-info/encode";
import { getActionInfo } from "./action-info/get-action-info";
import { getActionInfoBody, getActionInfoToolInput } from "./action-info/input";
import { findSkillsAnswer, findSkillsJson } from "./find-skills/answer";
import { findSkillsResponse } from "./find-skills/encode";
import { findSkills } from "./find-skills/find-skills";
import { findSkillsInput } from "./find-skills/input";
import { searchSchemaAnswer, searchSchemaJson } from "./search-schema/answer";
import { searchSchemaResponse } from "./search-schema/encode";
import { searchSchemaInput } from "./search-schema/input";
import { searchSchema } from "./search-schema/search-schema";

/** The same three as MCP tools (search_schema, get_action_info, find_skills). */
export const schemaAndActionTools: Tool<KnowledgeDeps>[] = [
  defineTool({
    name: "search_schema",
    title: "探索业务知识网络的 Schema（对象、关系、行动、指标类型）",
    description: `统一的 Schema 探索入口：根据问题（或空格分隔的关键词）返回业务知识网络中相关的对象类型、关系类型、行动类型和指标类型，只返回 Schema，不返回实例。

何时使用：回答涉及业务数据的问题前，先用它弄清有哪些类型、每个属性叫什么、可用哪些条件操作符；网络很大时可用 search_scope.concept_groups 限定在某几个概念分组内。

返回：object_types（id、name、display_key、primary_keys）；properties（每行一个数据属性，operations 为该属性允许的条件操作符，"default" 即 default_operations）；logic_properties（指标/算子及需要填写的 inputs）；relation_types（from → to）；action_types（可对实例执行的行动）；metric_types（指标定义，object_type 与 logic_property 指明用哪个对象类型的哪个逻辑属性取值）；ranking_method；warnings（排序降级；NO_RELEVANT_CONCEPT 表示问题与这个知识网络的任何类型都不相关，应换一个知识网络或换个问法）。

下一步：按条件查实例用 query_object_instance（ot_id 取 object_types 的 id，条件只用 operations 里的操作符）；沿关系取多跳数据用 query_instance_subgraph；取指标/算子值用 get_logic_properties_values；对实例执行行动前用 get_action_info（at_id 取 action_types 的 id）；找可用技能用 find_skills。`,
    input: searchSchemaInput,
    output: SearchSchemaResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await searchSchema(deps, ctx, input);
      return { answer: searchSchemaAnswer(r), structured: searchSchemaResponse(r) };
    },
  }),
  defineTool({
    name: "get_action_info",
    title: "获取行动的可执行工具定义",
    description: `行动信息召回：把一个行动类型（如“生成治疗方案”）针对指定实例，转成可直接调用的函数工具定义（Function Call）。

何时使用：用户要对某些实例执行操作（生成方案、召回药品、预约挂号等）时。at_id 取自 search_schema 返回的 action_types；_instance_identities 必须原样取自 query_object_instance / query_instance_subgraph 返回的 _instance_identity，不可臆造。

返回（与平台工具相同的结构，structuredContent 中也是它）：headers（调用者身份，执行时原样带上）；_dynamic_tools：每个实例一个函数调用定义（name、description；parameters 为 JSON Schema，其中 dynamic_params 是需要你填写的参数，已由实例和行动确定的参数不在其中；fixed_params 为已确定的参数和实例；api_url；api_call_strategy 为 kn_action_recall）；message：没有工具或部分实例不适用时说明原因和下一步。

下一步：按 parameters 填写 dynamic_params，与 fixed_params 合并后 POST 到 api_url 执行（本工具不执行行动）；没有工具时按 message 的提示换行动类型或先查实例。`,
    input: getActionInfoToolInput,
    output: GetActionInfoResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await getActionInfo(deps, ctx, input);
      return { answer: actionInfoAnswer(r), structured: actionInfoResponse(r) };
    },
  }),
  defineTool({
    name: "find_skills",
    title: "查找可用技能",
    description: `技能召回：在业务知识网络中查找某个对象类型（或其中某些实例）绑定的可用技能，可按 skill_query 筛选并排序。

何时使用：需要知道对某类对象（如疾病、科室）或某些具体实例有哪些可用的业务技能时；object_type_id 传 skills 则在全部技能中查找。instance_identities 原样取自 query_object_instance 返回的 _instance_identity（注意参数名没有下划线前缀）。

返回：scope（在哪里找的：network / object_type / instance）；skills（skill_id、name、description，按与 skill_query 的相关性排序，最多 top_k 个）；message：没有技能时说明原因（没有绑定关系、实例没有绑定技能、没有与 skill_query 相关的技能等）和下一步。

下一步：按技能说明选用技能；没有结果时按 message 的提示放宽范围（去掉 instance_identities 或 skill_query，或把 object_type_id 设为 skills）。`,
    input: findSkillsInput,
    output: FindSkillsResponseSchema,
    run: async (deps, ctx, input) => {
      const r = await findSkills(deps, ctx, input);
      return { answer: findSkillsAnswer(r), structured: findSkillsResponse(r) };
    },
  }),
];

/** The platform's agent-retrieval routes these tools answer on. */
const ROUTE_BASE = "/api/agent-retrieval/in/v1/kn";

/**
 * Their REST routes: the platform tool's paths, bodies and answers (JSON, or
 * with `?response_format=toon|yaml` the compact answer; errors in its
 * envelope `{code, description, solution, link, details}`), so agent
 * configurations written for it keep working. Unknown body keys are refused.
 */
export function schemaAndActionRoutes(
  deps: KnowledgeDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "defaultLanguage">,
): HttpRoute[] {
  return [
    platformRoute({
      ...route,
      path: `${ROUTE_BASE}/search_schema`,
      async run(raw, _query, ctx) {
        const result = await searchSchema(deps, ctx, parseOrThrow(searchSchemaInput.strict(), raw ?? {}));
        return { json: searchSchemaJson(result), compact: () => searchSchemaAnswer(result) };
      },
    }),
    platformRoute({
      ...route,
      path: `${ROUTE_BASE}/get_action_info`,
      async run(raw, _query, ctx) {
        const result = await getActionInfo(deps, ctx, parseOrThrow(getActionInfoBody, raw ?? {}));
        return { json: actionInfoJson(result), compact: () => actionInfoAnswer(result) };
      },
    }),
    platformRoute({
      ...route,
      path: `${ROUTE_BASE}/find_skills`,
      async run(raw, _query, ctx) {
        const result = await findSkills(deps, ctx, parseOrThrow(findSkillsInput.strict(), raw ?? {}));
        return { json: findSkillsJson(result), compact: () => findSkillsAnswer(result) };
      },
    }),
  ];
}
