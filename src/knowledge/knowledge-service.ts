import type { ConnectRouter } from "@connectrpc/connect";
import {
  KnowledgeRetrievalService,
  KnSearchRequestSchema,
  RerankConceptsRequestSchema,
  RetrieveKeywordContextRequestSchema,
  RetrieveSchemaRequestSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { validateFormattedRequest, validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import type { KnowledgeDeps } from "./deps";
import {
  keywordContextResponse,
  keywordContextTextResponse,
  knSearchResponse,
  knSearchTextResponse,
  rerankResponse,
  schemaResponse,
  schemaTextResponse,
} from "./encode";
import { keywordContextInput } from "./keyword-context/input";
import { retrieveKeywordContext } from "./keyword-context/retrieve-keyword-context";
import { knSearchInput } from "./kn-search/input";
import { knSearch } from "./kn-search/kn-search";
import { rerankConceptsInput } from "./rerank/input";
import { rerankConcepts } from "./rerank/rerank-concepts";
import { retrieveSchemaInput } from "./schema/input";
import { retrieveSchema } from "./schema/retrieve-schema";

/**
 * Registers KnowledgeRetrievalService: decode and validate, call the domain,
 * encode (structured, or with output_format the compact answer as text).
 */
export function registerKnowledge(router: ConnectRouter, deps: KnowledgeDeps): void {
  router.service(KnowledgeRetrievalService, {
    async retrieveSchema(req, ctx) {
      const { input, format } = validateFormattedRequest(RetrieveSchemaRequestSchema, req, retrieveSchemaInput);
      if (format === undefined) return schemaResponse(await retrieveSchema(deps, callContext(ctx), input));
      const result = await retrieveSchema(deps, callContext(ctx), { ...input, compact_format: false });
      return schemaTextResponse(result, format);
    },
    async retrieveKeywordContext(req, ctx) {
      const { input, format } = validateFormattedRequest(RetrieveKeywordContextRequestSchema, req, keywordContextInput);
      if (format === undefined)
        return keywordContextResponse(await retrieveKeywordContext(deps, callContext(ctx), input));
      const result = await retrieveKeywordContext(deps, callContext(ctx), { ...input, compact_format: false });
      return keywordContextTextResponse(result, format);
    },
    async knSearch(req, ctx) {
      const { input, format } = validateFormattedRequest(KnSearchRequestSchema, req, knSearchInput);
      const answer = await knSearch(deps, callContext(ctx), input);
      return format === undefined ? knSearchResponse(answer) : knSearchTextResponse(answer, format);
    },
    async rerankConcepts(req, ctx) {
      const input = validateRequest(RerankConceptsRequestSchema, req, rerankConceptsInput);
      return rerankResponse(await rerankConcepts(deps, callContext(ctx), input));
    },
  });
}
