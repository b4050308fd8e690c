import type { ConnectRouter } from "@connectrpc/connect";
import { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import type { KnowledgeDeps } from "../deps";
import { instanceHandlers } from "./instances-service";
import { schemaAndActionHandlers } from "./schema-and-actions-service";

/** Registers KnowledgeToolsService: the platform's agent tools over a knowledge network. */
export function registerKnowledgeTools(router: ConnectRouter, deps: KnowledgeDeps): void {
  router.service(KnowledgeToolsService, { ...schemaAndActionHandlers(deps), ...instanceHandlers(deps) });
}
