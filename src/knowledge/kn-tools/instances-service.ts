import type { ServiceImpl } from "@connectrpc/connect";
import type { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import type { KnowledgeDeps } from "../deps";

/** QueryObjectInstances and QueryInstanceSubgraph: the RPC handlers. */
export function instanceHandlers(_deps: KnowledgeDeps): Partial<ServiceImpl<typeof KnowledgeToolsService>> {
  return {};
}
