import type { Json } from "../../../core/json";
import { compact, table } from "../../../core/tables";
import { flatRows } from "../conditions/rows";
import type { InstancesPage } from "./query-instances";

/**
 * query_object_instance's compact answer: the rows as one table (the
 * identity keys as columns, said once in `identity_keys`), the total, the
 * cursor of the next page and, when there is nothing, why.
 */
export function instancesAnswer(page: InstancesPage): Json {
  const { rows, logicParams } = flatRows(
    page.object_type,
    page.datas.map((r) => ({ id: r._instance_id, display: r._display, identity: r._instance_identity, values: r })),
  );
  return compact({
    identity_keys: page.object_type.primary_keys.join(", "),
    datas: table(rows),
    logic_params: table(logicParams),
    total_count: page.total_count,
    next_cursor: page.next_cursor,
    message: page.message,
  });
}
