import type { Tool } from "../../core/tool";
import type { HttpRoute } from "../../server/http-routes";
import type { JsonRouteOptions } from "../../server/json-route";
import type { KnowledgeDeps } from "../deps";

/** The same three as MCP tools (search_schema, get_action_info, find_skills). */
export const schemaAndActionTools: Tool<KnowledgeDeps>[] = [];

/** Their REST routes (the anchor's paths and bodies). */
export function schemaAndActionRoutes(
  _deps: KnowledgeDeps,
  _route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">,
): HttpRoute[] {
  return [];
}
