import type { CallContext } from "../../../core/call-context";
import type { Json } from "../../../core/json";
import { type Text, text, verbatim } from "../../../errors/text";
import type { KnowledgeNetworkBackend } from "../../../kn/backend";
import { knIdOf } from "../../../kn/kn-id";
import type { ObjectQuery, ObjectType, Row } from "../../../kn/types";
import { checkCondition, noProblems } from "../conditions/check-condition";
import { checkProperties, checkSort, invalidQuery } from "../conditions/check-query";
import { platformFailure } from "../conditions/platform-failure";
import { objectTypeOf } from "../conditions/schema-lookup";
import { type CursorBinding, decodeCursor, encodeCursor } from "./cursor";
import type { QueryObjectInstancesInput } from "./input";

/** One page of instances. */
export interface InstancesPage {
  /** The object type queried (for the compact answer's identity columns; not echoed in the structured one). */
  object_type: ObjectType;
  /** Rows: data properties plus `_instance_id`, `_instance_identity`, `_display` (and `_score` when text scored them). */
  datas: Row[];
  /** Instances matching the condition, when need_total. */
  total_count?: number;
  /** The cursor of the next page; "" on the last one. */
  next_cursor: string;
  /** Why the page is empty, or that it is the last of several. */
  message: string;
}

/**
 * query_object_instance: one page of the instances of an object type that
 * satisfy a condition. The condition, properties and sort are checked against
 * the type's definition before the platform is called (one INVALID_ARGUMENT
 * listing every problem, with corrected examples); the cursor must be one a
 * page of this same query returned. The platform's own refusals keep their
 * code and reason.
 */
export async function queryObjectInstances(
  deps: { backend: KnowledgeNetworkBackend },
  ctx: CallContext,
  input: QueryObjectInstancesInput,
): Promise<InstancesPage> {
  const knId = knIdOf(input.kn_id, ctx);
  const type = await objectTypeOf(deps.backend, ctx, knId, input.ot_id);

  const problems = noProblems();
  const condition = input.condition ? checkCondition(input.condition, type, "condition", problems) : undefined;
  const properties = checkProperties(input.properties, type, "properties", problems);
  const sort = checkSort(input.sort, type, "sort", problems);
  if (problems.violations.length > 0)
    throw invalidQuery(problems, text(`invalid query on object type ${type.id}`, `对象类型 ${type.id} 上的查询无效`));

  const binding: CursorBinding = { kn_id: knId, ot_id: type.id, condition, sort };
  const searchAfter = input.cursor === "" ? undefined : decodeCursor(input.cursor, binding);
  const query: ObjectQuery = {
    limit: input.limit,
    need_total: input.need_total,
    ...(condition ? { condition } : {}),
    ...(properties.length > 0 ? { properties } : {}),
    ...(sort.length > 0 ? { sort } : {}),
    ...(searchAfter ? { search_after: searchAfter } : {}),
    ...(input.include_logic_params ? { include_logic_params: true } : {}),
  };
  let result: Awaited<ReturnType<KnowledgeNetworkBackend["queryObjects"]>>;
  try {
    result = await deps.backend.queryObjects(ctx, knId, type.id, query);
  } catch (err) {
    throw platformFailure(err, text(`the instance query on ${type.id}`, `${type.id} 上的实例查询`));
  }
  const datas = result.datas.map(withoutTypeInfo);
  const more = result.search_after !== undefined && result.search_after.length > 0 && datas.length > 0;
  const page: InstancesPage = {
    object_type: type,
    datas,
    next_cursor: more ? encodeCursor(binding, result.search_after!) : "",
    message: messageOf(type, datas.length, input, condition !== undefined, more)[ctx.language],
  };
  if (result.total_count !== undefined) page.total_count = result.total_count;
  return page;
}

/** Rows never echo the object type (the platform may add it when asked for type info; it is the same on every row). */
function withoutTypeInfo(row: Row): Row {
  if (!("object_type" in row)) return row;
  const { object_type: _, ...rest } = row as Record<string, Json>;
  return rest as Row;
}

function messageOf(
  type: ObjectType,
  count: number,
  input: QueryObjectInstancesInput,
  filtered: boolean,
  more: boolean,
): Text {
  const named = type.name && type.name !== type.id;
  const name = text(named ? `${type.name} (${type.id})` : type.id, named ? `${type.name}（${type.id}）` : type.id);
  if (count === 0 && input.cursor !== "")
    return text("No more instances: the previous page was the last.", "没有更多实例了：上一页就是最后一页。");
  if (count === 0 && filtered) {
    return text(
      `No ${name.en} instance matches the condition. Loosen it: like with a shorter part of a name instead of ==, fewer sub_conditions, or or instead of and.`,
      `没有 ${name.zh} 的实例符合条件。请放宽条件：用 like 加名称中较短的一部分代替 ==，减少 sub_conditions，或用 or 代替 and。`,
    );
  }
  if (count === 0) return text(`Object type ${name.en} has no instances.`, `对象类型 ${name.zh} 没有实例。`);
  if (!more && input.cursor !== "") return text("This is the last page.", "这是最后一页。");
  return verbatim("");
}
