import { z } from "zod";
import {
  QueryInstanceSubgraphResponseSchema,
  QueryObjectInstancesResponseSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { defineTool, type Tool } from "../../core/tool";
import { text, zodText } from "../../errors/text";
import { invalidArgument } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import type { HttpRoute } from "../../server/http-routes";
import type { JsonRouteOptions } from "../../server/json-route";
import { platformRoute } from "../../server/platform-route";
import type { KnowledgeDeps } from "../deps";
import { instancesAnswer } from "./query-instances/answer";
import { instancesJson, instancesResponse } from "./query-instances/encode";
import { queryObjectInstancesInput } from "./query-instances/input";
import { queryObjectInstances } from "./query-instances/query-instances";
import { subgraphAnswer } from "./subgraph/answer";
import { subgraphJson, subgraphResponse } from "./subgraph/encode";
import { queryInstanceSubgraphInput } from "./subgraph/input";
import { queryInstanceSubgraph } from "./subgraph/query-subgraph";

/** The same two as MCP tools (query_object_instance, query_instance_subgraph). */
export const instanceTools: Tool<KnowledgeDeps>[] = [
  defineTool({
    name: "query_object_instance",
    title: "按条件查询对象类实例",
    description: `按条件查询一个对象类的实例：结构化过滤、排序、分页。已知对象类（search_schema 返回的 object_types）和过滤条件时使用；只知道名称的一部分时用 like。

条件 condition：叶子 {"field": 属性名, "operation": 操作符, "value": 值}；组合 {"operation": "and"|"or", "sub_conditions": [...]}（每组最多 100 个，嵌套最多 10 层）。每个属性允许的操作符以 search_schema 返回的 condition_operations 为准。value 的形状由操作符决定：== != > >= < <= 单个值；in/not_in 非空数组；range/out_range [下界, 上界]；like/not_like 子串（不写 %）；exist/not_exist 不带 value；match/knn 文本（field 可为 *）。调用前按对象类校验，出错时指出条件中的位置（如 condition.sub_conditions[1].operation）、该属性允许的操作符和改正后的写法。
例：{"ot_id": "disease", "condition": {"operation": "and", "sub_conditions": [{"field": "disease_name", "operation": "like", "value": "气道"}]}, "limit": 20}

返回：datas（每行一个实例：_instance_id、_display、主键列与数据属性；identity_keys 为主键列名，这些列的值组成该实例的 _instance_identity）；total_count（满足条件的实例总数）；next_cursor（还有下一页时出现：条件、排序不变，把它作为 cursor 再调用一次取下一页）；message（没有结果或最后一页时说明原因）。

下一步：把实例的 _instance_identity（如 {"disease_id": "disease_004790"}，不可臆造）传给 get_logic_properties_values（指标、算子值）、get_action_info（可执行的行动）或 find_skills；沿关系找关联实例用 query_instance_subgraph。`,
    input: queryObjectInstancesInput,
    output: QueryObjectInstancesResponseSchema,
    run: async (deps, ctx, input) => {
      const page = await queryObjectInstances(deps, ctx, input);
      return { answer: instancesAnswer(page), structured: instancesResponse(page) };
    },
  }),
  defineTool({
    name: "query_instance_subgraph",
    title: "沿关系路径查询实例子图",
    description: `沿关系路径拉取实例子图，支持多跳（每条路径最多 10 跳）。已知要走的关系类型（search_schema 返回的 relation_types）时使用，例如"某疾病有哪些症状"、"哪些疾病会出现某症状"、"某药物由哪些厂商生产"。

路径模板：object_types 是按行走顺序排列的 n+1 个节点（每个可带 condition、limit、sort），relation_types 是 n 条边，第 i 条边连接 object_types[i] 与 object_types[i+1]。边可以顺着关系定义走（forward：从关系的 source 类型到 target 类型），也可以逆着走（backward）；source_object_type_id/target_object_type_id 表示行走方向而不是关系定义，可以不填（按节点顺序自动补上）。从已知实例出发时，把它放在 object_types[0] 并写条件。
例（某症状出现在哪些疾病中，逆着 has_symptom 走）：{"relation_type_paths": [{"object_types": [{"id": "symptom", "condition": {"field": "symptom_name", "operation": "==", "value": "吞咽困难"}}, {"id": "disease"}], "relation_types": [{"relation_type_id": "has_symptom"}]}]}

返回：每个路径模板一个 entries 元素：path（行走路线，如 "symptom <-[has_symptom]- disease"，箭头为关系定义的方向）；paths（每条找到的路径一行，每个节点一列，值为实例的 _instance_id）；objects（按对象类分表的实例，identity_keys 为各类的主键列）；total_count（满足的路径总数，多于返回数时说明被 limit 截断）；message（没有路径时说明是哪个节点没有匹配的实例，或它们之间没有连接）。

下一步：把实例的 _instance_identity（主键列的值组成的对象）传给 get_logic_properties_values、get_action_info 或 find_skills；需要某一类实例的更多属性、排序或分页时用 query_object_instance。`,
    input: queryInstanceSubgraphInput,
    output: QueryInstanceSubgraphResponseSchema,
    run: async (deps, ctx, input) => {
      const answer = await queryInstanceSubgraph(deps, ctx, input);
      return { answer: subgraphAnswer(answer), structured: subgraphResponse(answer) };
    },
  }),
];

const REST_BASE = "/api/agent-retrieval/in/v1/kn";

/** A body's keys, each optional (what is required is the tool input's to say). */
function restBody<T extends z.ZodRawShape>(shape: T) {
  return z.object(shape).partial();
}

/** A limit of 0 (or null) as "the default", as the anchor reads it. */
const limitOrDefault = (v: unknown) => (v === 0 || v === null ? undefined : v);

/**
 * The body of `POST …/kn/query_object_instance`: the anchor's
 * FirstQueryWithSearchAfter (condition, sort, limit, need_total, properties)
 * plus our cursor; kn_id and ot_id come in the query string (the body is read
 * too). A single sort object is taken as a list of one, limit 0 as the default
 * (as the anchor reads them); other keys are refused, search_after with the
 * way to page instead.
 */
const instancesBody = restBody({
  kn_id: z.unknown(),
  ot_id: z.unknown(),
  condition: z.unknown(),
  sort: z.preprocess((v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? [v] : v), z.unknown()),
  limit: z.preprocess(limitOrDefault, z.unknown()),
  need_total: z.unknown(),
  properties: z.unknown(),
  cursor: z.unknown(),
  include_logic_params: z.unknown(),
  search_after: z.undefined({
    error: zodText(
      "not taken: pass the next_cursor of the previous page as cursor",
      "不接受这个字段：请把上一页的 next_cursor 作为 cursor 传入",
    ),
  }),
});

/** Node and path limits of 0 read as the default. */
function pathLimitsOrDefault(paths: unknown): unknown {
  if (!Array.isArray(paths)) return paths;
  return paths.map((p) => {
    if (p === null || typeof p !== "object" || Array.isArray(p)) return p;
    const path = { ...p, limit: limitOrDefault(p.limit) };
    if (Array.isArray(path.object_types)) {
      path.object_types = path.object_types.map((n: unknown) =>
        n !== null && typeof n === "object" && !Array.isArray(n)
          ? { ...n, limit: limitOrDefault((n as { limit?: unknown }).limit) }
          : n,
      );
    }
    return path;
  });
}

const NO_EXPLORATION = zodText(
  "not taken: this service offers no exploration mode (source_object_type_id, direction, path_length); give relation_type_paths, one path template per walk",
  "不接受这个字段：本服务不提供探索模式（source_object_type_id、direction、path_length）；请给出 relation_type_paths，每次行走一个路径模板",
);

/**
 * The body of `POST …/kn/query_instance_subgraph`: the anchor's
 * `{relation_type_paths}`, node and path limits 0 read as the default; the
 * platform's exploration mode is refused with what to send instead.
 */
const subgraphBody = restBody({
  kn_id: z.unknown(),
  include_logic_params: z.unknown(),
  relation_type_paths: z.preprocess(pathLimitsOrDefault, z.unknown()),
  source_object_type_id: z.undefined({ error: NO_EXPLORATION }),
  direction: z.undefined({ error: NO_EXPLORATION }),
  path_length: z.undefined({ error: NO_EXPLORATION }),
});

/**
 * Their REST routes, at the anchor's paths:
 * `POST /api/agent-retrieval/in/v1/kn/query_object_instance?kn_id&ot_id&include_logic_params`
 * and `POST /api/agent-retrieval/in/v1/kn/query_instance_subgraph?kn_id&include_logic_params`,
 * with `response_format` json (the anchor's `{datas}` / `{entries}` plus our
 * fields), toon or yaml (the compact answer, as the MCP tools give it).
 * Errors are always JSON in the anchor's envelope `{code, description,
 * solution, link, details}`.
 */
export function instanceRoutes(
  deps: KnowledgeDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "defaultLanguage">,
): HttpRoute[] {
  return [
    platformRoute({
      ...route,
      path: `${REST_BASE}/query_object_instance`,
      async run(raw, query, ctx) {
        const input = parseRest(instancesBody, queryObjectInstancesInput, raw, (body) => ({
          ...body,
          ...fromQuery(query, ["kn_id", "ot_id"]),
          ...logicParamsOf(query, body["include_logic_params"]),
        }));
        const page = await queryObjectInstances(deps, ctx, input);
        return { json: instancesJson(page), compact: () => instancesAnswer(page) };
      },
    }),
    platformRoute({
      ...route,
      path: `${REST_BASE}/query_instance_subgraph`,
      async run(raw, query, ctx) {
        const input = parseRest(subgraphBody, queryInstanceSubgraphInput, raw, (body) => ({
          ...body,
          ...fromQuery(query, ["kn_id"]),
          ...logicParamsOf(query, body["include_logic_params"]),
        }));
        const answer = await queryInstanceSubgraph(deps, ctx, input);
        return { json: subgraphJson(answer), compact: () => subgraphAnswer(answer) };
      },
    }),
  ];
}

/** The query string's values for these names, when given (they win over the body's). */
function fromQuery(query: URLSearchParams, names: string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((n) => (query.get(n) ? [[n, query.get(n)!]] : [])));
}

