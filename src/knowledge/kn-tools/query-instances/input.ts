import { z } from "zod";
import { zodText } from "../../../errors/text";
import { MAX_OBJECT_LIMIT } from "../../../kn/types";
import { pathId } from "../../../upstream/path-ids";
import { conditionInput } from "../conditions/condition-input";
import { knIdArgument, MAX_SORT_KEYS, sortInput } from "../conditions/query-arguments";

const DEFAULT_INSTANCE_LIMIT = 10;
const OT_ID_REQUIRED = zodText(
  "required: the object type to query (an object type id from search_schema)",
  "必填：要查询的对象类型（search_schema 返回的对象类型id）",
);
const LIMIT_RANGE = zodText(`must be from 1 to ${MAX_OBJECT_LIMIT}`, `必须在 1 到 ${MAX_OBJECT_LIMIT} 之间`);
/**
 * QueryObjectInstances' arguments, the same for the RPC, the MCP tool and the
 * REST route. Shapes only: whether the condition, properties and sort fit the
 * object type is checked against its definition (query-instances.ts).
 */
export const queryObjectInstancesInput = z.object({
  kn_id: knIdArgument,
  ot_id: pathId(z.string({ error: OT_ID_REQUIRED }).trim().min(1, OT_ID_REQUIRED)).describe(
    "对象类 ID（search_schema 返回的 object_types[].concept_id，如 disease）",
  ),
  condition: conditionInput
    .optional()
    .describe("过滤条件；不填返回全部实例。调用前按该对象类校验字段、操作符与值的形状"),
  limit: z
    .number()
    .int(zodText("must be a whole number", "必须是整数"))
    .min(1, LIMIT_RANGE)
    .max(MAX_OBJECT_LIMIT, LIMIT_RANGE)
    .default(DEFAULT_INSTANCE_LIMIT)
    .describe(`每页返回的实例数，1–${MAX_OBJECT_LIMIT}，默认 ${DEFAULT_INSTANCE_LIMIT}`),
  properties: z
    .array(z.string().trim().min(1, zodText("a property name must not be empty", "属性名不能为空")))
    .default([])
    .describe("只返回这些数据属性（默认全部）；_instance_id、_instance_identity、_display 总会返回"),
  sort: z
    .array(sortInput)
    .max(MAX_SORT_KEYS, zodText(`at most ${MAX_SORT_KEYS} sort keys`, `最多 ${MAX_SORT_KEYS} 个排序键`))
    .default([])
    .describe("排序键；默认按相关度（有 match/knn 时），再按主键升序"),
  cursor: z
    .string()
    .trim()
    .default("")
    .describe("上一页返回的 next_cursor，取下一页时原样传回（条件与排序须与上一页相同）；第一页不填"),
  need_total: z.boolean().default(true).describe("是否返回满足条件的实例总数 total_count，默认 true"),
  include_logic_params: z
    .boolean()
    .default(false)
    .describe("为 true 时每行带上逻辑属性（指标/算子）的计算参数，有未填参数的标 has_any_unfilled_params"),
});

export type QueryObjectInstancesInput = z.output<typeof queryObjectInstancesInput>;
