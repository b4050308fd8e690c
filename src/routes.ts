import { readFileSync } from "node:fs";
import type { ConnectRouter } from "@connectrpc/connect";
import { file_contextloader_common_v1_errors } from "../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../gen/contextloader/knowledge/v1/knowledge_pb";
import { KnowledgeToolsService } from "../gen/contextloader/kntools/v1/kntools_pb";
import { MemRecallService } from "../gen/contextloader/memrecall/v1/memrecall_pb";
import { LogicPropertyResolverService } from "../gen/contextloader/resolver/v1/resolver_pb";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb";
import { file_google_rpc_status } from "../gen/google/rpc/status_pb";
import { Health } from "../gen/grpc/health/v1/health_pb";
import { packagePath } from "./core/package-root";
import type { Deps } from "./deps";
import { instanceRoutes } from "./knowledge/kn-tools/instances";
import { registerKnowledgeTools } from "./knowledge/kn-tools/kn-tools-service";
import { schemaAndActionRoutes } from "./knowledge/kn-tools/schema-and-actions";
import { registerKnowledge } from "./knowledge/knowledge-service";
import { knowledgeRoutes } from "./knowledge/rest-routes";
import { mcpRoute } from "./mcp/http-route";
import { mcpTools } from "./mcp/tools";
import { registerMemRecall } from "./memrecall/memrecall-service";
import { registerResolver } from "./resolver/resolver-service";
import { resolverRoutes } from "./resolver/rest-routes";
import type { Admission } from "./server/admission";
import { PUBLIC_PREFIX } from "./server/auth";
import { type HealthState, registerHealth } from "./server/health";
import type { HttpRoute } from "./server/http-routes";
import type { JsonRouteOptions } from "./server/json-route";
import { documentedDescriptors, registerReflection } from "./server/reflection";
import type { ToolingStreams } from "./server/tooling-streams";

/** The three product services, in the order reflection lists them. */
export const productServices = [
  KnowledgeRetrievalService,
  KnowledgeToolsService,
  LogicPropertyResolverService,
  MemRecallService,
] as const;

/**
 * Every RPC the service answers, registered on a Connect router: the three
 * product services, grpc.health.v1 over `health`, and server reflection (with
 * the error-detail messages, so grpcurl can print them); health watches and
 * reflection streams share `toolingStreams`. What
 * connectNodeAdapter and createRouterTransport both take.
 */
export function routes(
  deps: Deps,
  health: HealthState,
  toolingStreams: ToolingStreams,
): (router: ConnectRouter) => void {
  const documented = documentedDescriptors(readFileSync(packagePath("gen/descriptors.binpb")));
  return (router) => {
    registerKnowledge(router, deps.knowledge);
    registerKnowledgeTools(router, deps.knowledge);
    registerResolver(router, deps.resolver);
    registerMemRecall(router, deps.memrecall);
    registerHealth(router, health, toolingStreams);
    registerReflection(
      router,
      toolingStreams,
      [...productServices, Health],
      [file_google_rpc_error_details, file_google_rpc_status, file_contextloader_common_v1_errors],
      documented,
    );
  };
}

/**
 * The plain JSON routes of the specs (the platform's tool endpoints) and MCP
 * (POST /mcp) beside the RPCs; and the platform's public surface: each
 * internal platform route (`/api/agent-retrieval/in/v1/…`) again under
 * `/api/agent-retrieval/v1/…`, and MCP at `/api/agent-retrieval/v1/mcp`, the
 * same handlers behind the token check (PUBLIC_PREFIX in server/auth).
 */
export function httpRoutes(
  deps: Deps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "defaultLanguage">,
  admission: Admission,
): HttpRoute[] {
  const internal = [
    ...knowledgeRoutes(deps.knowledge, route),
    ...schemaAndActionRoutes(deps.knowledge, route),
    ...instanceRoutes(deps.knowledge, route),
    ...resolverRoutes(deps.resolver, route),
  ];
  const mcp = mcpRoute({ ...route, admission, tools: mcpTools(deps) });
  const publicRoutes = internal
    .filter((r) => r.path.startsWith(INTERNAL_PREFIX))
    .map((r) => ({ ...r, path: PUBLIC_PREFIX + r.path.slice(INTERNAL_PREFIX.length) }));
  return [...internal, ...publicRoutes, mcp, { ...mcp, path: `${PUBLIC_PREFIX}mcp` }];
}

const INTERNAL_PREFIX = "/api/agent-retrieval/in/v1/";