/** include_logic_params from the query string ("true"/"false", "1"/"0"), else the body's. */
function logicParamsOf(query: URLSearchParams, fromBody: unknown): { include_logic_params?: unknown } {
  const raw = query.get("include_logic_params");
  if (raw === null || raw === "") return fromBody === undefined ? {} : { include_logic_params: fromBody };
  if (raw === "true" || raw === "1") return { include_logic_params: true };
  if (raw === "false" || raw === "0") return { include_logic_params: false };
  throw invalidArgument([
    { field: "include_logic_params", description: text('must be "true" or "false"', '必须是 "true" 或 "false"') },
  ]);
}

/**
 * A REST body read as the tool's input: unknown keys refused one by one
 * (naming the body's fields), keys the body refuses (search_after, the
 * exploration mode) with their own reason, and the input built from the rest,
 * so that every problem, missing arguments included, is reported in one answer.
 */
function parseRest<S extends z.ZodType>(
  body: z.ZodObject,
  input: S,
  raw: unknown,
  build: (known: Record<string, unknown>) => Record<string, unknown>,
): z.output<S> {
  const given = raw === null || raw === undefined ? {} : raw;
  if (typeof given !== "object" || Array.isArray(given)) {
    throw invalidArgument([
      { field: "request", description: text("the body must be a JSON object", "请求体必须是 JSON 对象") },
    ]);
  }
  const fields = Object.keys(body.shape);
  const unknown = Object.keys(given)
    .filter((k) => !fields.includes(k))
    .map((k) => ({
      field: k,
      description: text(
        `is not a field of this request body (its fields: ${fields.join(", ")})`,
        `不是这个请求体的字段（它的字段有：${fields.join(", ")}）`,
      ),
    }));
  const checked = safeParseBoth(body, given);
  const refused = new Set(checked.success ? [] : checked.error.issues.map((i) => String(i.path[0])));
  const kept = body.safeParse(Object.fromEntries(Object.entries(given).filter(([k]) => !refused.has(k))));
  const known = kept.success
    ? Object.fromEntries(Object.entries(kept.data as Record<string, unknown>).filter(([, v]) => v !== undefined))
    : {};
  const parsed = safeParseBoth(input, build(known));
  if (unknown.length === 0 && checked.success && parsed.success) return parsed.data;
  throw invalidArgument([
    ...unknown,
    ...(checked.success ? [] : violationsOf(checked.error)),
    ...(parsed.success ? [] : violationsOf(parsed.error)),
  ]);
}
