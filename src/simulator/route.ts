import type { CallContext } from "../core/call-context";
import type { Json } from "../core/json";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import { PLATFORM_LAYOUTS, type PlatformPaths } from "../kn/http/platform-paths";
import { type PlatformService, platformServiceOf } from "./platform-errors";

/** One platform request as a route sees it. */
export interface Call {
  ctx: CallContext;
  backend: KnowledgeNetworkBackend;
  spelling: "new" | "old";
  /** Path parameters, decoded (but `ots`, a comma-separated list, raw). */
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
}

/** A platform route as platform-routes.ts and agent-tool-routes.ts declare it: below its service's prefix. */
export interface Route {
  method: "GET" | "POST";
  /** The service whose path prefix the pattern is below. */
  service: keyof PlatformPaths;
  /** Segments below the prefix; ":name" captures one. */
  pattern: string;
  /** A read sent as POST that must carry X-HTTP-Method-Override: GET (every ontology-query route does). */
  methodOverride?: boolean;
  run(call: Call): Promise<Json>;
}

/** A route at one full path, with the name its service goes by there (in error codes). */
export interface ServedRoute extends Omit<Route, "service" | "pattern"> {
  pattern: string;
  service: PlatformService;
}

/**
 * Every route under the prefix of every platform release the HTTP backend
 * can be set to (platform-paths.ts), so one simulator serves a 0.7 and a 0.8
 * client alike: the same handler under `/api/ontology-manager/in/v1/…`
 * (OntologyManager.* error codes) and `/api/bkn-backend/in/v1/…`
 * (BknBackend.*). A prefix two releases share is served once.
 */
export function underEveryLayout(routes: Route[]): ServedRoute[] {
  const served = new Map<string, ServedRoute>();
  for (const paths of Object.values(PLATFORM_LAYOUTS)) {
    for (const route of routes) {
      const pattern = paths[route.service] + route.pattern;
      const key = `${route.method} ${pattern}`;
      if (served.has(key)) continue;
      const service = platformServiceOf(pattern);
      if (service === undefined) throw new Error(`no platform service serves ${pattern}`);
      served.set(key, { ...route, pattern, service });
    }
  }
  return [...served.values()];
}
