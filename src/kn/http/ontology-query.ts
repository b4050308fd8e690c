import type { z } from "zod";
import type { CallContext } from "../../core/call-context";
import type { Json } from "../../core/json";
import { text } from "../../errors/text";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { InstanceIdentity, ObjectQuery, SubgraphQuery, SubgraphResult } from "../types";
import {
  objectQueryResponseSchema,
  propertiesResponseSchema,
  subgraphResponseSchema,
  toSubgraphEntry,
} from "./platform-wire";

/** Below the service's base URL and path prefix (platform-paths.ts). */
const BASE = "/knowledge-networks";

/** Every ontology-query read is a POST that must say it is a GET. */
export const METHOD_OVERRIDE_HEADERS = { "x-http-method-override": "GET" };

/**
 * ontology-query: instances, subgraphs and property values, as the platform
 * answers them. Rows are returned raw (system fields may be missing); the
 * backend completes and aligns them.
 */
export class OntologyQueryClient {
  constructor(
    private readonly http: JsonClient,
    /** The name of the identity list in property queries. */
    private readonly spelling: "new" | "old",
  ) {}

  async queryObjects(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: ObjectQuery,
  ): Promise<z.output<typeof objectQueryResponseSchema>> {
    const body = {
      condition: query.condition,
      properties: query.properties,
      limit: query.limit,
      need_total: query.need_total,
      sort: query.sort,
      search_after: query.search_after,
    };
    return this.http.call(
      ctx,
      {
        method: "POST",
        path: `${BASE}/${segment(knId)}/object-types/${segment(objectTypeId)}`,
        query: logicParamsQuery(query.include_logic_params),
        body,
        what: text(
          `instances of object type ${objectTypeId} in knowledge network ${knId}`,
          `知识网络 ${knId} 中对象类型 ${objectTypeId} 的实例`,
        ),
      },
      objectQueryResponseSchema,
    );
  }

  async querySubgraph(ctx: CallContext, knId: string, query: SubgraphQuery): Promise<SubgraphResult> {
    const answer = await this.http.call(
      ctx,
      {
        method: "POST",
        path: `${BASE}/${segment(knId)}/subgraph`,
        query: { query_type: "relation_path", ...logicParamsQuery(query.include_logic_params) },
        body: { relation_type_paths: query.relation_type_paths },
        what: text(`a subgraph of knowledge network ${knId}`, `知识网络 ${knId} 的子图`),
      },
      subgraphResponseSchema,
    );
    return { entries: (answer.entries ?? []).map(toSubgraphEntry) };
  }

  /** The matched rows, in the platform's order (not the identities' order). */
  async queryProperties(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: {
      identities: InstanceIdentity[];
      properties: string[];
      dynamic_params?: Record<string, Record<string, Json>>;
    },
  ): Promise<Record<string, Json>[]> {
    const body = {
      [this.spelling === "new" ? "_instance_identities" : "unique_identities"]: query.identities,
      properties: query.properties,
      dynamic_params: query.dynamic_params,
    };
    const answer = await this.http.call(
      ctx,
      {
        method: "POST",
        path: `${BASE}/${segment(knId)}/object-types/${segment(objectTypeId)}/properties`,
        body,
        what: text(
          `property values of object type ${objectTypeId} in knowledge network ${knId}`,
          `知识网络 ${knId} 中对象类型 ${objectTypeId} 的属性值`,
        ),
      },
      propertiesResponseSchema,
    );
    return answer.datas ?? [];
  }
}

/** The platform's `include_logic_params` query parameter, sent only when asked for (its default is false). */
function logicParamsQuery(include: boolean | undefined): Record<string, boolean> {
  return include ? { include_logic_params: true } : {};
}
