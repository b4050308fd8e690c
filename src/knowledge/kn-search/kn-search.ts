import { randomUUID } from "node:crypto";
import type { CallContext } from "../../core/call-context";
import type { KnSearchDeps } from "../deps";
import type { KnSearchAnswer } from "./answer";
import type { KnSearchInput } from "./input";
import { knSearchNative } from "./native";
import { knSearchProxy } from "./proxy";

/**
 * kn_search (spec kn-search-proxy.zh.md): forwarded to data-retrieval when
 * one is configured, else computed here; the same contract either way. A
 * session id is generated when the caller gave none, and returned, so that a
 * later round can name it.
 */
export async function knSearch(deps: KnSearchDeps, ctx: CallContext, input: KnSearchInput): Promise<KnSearchAnswer> {
  const sessionId = input.session_id || randomUUID();
  const mode = deps.dataRetrieval ? "proxy" : "native";
  const answer = deps.dataRetrieval
    ? await knSearchProxy(deps.dataRetrieval, ctx, input, sessionId)
    : await knSearchNative(deps, ctx, input, sessionId);
  ctx.log.info(
    {
      mode,
      session_id: sessionId,
      object_types: answer.object_types.length,
      relation_types: answer.relation_types.length,
      nodes: answer.nodes?.length ?? null,
      warnings: answer.warnings.length,
    },
    "kn_search answered",
  );
  return answer;
}
