import type { Tool } from "../../core/tool";
import type { HttpRoute } from "../../server/http-routes";
import type { JsonRouteOptions } from "../../server/json-route";
import type { KnowledgeDeps } from "../deps";

/** The same two as MCP tools (query_object_instance, query_instance_subgraph). */
export const instanceTools: Tool<KnowledgeDeps>[] = [];

/** Their REST routes (the anchor's paths and bodies). */
export function instanceRoutes(
  _deps: KnowledgeDeps,
  _route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">,
): HttpRoute[] {
  return [];
}
