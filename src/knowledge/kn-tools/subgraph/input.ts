import { z } from "zod";
import { zodText } from "../../../errors/text";
import { MAX_OBJECT_LIMIT } from "../../../kn/types";
import { pathId } from "../../../upstream/path-ids";
import { conditionInput } from "../conditions/condition-input";
import { knIdArgument, MAX_SORT_KEYS, sortInput } from "../conditions/query-arguments";

export const DEFAULT_NODE_LIMIT = 1000;
export const DEFAULT_PATH_LIMIT = 2000;
export const MAX_HOPS = 10;
/** Path templates one call may give. */
const MAX_PATHS = 20;

const LIMIT_RANGE = zodText(`must be from 1 to ${MAX_OBJECT_LIMIT}`, `必须在 1 到 ${MAX_OBJECT_LIMIT} 之间`);

const limit = (fallback: number) =>
  z
    .number()
    .int(zodText("must be a whole number", "必须是整数"))
    .min(1, LIMIT_RANGE)
    .max(MAX_OBJECT_LIMIT, LIMIT_RANGE)
    .default(fallback);

const pathNode = z
  .object({
    id: pathId(z.string().trim().min(1, zodText("required: an object type id", "必填：对象类型id"))).describe(
      "该节点的对象类 ID",
    ),
    condition: conditionInput.optional().describe("该节点实例的过滤条件（不填不过滤）；调用前按该对象类校验"),
    limit: limit(DEFAULT_NODE_LIMIT).describe(
      `该节点最多取多少个实例，1–${MAX_OBJECT_LIMIT}，默认 ${DEFAULT_NODE_LIMIT}`,
    ),
    sort: z
      .array(sortInput)
      .max(MAX_SORT_KEYS, zodText(`at most ${MAX_SORT_KEYS} sort keys`, `最多 ${MAX_SORT_KEYS} 个排序键`))
      .default([])
      .describe("该节点实例的排序"),
  })
  .strict();

const pathEdge = z
  .object({
    relation_type_id: pathId(
      z.string().trim().min(1, zodText("required: a relation type id", "必填：关系类型id")),
    ).describe("关系类 ID"),
    source_object_type_id: pathId(z.string().trim())
      .default("")
      .describe("行走方向的起点：object_types[i].id（可不填，自动补上）。不是关系定义的起点"),
    target_object_type_id: pathId(z.string().trim())
      .default("")
      .describe("行走方向的终点：object_types[i+1].id（可不填，自动补上）"),
  })
  .strict();

const relationTypePath = z
  .object({
    object_types: z
      .array(pathNode)
      .min(2, zodText("a path needs at least two (n hops: n+1 nodes)", "一条路径至少需要两个（n 跳：n+1 个节点）"))
      .describe("路径上的节点，按行走顺序；n 跳路径有 n+1 个节点"),
    relation_types: z
      .array(pathEdge)
      .min(1, zodText("a path needs at least one relation type", "一条路径至少需要一个关系类型"))
      .describe(
        `路径上的边，共 n 条（最多 ${MAX_HOPS} 跳）：第 i 条连接 object_types[i] 与 object_types[i+1]，可以顺着关系定义走（forward），也可以逆着走（backward）`,
      ),
    limit: limit(DEFAULT_PATH_LIMIT).describe(`最多返回多少条路径，1–${MAX_OBJECT_LIMIT}，默认 ${DEFAULT_PATH_LIMIT}`),
  })
  .strict();

const PATHS_REQUIRED = zodText("required: at least one path template", "必填：至少一个路径模板");

/** QueryInstanceSubgraph's arguments, the same for the RPC, the MCP tool and the REST route. */
export const queryInstanceSubgraphInput = z.object({
  kn_id: knIdArgument,
  relation_type_paths: z
    .array(relationTypePath, { error: PATHS_REQUIRED })
    .min(1, PATHS_REQUIRED)
    .max(MAX_PATHS, zodText(`at most ${MAX_PATHS} path templates per call`, `每次调用最多 ${MAX_PATHS} 个路径模板`))
    .describe("要查询的路径模板，每个返回一个 entries 元素"),
  include_logic_params: z
    .boolean()
    .default(false)
    .describe("为 true 时对象的 properties 带上逻辑属性（指标/算子）的计算参数"),
});

export type QueryInstanceSubgraphInput = z.output<typeof queryInstanceSubgraphInput>;
export type RelationTypePathInput = QueryInstanceSubgraphInput["relation_type_paths"][number];
