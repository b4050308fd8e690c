import type { CallContext } from "../../core/call-context";
import { ToolError } from "../../errors/tool-error";
import type { Condition, ObjectQueryResult, Row } from "../../kn/types";
import type { KeywordContextDeps } from "../deps";
import { keywordConditions } from "../matching/keyword-matching";
import type { RecalledObjectType } from "../session";
import { objectTypeNotSearchable } from "./errors";
import type { KeywordContextWarning } from "./result";

/** Spec §4.2 step 5: at most 10 instances. */
export const MAX_INSTANCES = 10;

/**
 * The candidate instances for a keyword, in one round trip: the exact query
 * and the fuzzy query side by side. Exact matches win; only when there are
 * none do the fuzzy ones count (spec §1.3). One query failing is a warning;
 * both failing is the error, never an empty result.
 */
export async function findInstances(
  deps: KeywordContextDeps,
  ctx: CallContext,
  ot: RecalledObjectType,
  keyword: string,
  warnings: KeywordContextWarning[],
): Promise<{ candidates: Row[]; total: number }> {
  const { candidateLimit } = deps.keywordContext;
  const { exact, fuzzy } = keywordConditions(ot, keyword, candidateLimit);
  if (!exact && !fuzzy) throw objectTypeNotSearchable(ot.id);
  const ask = (condition: Condition | undefined, limit: number): Promise<ObjectQueryResult | undefined> =>
    condition ? deps.backend.queryObjects(ctx, ot.kn_id, ot.id, { condition, limit, need_total: true }) : Promise.resolve(undefined);
  const [exactResult, fuzzyResult] = await Promise.allSettled([ask(exact, MAX_INSTANCES), ask(fuzzy, candidateLimit)]);
  const failed = (r: PromiseSettledResult<unknown>, what: string) => {
    if (r.status === "fulfilled") return false;
    if (!(r.reason instanceof ToolError)) throw r.reason;
    warnings.push({ target: `instances:${what}`, reason: r.reason.reason, message: `the ${what} lookup of ${ot.id} failed: ${r.reason.message}` });
    return true;
  };
  const exactFailed = failed(exactResult, "exact");
  const fuzzyFailed = failed(fuzzyResult, "fuzzy");
  const exactRows = exactResult.status === "fulfilled" ? exactResult.value : undefined;
  if (exactRows && exactRows.datas.length > 0) return { candidates: exactRows.datas, total: exactRows.total_count ?? exactRows.datas.length };
  if (fuzzyResult.status === "fulfilled" && fuzzyResult.value) {
    return { candidates: fuzzyResult.value.datas, total: fuzzyResult.value.total_count ?? fuzzyResult.value.datas.length };
  }
  // Nothing answered that could tell "no match" from "could not look": that is an error, not an empty result.
  if (exactFailed || fuzzyFailed) throw ((fuzzyFailed ? fuzzyResult : exactResult) as PromiseRejectedResult).reason;
  return { candidates: [], total: 0 };
}
