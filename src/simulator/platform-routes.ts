import type { Logger } from "pino";
import { z } from "zod";
import { type Json, jsonSchema } from "../core/json";
import { verbatim } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { violationsOf } from "../errors/validation";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import type { ObjectQuery, Row, SubgraphObject, SubgraphQuery } from "../kn/types";
import { agentToolRoutes } from "./agent-tool-routes";
import { callContextOf, type IncomingRequest, type Reply } from "./exchange";
import { errorBody, type PlatformService, toolErrorReply } from "./platform-errors";
import { type Route, type ServedRoute, underEveryLayout } from "./route";

/** Below ontology-manager's and ontology-query's prefixes. */
const KN = "/knowledge-networks";

/** Whose reads a refusal for a missing X-HTTP-Method-Override names. */
const READS_OF: Record<PlatformService, string> = {
  OntologyManager: "ontology-manager search",
  BknBackend: "bkn-backend search",
  OntologyQuery: "ontology-query",
  AgentOperatorIntegration: "agent-operator-integration",
};

/** What the platform routes answer from. */
export interface PlatformDeps {
  backend: KnowledgeNetworkBackend;
  /** "new" (2026 names) or "old" (see rowOut and objectOut). */
  spelling: "new" | "old";
  log: Logger;
}

/**
 * Answers a request to ontology-manager (bkn-backend), ontology-query or the
 * operator market as the platform does, under the paths of every release
 * (route.ts): 404 for an unknown route, ontology-query reads refused
 * without `X-HTTP-Method-Override: GET`, POST bodies that must be JSON objects,
 * a backend's ToolError in the platform's error body. Undefined when the client
 * left before the answer was ready (`signal` aborted).
 */
export async function answerPlatform(
  request: IncomingRequest,
  deps: PlatformDeps,
  signal: AbortSignal,
): Promise<Reply | undefined> {
  const { method, url, body } = request;
  const found = findRoute(method, url.pathname);
  if (!found) {
    const description = `no route for ${method} ${url.pathname}`;
    return { status: 404, body: errorBody("Simulator.RouteNotFound", description, "Check the base URL and path.") };
  }
  const { route, params } = found;
  if (
    (route.service === "OntologyQuery" || route.methodOverride) &&
    String(request.headers["x-http-method-override"] ?? "").toUpperCase() !== "GET"
  ) {
    return {
      status: 400,
      body: errorBody(
        `${route.service}.InvalidParameter.MethodOverride`,
        `${READS_OF[route.service]} reads are POST requests that must carry the header X-HTTP-Method-Override: GET`,
        "Send X-HTTP-Method-Override: GET.",
      ),
    };
  }
  if (route.method === "POST" && (typeof body !== "object" || body === null)) {
    const description = "the request body must be a JSON object";
    return {
      status: 400,
      body: errorBody(`${route.service}.InvalidParameter`, description, "Send a JSON object body."),
    };
  }
  try {
    const ctx = callContextOf(request, deps.log, signal);
    const answer = await route.run({
      ctx,
      backend: deps.backend,
      spelling: deps.spelling,
      params,
      query: url.searchParams,
      body,
    });
    return { status: 200, body: answer };
  } catch (err) {
    if (signal.aborted) return undefined;
    if (err instanceof ToolError) return toolErrorReply(route.service, err);
    deps.log.error({ err }, "the backend failed");
    const solution = "Report it with the time of the call.";
    return { status: 500, body: errorBody(`${route.service}.InternalError`, "internal error", solution) };
  }
}

