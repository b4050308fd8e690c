import type { Json } from "../core/json";
import { compact } from "../core/tables";
import type { ResolveResult } from "./resolve";

/**
 * The resolver's answer in the compact shape tools return: the rows as the
 * platform gave them (one per identity, primary keys and each property's
 * value), and what else there is only when there is something.
 */
export function resolveAnswer(r: ResolveResult): Json {
  return compact({
    datas: r.datas,
    unmatched_identities: r.unmatched_identities,
    ...(r.debug ? { debug: r.debug as unknown as Json } : {}),
    trace_id: r.trace_id,
  });
}
