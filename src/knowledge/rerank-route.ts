import type { HttpRoute } from "../server/http-routes";
import { jsonRoute, type JsonRouteOptions } from "../server/json-route";
import { parseOrThrow } from "../errors/validation";
import { rerankConcepts, rerankConceptsInput, type RerankDeps } from "./rerank/rerank-concepts";
import { knowledgeError } from "./rest-routes";

/**
 * `POST /tools/knowledge_rerank` (data-retrieval-tools §7.2): the spec's JSON
 * body and answer `{reranked_concepts: [...], filtered_count}`; errors in the
 * knowledge tools' shape `{error, status_code, detail: {message, suggestion}}`.
 */
export function rerankRoutes(deps: RerankDeps, route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">): HttpRoute[] {
  return [
    jsonRoute({
      ...route,
      path: "/tools/knowledge_rerank",
      handle: async (raw, ctx) => rerankConcepts(deps, ctx, parseOrThrow(rerankConceptsInput, raw ?? {})),
      renderError: knowledgeError,
    }),
  ];
}
