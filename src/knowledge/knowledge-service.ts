import type { ConnectRouter } from "@connectrpc/connect";
import {
  KnowledgeRetrievalService,
  KnSearchRequestSchema,
  RerankConceptsRequestSchema,
  RetrieveKeywordContextRequestSchema,
  RetrieveSchemaRequestSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import type { KnowledgeDeps } from "./deps";
import { keywordContextResponse, knSearchResponse, rerankResponse, schemaResponse } from "./encode";
import { keywordContextInput } from "./keyword-context/input";
import { retrieveKeywordContext } from "./keyword-context/retrieve-keyword-context";
import { knSearchInput } from "./kn-search/input";
import { knSearch } from "./kn-search/kn-search";
import { rerankConceptsInput } from "./rerank/input";
import { rerankConcepts } from "./rerank/rerank-concepts";
import { retrieveSchemaInput } from "./schema/input";
import { retrieveSchema } from "./schema/retrieve-schema";

/** Registers KnowledgeRetrievalService: decode and validate, call the domain, encode. */
export function registerKnowledge(router: ConnectRouter, deps: KnowledgeDeps): void {
  router.service(KnowledgeRetrievalService, {
    async retrieveSchema(req, ctx) {
      const input = validateRequest(RetrieveSchemaRequestSchema, req, retrieveSchemaInput);
      return schemaResponse(await retrieveSchema(deps, callContext(ctx), input));
    },
    async retrieveKeywordContext(req, ctx) {
      const input = validateRequest(RetrieveKeywordContextRequestSchema, req, keywordContextInput);
      return keywordContextResponse(await retrieveKeywordContext(deps, callContext(ctx), input));
    },
    async knSearch(req, ctx) {
      const input = validateRequest(KnSearchRequestSchema, req, knSearchInput);
      return knSearchResponse(await knSearch(deps, callContext(ctx), input));
    },
    async rerankConcepts(req, ctx) {
      const input = validateRequest(RerankConceptsRequestSchema, req, rerankConceptsInput);
      return rerankResponse(await rerankConcepts(deps, callContext(ctx), input));
    },
  });
}
