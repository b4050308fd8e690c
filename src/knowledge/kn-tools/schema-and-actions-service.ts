import type { ServiceImpl } from "@connectrpc/connect";
import type { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import type { KnowledgeDeps } from "../deps";

/** SearchSchema, GetActionInfo and FindSkills: the RPC handlers. */
export function schemaAndActionHandlers(_deps: KnowledgeDeps): Partial<ServiceImpl<typeof KnowledgeToolsService>> {
  return {};
}
