import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { KnowledgeRetrievalService } from "../../../gen/contextloader/knowledge/v1/knowledge_pb";
import { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { MemRecallService } from "../../../gen/contextloader/memrecall/v1/memrecall_pb";
import { LogicPropertyResolverService } from "../../../gen/contextloader/resolver/v1/resolver_pb";

/** One typed client per service, all over the same transport (one connection pool, one identity). */
export interface ContextLoaderClients {
  /** Schema recall, then keyword context (two steps in one session); kn_search; concept rerank. */
  knowledge: Client<typeof KnowledgeRetrievalService>;
  /** The platform's knowledge-network tools: schema search, instance queries, subgraphs, actions, skills. */
  knowledgeTools: Client<typeof KnowledgeToolsService>;
  /** Logic properties (metrics and operators) resolved and executed. */
  resolver: Client<typeof LogicPropertyResolverService>;
  /** The caller's memories: store, search, detail, the Recall stream. Needs an account id. */
  memRecall: Client<typeof MemRecallService>;
}

/** Clients of every context-loader service over `transport` (from `@context-loader/client/node` or `/web`). */
export function createContextLoaderClients(transport: Transport): ContextLoaderClients {
  return {
    knowledge: createClient(KnowledgeRetrievalService, transport),
    knowledgeTools: createClient(KnowledgeToolsService, transport),
    resolver: createClient(LogicPropertyResolverService, transport),
    memRecall: createClient(MemRecallService, transport),
  };
}
