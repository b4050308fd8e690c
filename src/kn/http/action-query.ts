import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { ActionQueryResult } from "../actions";
import type { InstanceIdentity } from "../types";
import { actionQueryResponseSchema } from "./agent-tools-wire";

/** Below the service's base URL and path prefix (platform-paths.ts). */
const BASE = "/knowledge-networks";

/**
 * ontology-query's action query: `POST .../action-types/{at}` (a read, so
 * with X-HTTP-Method-Override: GET) with the instances, answering what the
 * action type is bound to and each instance's action. The execute endpoint
 * the answer names is on the same service.
 */
export class ActionQueryClient {
  constructor(
    private readonly http: JsonClient,
    /** ontology-query's base URL and path prefix (the execute URL is built on them). */
    private readonly baseUrl: string,
    /** The name of the identity list in the request. */
    private readonly spelling: "new" | "old",
  ) {}

  async queryActions(
    ctx: CallContext,
    knId: string,
    actionTypeId: string,
    identities: InstanceIdentity[],
  ): Promise<ActionQueryResult> {
    const path = `${BASE}/${segment(knId)}/action-types/${segment(actionTypeId)}`;
    const answer = await this.http.call(
      ctx,
      {
        method: "POST",
        path,
        query: { include_type_info: true },
        body: { [this.spelling === "new" ? "_instance_identities" : "unique_identities"]: identities },
        what: text(
          `action type ${actionTypeId} of knowledge network ${knId}`,
          `知识网络 ${knId} 的行动类型 ${actionTypeId}`,
        ),
      },
      actionQueryResponseSchema,
    );
    return {
      ...(answer.action_type ? { action_type: answer.action_type } : {}),
      action_source: answer.action_source,
      actions: answer.actions,
      total_count: answer.total_count ?? answer.actions.length,
      execute_url: `${this.baseUrl.replace(/\/+$/, "")}${path}/execute`,
    };
  }
}
