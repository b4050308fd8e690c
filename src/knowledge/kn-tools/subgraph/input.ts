import { z } from "zod";
import { MAX_OBJECT_LIMIT } from "../../../kn/types";
import { pathId } from "../../../upstream/path-ids";
import { conditionInput } from "../conditions/condition-input";
import { knIdArgument, MAX_SORT_KEYS, sortInput } from "../conditions/query-arguments";

export const DEFAULT_NODE_LIMIT = 1000;
export const DEFAULT_PATH_LIMIT = 2000;
export const MAX_HOPS = 10;
/** Path templates one call may give. */
const MAX_PATHS = 20;

const limit = (what: string, fallback: number) =>
  z
    .number()
    .int(`${what} must be a whole number`)
    .min(1, `${what} must be from 1 to ${MAX_OBJECT_LIMIT}`)
    .max(MAX_OBJECT_LIMIT, `${what} must be from 1 to ${MAX_OBJECT_LIMIT}`)
    .default(fallback);

const pathNode = z
  .object({
    id: pathId(z.string().trim().min(1, "a path node needs id: an object type id")).describe("该节点的对象类 ID"),
    condition: conditionInput.optional().describe("该节点实例的过滤条件（不填不过滤）；调用前按该对象类校验"),
    limit: limit("a node's limit", DEFAULT_NODE_LIMIT).describe(
      `该节点最多取多少个实例，1–${MAX_OBJECT_LIMIT}，默认 ${DEFAULT_NODE_LIMIT}`,
    ),
    sort: z
      .array(sortInput)
      .max(MAX_SORT_KEYS, `at most ${MAX_SORT_KEYS} sort keys`)
      .default([])
      .describe("该节点实例的排序"),
  })
  .strict();

const pathEdge = z
  .object({
    relation_type_id: pathId(z.string().trim().min(1, "an edge needs relation_type_id")).describe("关系类 ID"),
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
      .min(2, "a path needs at least two object_types (n hops: n+1 nodes)")
      .describe("路径上的节点，按行走顺序；n 跳路径有 n+1 个节点"),
    relation_types: z
      .array(pathEdge)
      .min(1, "a path needs at least one relation type")
      .describe(
        `路径上的边，共 n 条（最多 ${MAX_HOPS} 跳）：第 i 条连接 object_types[i] 与 object_types[i+1]，可以顺着关系定义走（forward），也可以逆着走（backward）`,
      ),
    limit: limit("a path's limit", DEFAULT_PATH_LIMIT).describe(
      `最多返回多少条路径，1–${MAX_OBJECT_LIMIT}，默认 ${DEFAULT_PATH_LIMIT}`,
    ),
  })
  .strict();

/** QueryInstanceSubgraph's arguments, the same for the RPC, the MCP tool and the REST route. */
export const queryInstanceSubgraphInput = z.object({
  kn_id: knIdArgument,
  relation_type_paths: z
    .array(relationTypePath, { error: "relation_type_paths is required: at least one path template" })
    .min(1, "relation_type_paths is required: at least one path template")
    .max(MAX_PATHS, `at most ${MAX_PATHS} path templates per call`)
    .describe("要查询的路径模板，每个返回一个 entries 元素"),
  include_logic_params: z
    .boolean()
    .default(false)
    .describe("为 true 时对象的 properties 带上逻辑属性（指标/算子）的计算参数"),
});

export type QueryInstanceSubgraphInput = z.output<typeof queryInstanceSubgraphInput>;
export type RelationTypePathInput = QueryInstanceSubgraphInput["relation_type_paths"][number];