/** The platform reads the HTTP backend makes, one entry per path, each under every release's prefix. */
const routes: ServedRoute[] = underEveryLayout([
  {
    method: "GET",
    pattern: KN,
    service: "ontologyManager",
    run: ({ ctx, backend, query }) =>
      backend.listKnowledgeNetworks(ctx, {
        name_pattern: query.get("name_pattern") ?? undefined,
        limit: numberParam(query, "limit"),
        offset: numberParam(query, "offset"),
      }) as unknown as Promise<Json>,
  },
  {
    method: "GET",
    pattern: `${KN}/:kn`,
    service: "ontologyManager",
    async run({ ctx, backend, params, query }) {
      const kn = await backend.getKnowledgeNetwork(ctx, params["kn"]!);
      if (query.get("mode") === "export") return kn as unknown as Json;
      return { id: kn.id, name: kn.name, comment: kn.comment, tags: kn.tags };
    },
  },
  {
    method: "GET",
    pattern: `${KN}/:kn/object-types/:ots`,
    service: "ontologyManager",
    async run({ ctx, backend, params }) {
      // Split before decoding, so an encoded "," stays inside its id.
      const ids = params["ots"]!.split(",").map(decode);
      return { entries: (await backend.getObjectTypes(ctx, params["kn"]!, ids)) as unknown as Json[] };
    },
  },
  {
    method: "POST",
    pattern: `${KN}/:kn/object-types/:ot`,
    service: "ontologyQuery",
    async run({ ctx, backend, params, query, body, spelling }) {
      const started = performance.now();
      const result = await backend.queryObjects(ctx, params["kn"]!, params["ot"]!, {
        ...(body as ObjectQuery),
        ...logicParamsOf(query),
      });
      const out: Record<string, Json> = { datas: result.datas.map((r) => rowOut(r, spelling)) };
      if (result.total_count) out["total_count"] = result.total_count;
      if (result.search_after) out["search_after"] = result.search_after;
      out["overall_ms"] = Math.round(performance.now() - started);
      return out;
    },
  },
  {
    method: "POST",
    pattern: `${KN}/:kn/object-types/:ot/properties`,
    service: "ontologyQuery",
    async run({ ctx, backend, params, body, spelling }) {
      const started = performance.now();
      const field = spelling === "new" ? "_instance_identities" : "unique_identities";
      const parsed = z
        .object({
          [field]: z.array(z.record(z.string(), jsonSchema), {
            error: `${field} is required: a list of primary key maps`,
          }),
          properties: z.array(z.string(), { error: "properties is required: a list of property names" }),
          dynamic_params: z.record(z.string(), z.record(z.string(), jsonSchema)).optional(),
        })
        .safeParse(body);
      if (!parsed.success) {
        const violations = violationsOf(parsed.error);
        const message = verbatim(
          `invalid property query: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
        );
        throw new ToolError({ code: "invalid_argument", reason: "INVALID_PROPERTIES_QUERY", message, violations });
      }
      const q = parsed.data as { properties: string[]; dynamic_params?: Record<string, Record<string, Json>> } & Record<
        string,
        unknown
      >;
      const result = await backend.queryProperties(ctx, params["kn"]!, params["ot"]!, {
        identities: q[field] as Record<string, Json>[],
        properties: q.properties,
        dynamic_params: q.dynamic_params,
      });
      // One row per matched instance, in an order of the platform's own (here: the reverse of the request).
      const byId = new Map<string, Row>();
      for (const r of result.rows) if (r !== null) byId.set(String(r["_instance_id"]), r as Row);
      const rows = [...byId.values()].reverse();
      return { datas: rows.map((r) => rowOut(r, spelling)), overall_ms: Math.round(performance.now() - started) };
    },
  },
  {
    method: "POST",
    pattern: `${KN}/:kn/subgraph`,
    service: "ontologyQuery",
    async run({ ctx, backend, params, query, body, spelling }) {
      if (query.get("query_type") !== "relation_path") {
        throw new ToolError({
          code: "invalid_argument",
          reason: "INVALID_QUERY_TYPE",
          message: verbatim(`query_type must be relation_path (got ${JSON.stringify(query.get("query_type"))})`),
          violations: [{ field: "query_type", description: verbatim("must be relation_path") }],
        });
      }
      const result = await backend.querySubgraph(ctx, params["kn"]!, {
        ...(body as SubgraphQuery),
        ...logicParamsOf(query),
      });
      return {
        entries: result.entries.map((e) => ({
          objects: Object.fromEntries(Object.entries(e.objects).map(([key, o]) => [key, objectOut(o, spelling)])),
          relation_paths: e.relation_paths as unknown as Json,
          ...(e.total_count !== undefined ? { total_count: e.total_count } : {}),
        })),
      };
    },
  },
  {
    method: "GET",
    pattern: "/operator/market/:operator",
    service: "operatorIntegration",
    run: ({ ctx, backend, params }) => backend.getOperator(ctx, params["operator"]!) as unknown as Promise<Json>,
  },
  ...agentToolRoutes,
] satisfies Route[]);

/** Instance and property rows: the platform before 2026 sent no system fields in them (kn_medical.call-samples.txt). */
function rowOut(row: Row, spelling: "new" | "old"): Json {
  if (spelling === "new") return row;
  const { _instance_id, _instance_identity, _display, ...rest } = row;
  return rest;
}

/** Subgraph objects: before 2026 the system fields were `id`, `unique_identities` and `display`. */
function objectOut(o: SubgraphObject, spelling: "new" | "old"): Json {
  if (spelling === "new") return o as unknown as Json;
  const { _instance_id, _instance_identity, _display, ...rest } = o;
  return { id: _instance_id, unique_identities: _instance_identity, display: _display, ...rest };
}

function findRoute(
  method: string,
  pathname: string,
): { route: ServedRoute; params: Record<string, string> } | undefined {
  const segments = pathname.split("/");
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.pattern.split("/");
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = pattern.every((p, i) => {
      const s = segments[i]!;
      if (!p.startsWith(":")) return p === s;
      if (s === "") return false;
      params[p.slice(1)] = p === ":ots" ? s : decode(s);
      return true;
    });
    if (ok) return { route, params };
  }
  return undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** ontology-query's `include_logic_params=true` query parameter (anything else: false, as the platform reads it). */
function logicParamsOf(query: URLSearchParams): { include_logic_params?: boolean } {
  return query.get("include_logic_params") === "true" ? { include_logic_params: true } : {};
}

function numberParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  return v === null || v === "" ? undefined : Number(v);
}
