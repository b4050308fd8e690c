import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import type { JsonClient } from "../../upstream/http-json";
import { segment } from "../../upstream/path-ids";
import type { ConceptGroup, ConceptHit, ConceptKind, ConceptSearch } from "../concepts";
import { conceptGroupListSchema, conceptHitSchemas } from "./agent-tools-wire";

/** Below the service's base URL and path prefix (platform-paths.ts). */
const BASE = "/knowledge-networks";

/** Concept groups asked for per page, and pages at most (a network with more groups than that is not plausible). */
const GROUP_PAGE = 1000;
const MAX_GROUP_PAGES = 10;

/** The path segment of each kind of typed search. */
const PATH_OF: Record<ConceptKind, string> = {
  object_types: "object-types",
  relation_types: "relation-types",
  action_types: "action-types",
  metrics: "metrics",
};

/**
 * ontology-manager's concept groups and typed searches. A search is a POST
 * that says it is a GET (`search` is a client sending X-HTTP-Method-Override:
 * GET), ordered by `_score`.
 */
export class ConceptSearchClient {
  constructor(
    private readonly read: JsonClient,
    private readonly search: JsonClient,
  ) {}

  async listConceptGroups(ctx: CallContext, knId: string): Promise<ConceptGroup[]> {
    const groups: ConceptGroup[] = [];
    for (let page = 0; page < MAX_GROUP_PAGES; page++) {
      const answer = await this.read.call(
        ctx,
        {
          method: "GET",
          path: `${BASE}/${segment(knId)}/concept-groups`,
          query: { limit: GROUP_PAGE, offset: page * GROUP_PAGE },
          what: text(`the concept groups of knowledge network ${knId}`, `知识网络 ${knId} 的概念分组`),
        },
        conceptGroupListSchema,
      );
      groups.push(...answer.entries);
      if (answer.entries.length < GROUP_PAGE || groups.length >= answer.total_count) break;
    }
    return groups;
  }

  async searchConcepts<K extends ConceptKind>(
    ctx: CallContext,
    knId: string,
    kind: K,
    query: ConceptSearch,
  ): Promise<ConceptHit<K>[]> {
    const body = {
      ...(query.concept_groups?.length ? { concept_groups: query.concept_groups } : {}),
      ...(query.condition ? { condition: query.condition } : {}),
      sort: [{ field: "_score", direction: "desc" }],
      limit: query.limit,
      need_total: false,
    };
    return this.search.call(
      ctx,
      {
        method: "POST",
        path: `${BASE}/${segment(knId)}/${PATH_OF[kind]}`,
        body,
        what: text(
          `${kind} of knowledge network ${knId}${query.concept_groups?.length ? ` in concept groups ${query.concept_groups.join(", ")}` : ""}`,
          `知识网络 ${knId}${query.concept_groups?.length ? ` 概念分组 ${query.concept_groups.join(", ")} 中` : ""}的 ${kind}`,
        ),
      },
      conceptHitSchemas[kind],
    ) as Promise<ConceptHit<K>[]>;
  }
}
