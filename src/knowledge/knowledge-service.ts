import type { ConnectRouter } from "@connectrpc/connect";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { notBuiltYet } from "../errors/tool-error";

const SERVICE = "contextloader.knowledge.v1.KnowledgeRetrievalService";

/** Registers KnowledgeRetrievalService. */
export function registerKnowledge(router: ConnectRouter): void {
  router.service(KnowledgeRetrievalService, {
    retrieveSchema() {
      throw notBuiltYet(`${SERVICE}/RetrieveSchema`, 4, "schema recall over the knowledge network backend");
    },
    retrieveKeywordContext() {
      throw notBuiltYet(`${SERVICE}/RetrieveKeywordContext`, 4, "keyword context recall");
    },
    knSearch() {
      throw notBuiltYet(`${SERVICE}/KnSearch`, 7, "kn_search (proxy and native)");
    },
    rerankConcepts() {
      throw notBuiltYet(`${SERVICE}/RerankConcepts`, 7, "concept reranking");
    },
  });
}
