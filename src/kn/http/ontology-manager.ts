import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { KnowledgeNetwork, KnowledgeNetworkSummary, ObjectType } from "../types";
import { knowledgeNetworkListSchema, knowledgeNetworkSchema, objectTypesResponseSchema } from "./platform-wire";

/** Below the service's base URL and path prefix (platform-paths.ts). */
const BASE = "/knowledge-networks";

/** ontology-manager: knowledge networks and object type definitions. */
export class OntologyManagerClient {
  constructor(private readonly http: JsonClient) {}

  async listKnowledgeNetworks(
    ctx: CallContext,
    query: { name_pattern?: string; limit?: number; offset?: number },
  ): Promise<{ entries: KnowledgeNetworkSummary[]; total_count: number }> {
    return this.http.call(ctx, { method: "GET", path: BASE, query }, knowledgeNetworkListSchema);
  }

  /** The network with its object, relation and action types (`mode=export`). */
  async getKnowledgeNetwork(ctx: CallContext, knId: string): Promise<KnowledgeNetwork> {
    return this.http.call(
      ctx,
      {
        method: "GET",
        path: `${BASE}/${segment(knId)}`,
        query: { mode: "export" },
        what: text(`knowledge network ${knId}`, `知识网络 ${knId}`),
      },
      knowledgeNetworkSchema,
    );
  }

  /** The definitions, logic properties included, in the platform's order. */
  async getObjectTypes(ctx: CallContext, knId: string, objectTypeIds: string[]): Promise<ObjectType[]> {
    const ids = objectTypeIds.map(segment).join(",");
    return this.http.call(
      ctx,
      {
        method: "GET",
        path: `${BASE}/${segment(knId)}/object-types/${ids}`,
        query: { include_detail: true },
        what: text(
          `object types ${objectTypeIds.join(", ")} of knowledge network ${knId}`,
          `知识网络 ${knId} 的对象类型 ${objectTypeIds.join(", ")}`,
        ),
      },
      objectTypesResponseSchema,
    );
  }
}
