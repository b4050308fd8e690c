import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { pino, type Logger } from "pino";
import { z } from "zod";
import type { SimulatorFaults } from "./config";
import { ToolError, type ErrorCode } from "../errors/tool-error";
import { parseOrThrow, violationsOf } from "../errors/validation";
import { knSearchInput } from "../knowledge/kn-search/input";
import { knSearch, type KnSearchDeps } from "../knowledge/kn-search/kn-search";
import { renderAnswer } from "../knowledge/kn-search/wire";
import { KnowledgeSessions } from "../knowledge/session";
import { callerFromHeaders } from "../server/caller";
import { traceIdFromHeaders } from "../server/trace";
import { InProcessSessionStore } from "../store/in-process-session-store";
import type { CallContext } from "../core/call-context";
import { localEmbedder } from "../upstream/embeddings";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import { type ObjectQuery, type Row, type SubgraphObject, type SubgraphQuery } from "../kn/types";
import { jsonSchema, type Json } from "../core/json";

/**
 * The platform's REST contract (ontology-manager, ontology-query, the operator
 * market, and data-retrieval's `POST /tools/kn_search` answered by our native
 * kn_search) served from any KnowledgeNetworkBackend, usually the embedded
 * engine: what the HTTP clients are tested and benchmarked against. It answers
 * as the platform does: error bodies `{error_code, description, solution,
 * error_link, error_details}` (a backend's field violations as error_details
 * `[{field, description}]`), total_count omitted when 0, property rows in an
 * order of its own, ontology-query reads refused without
 * `X-HTTP-Method-Override: GET`, field names in the configured spelling. Faults
 * (latency, 503s, answers that never come, bodies that are not JSON) are drawn
 * per request and can be changed while it runs, in process or over
 * `POST /__sim/faults`.
 */
export interface Simulator {
  /** http://host:port, the base URL of all three services. */
  url: string;
  port: number;
  setFaults(faults: Partial<SimulatorFaults>): void;
  /** Every platform request so far, oldest first (admin routes excluded). */
  requests(): SimRequest[];
  clearRequests(): void;
  /** Stops listening and drops every connection, held ones included. */
  close(): Promise<void>;
}

export interface SimulatorOptions {
  backend: KnowledgeNetworkBackend;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  faults?: Partial<SimulatorFaults>;
  /** "new" (2026 names, the default) or "old" (see rowOut and objectOut). */
  spelling?: "new" | "old";
  log?: Logger;
}

/** One request as the simulator saw it. */
export interface SimRequest {
  method: string;
  /** Path and query string, as sent. */
  path: string;
  /** The headers the platform reads (lower-case names), when sent. */
  headers: Record<string, string>;
  /** The JSON body; its text when it is not JSON; undefined when empty. */
  body: unknown;
  /** 0 when the simulator never answered (a timeout fault). */
  status: number;
  ms: number;
  /** The client's port: the same across calls that reused one keep-alive connection. */
  remotePort: number;
}

const LOGGED_HEADERS = ["x-http-method-override", "x-account-id", "x-account-type", "traceparent", "content-type"];
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** The request log keeps this many entries, dropping the oldest, so a long benchmark run stays bounded. */
const MAX_LOGGED_REQUESTS = 10_000;
const NO_FAULTS: SimulatorFaults = { latencyMs: 0, jitterMs: 0, errorRate: 0, timeoutRate: 0, malformedRate: 0, match: undefined };

const OM = "/api/ontology-manager/in/v1/knowledge-networks";
const OQ = "/api/ontology-query/in/v1/knowledge-networks";
const MARKET = "/api/agent-operator-integration/internal-v1/operator/market";
const KN_SEARCH = "/tools/kn_search";

type Service = "OntologyManager" | "OntologyQuery" | "AgentOperatorIntegration";

interface Call {
  ctx: CallContext;
  backend: KnowledgeNetworkBackend;
  spelling: "new" | "old";
  /** Path parameters, decoded (but `ots`, a comma-separated list, raw). */
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
}

interface Route {
  method: "GET" | "POST";
  /** Segments; ":name" captures one. */
  pattern: string;
  service: Service;
  run(call: Call): Promise<Json>;
}

const routes: Route[] = [
  {
    method: "GET",
    pattern: OM,
    service: "OntologyManager",
    run: ({ ctx, backend, query }) =>
      backend.listKnowledgeNetworks(ctx, {
        name_pattern: query.get("name_pattern") ?? undefined,
        limit: numberParam(query, "limit"),
        offset: numberParam(query, "offset"),
      }) as unknown as Promise<Json>,
  },
  {
    method: "GET",
    pattern: `${OM}/:kn`,
    service: "OntologyManager",
    async run({ ctx, backend, params, query }) {
      const kn = await backend.getKnowledgeNetwork(ctx, params["kn"]!);
      if (query.get("mode") === "export") return kn as unknown as Json;
      return { id: kn.id, name: kn.name, comment: kn.comment, tags: kn.tags };
    },
  },
  {
    method: "GET",
    pattern: `${OM}/:kn/object-types/:ots`,
    service: "OntologyManager",
    async run({ ctx, backend, params }) {
      // Split before decoding, so an encoded "," stays inside its id.
      const ids = params["ots"]!.split(",").map(decode);
      return { entries: (await backend.getObjectTypes(ctx, params["kn"]!, ids)) as unknown as Json[] };
    },
  },
  {
    method: "POST",
    pattern: `${OQ}/:kn/object-types/:ot`,
    service: "OntologyQuery",
    async run({ ctx, backend, params, body, spelling }) {
      const started = performance.now();
      const result = await backend.queryObjects(ctx, params["kn"]!, params["ot"]!, body as ObjectQuery);
      const out: Record<string, Json> = { datas: result.datas.map((r) => rowOut(r, spelling)) };
      if (result.total_count) out["total_count"] = result.total_count;
      if (result.search_after) out["search_after"] = result.search_after;
      out["overall_ms"] = Math.round(performance.now() - started);
      return out;
    },
  },
  {
    method: "POST",
    pattern: `${OQ}/:kn/object-types/:ot/properties`,
    service: "OntologyQuery",
    async run({ ctx, backend, params, body, spelling }) {
      const started = performance.now();
      const field = spelling === "new" ? "_instance_identities" : "unique_identities";
      const parsed = z
        .object({
          [field]: z.array(z.record(z.string(), jsonSchema), { error: `${field} is required: a list of primary key maps` }),
          properties: z.array(z.string(), { error: "properties is required: a list of property names" }),
          dynamic_params: z.record(z.string(), z.record(z.string(), jsonSchema)).optional(),
        })
        .safeParse(body);
      if (!parsed.success) {
        const violations = violationsOf(parsed.error);
        throw new ToolError({ code: "invalid_argument", reason: "INVALID_PROPERTIES_QUERY", message: `invalid property query: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`, violations });
      }
      const q = parsed.data as { properties: string[]; dynamic_params?: Record<string, Record<string, Json>> } & Record<string, unknown>;
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
    pattern: `${OQ}/:kn/subgraph`,
    service: "OntologyQuery",
    async run({ ctx, backend, params, query, body, spelling }) {
      if (query.get("query_type") !== "relation_path") {
        throw new ToolError({
          code: "invalid_argument",
          reason: "INVALID_QUERY_TYPE",
          message: `query_type must be relation_path (got ${JSON.stringify(query.get("query_type"))})`,
          violations: [{ field: "query_type", description: "must be relation_path" }],
        });
      }
      const result = await backend.querySubgraph(ctx, params["kn"]!, body as SubgraphQuery);
      return {
        entries: result.entries.map((e) => ({
          objects: Object.fromEntries(Object.entries(e.objects).map(([key, o]) => [key, objectOut(o, spelling)])),
          relation_paths: e.relation_paths as unknown as Json,
        })),
      };
    },
  },
  {
    method: "GET",
    pattern: `${MARKET}/:operator`,
    service: "AgentOperatorIntegration",
    run: ({ ctx, backend, params }) => backend.getOperator(ctx, params["operator"]!) as unknown as Promise<Json>,
  },
];

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

const faultsSchema = z
  .object({
    latencyMs: z.number().int().min(0),
    jitterMs: z.number().int().min(0),
    errorRate: z.number().min(0).max(1),
    timeoutRate: z.number().min(0).max(1),
    malformedRate: z.number().min(0).max(1),
    match: z
      .string()
      .refine((r) => {
        try {
          new RegExp(r);
          return true;
        } catch {
          return false;
        }
      }, "match must be a regular expression")
      .nullish()
      .transform((m) => m ?? undefined),
  })
  .partial()
  .strict();

export async function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const log = opts.log ?? pino({ level: "silent" });
  const spelling = opts.spelling ?? "new";
  let faults: SimulatorFaults = { ...NO_FAULTS, ...faultsSchema.parse(opts.faults ?? {}) };
  // data-retrieval's kn_search is our native one over the same backend, with sessions of its own and no LLM.
  const sessions = new InProcessSessionStore({ maxValueBytes: 1024 * 1024, maxEntries: 100_000, log });
  const knSearchDeps: KnSearchDeps = {
    backend: opts.backend,
    sessions: new KnowledgeSessions({ memory: sessions, redis: undefined }),
    embedder: localEmbedder,
    reranker: undefined,
    llm: undefined,
    dataRetrieval: undefined,
  };
  let seen: SimRequest[] = [];
  const setFaults = (f: Partial<SimulatorFaults>) => {
    faults = { ...faults, ...faultsSchema.parse(f) };
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, "simulator failed to answer");
      res.destroy();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? "/", "http://simulator");
    const method = req.method ?? "GET";
    const text = await readBody(req);
    const entry: SimRequest = {
      method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(LOGGED_HEADERS.flatMap((h) => (typeof req.headers[h] === "string" ? [[h, req.headers[h]]] : []))),
      body: text === undefined ? undefined : parseOrText(text),
      status: 0,
      ms: 0,
      remotePort: req.socket.remotePort ?? 0,
    };
    const answer = (status: number, body: Json | string) => {
      const payload = typeof body === "string" ? body : JSON.stringify(body);
      res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(payload) });
      res.end(payload);
      return status;
    };

    if (url.pathname.startsWith("/__sim/")) {
      admin(method, url.pathname, entry.body, answer);
      return;
    }
    const record = (status: number) => {
      entry.status = status;
      entry.ms = Math.round(performance.now() - started);
      seen.push(entry);
      if (seen.length > MAX_LOGGED_REQUESTS) seen = seen.slice(-MAX_LOGGED_REQUESTS);
      log.debug({ method, path: entry.path, status, ms: entry.ms }, "simulator request");
    };

    // Faults apply to every call, or with `match` only to the calls it matches.
    const f = faults.match === undefined || new RegExp(faults.match).test(`${method} ${entry.path} ${text ?? ""}`) ? faults : NO_FAULTS;
    const delay = f.latencyMs + Math.random() * f.jitterMs;
    if (delay > 0) await sleep(delay);
    if (res.destroyed) return record(0);
    const service = serviceOf(url.pathname);
    if (Math.random() < f.timeoutRate) {
      // Hold the socket: the client's timeout must fire (or close() drops it).
      return record(0);
    }
    if (Math.random() < f.errorRate) {
      return record(answer(503, errorBody(`${service}.ServiceUnavailable`, "simulated fault: the service is temporarily unavailable", "Retry later.")));
    }
    if (Math.random() < f.malformedRate) {
      return record(answer(200, '{"datas":[{"truncated'));
    }
    record(await dispatch(req, res, url, entry.body, answer));
  }

  async function dispatch(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    url: URL,
    body: unknown,
    answer: (status: number, body: Json) => number,
  ): Promise<number> {
    const method = req.method ?? "GET";
    if (method === "POST" && url.pathname === KN_SEARCH) return dataRetrievalKnSearch(req, res, body, answer);
    const found = findRoute(method, url.pathname);
    if (!found) {
      return answer(404, errorBody("Simulator.RouteNotFound", `no route for ${method} ${url.pathname}`, "Check the base URL and path."));
    }
    const { route, params } = found;
    if (route.service === "OntologyQuery" && String(req.headers["x-http-method-override"] ?? "").toUpperCase() !== "GET") {
      return answer(
        400,
        errorBody("OntologyQuery.InvalidParameter.MethodOverride", "ontology-query reads are POST requests that must carry the header X-HTTP-Method-Override: GET", "Send X-HTTP-Method-Override: GET."),
      );
    }
    if (route.method === "POST" && (typeof body !== "object" || body === null)) {
      return answer(400, errorBody(`${route.service}.InvalidParameter`, "the request body must be a JSON object", "Send a JSON object body."));
    }
    const abort = abortOnClose(res);
    try {
      const ctx = callContext(req, log, abort.signal);
      return answer(200, await route.run({ ctx, backend: opts.backend, spelling, params, query: url.searchParams, body }));
    } catch (err) {
      if (abort.signal.aborted) return 0;
      if (!(err instanceof ToolError)) {
        log.error({ err }, "the backend failed");
        return answer(500, errorBody(`${route.service}.InternalError`, "internal error", "Report it with the time of the call."));
      }
      return answer(statusOf(err.code), {
        error_code: `${route.service}.${errorSuffix(err)}`,
        description: err.message,
        solution: err.hint?.message ?? "",
        error_link: "",
        error_details: err.violations.length > 0 ? (err.violations as unknown as Json) : "",
      });
    }
  }

  /**
   * data-retrieval's kn_search as it answers: x-account-id required (FastAPI's
   * 422 without it), bad parameters 400 and failed runs 500, both with its
   * error body `{"detail": {code, description, detail: {error}, solution, link}}`.
   */
  async function dataRetrievalKnSearch(req: http.IncomingMessage, res: http.ServerResponse, body: unknown, answer: (status: number, body: Json) => number): Promise<number> {
    const abort = abortOnClose(res);
    try {
      const ctx = callContext(req, log, abort.signal);
      if (ctx.caller.accountId === "") {
        return answer(422, { detail: [{ type: "missing", loc: ["header", "x-account-id"], msg: "Field required", input: null }] });
      }
      return answer(200, renderAnswer(await knSearch(knSearchDeps, ctx, parseOrThrow(knSearchInput, body))));
    } catch (err) {
      if (abort.signal.aborted) return 0;
      if (!(err instanceof ToolError)) log.error({ err }, "kn_search failed");
      const param = err instanceof ToolError && err.code === "invalid_argument";
      const missing = err instanceof ToolError && err.code === "not_found";
      return answer(param ? 400 : missing ? 404 : 500, {
        detail: {
          code: param ? "KnowledgeNetworkParamError" : missing ? "KnowledgeNetworkNotFound" : "KnowledgeNetworkRetrievalError",
          description: param ? "参数验证失败" : missing ? "知识网络不存在" : "知识网络检索执行失败",
          detail: { error: err instanceof ToolError ? err.message : "internal error" },
          solution: param ? "请检查输入参数是否符合API要求" : missing ? "请检查 kn_ids" : "请稍后重试或联系技术支持",
          link: "",
        },
      });
    }
  }

  function admin(method: string, path: string, body: unknown, answer: (status: number, body: Json) => number): void {
    if (method === "POST" && path === "/__sim/faults") {
      const parsed = faultsSchema.safeParse(body);
      if (!parsed.success) {
        answer(400, errorBody("Simulator.InvalidParameter", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "), "Send {latencyMs, jitterMs, errorRate, timeoutRate, malformedRate, match} (any subset)."));
        return;
      }
      setFaults(parsed.data);
      answer(200, { faults: { ...faults, match: faults.match ?? null } });
    } else if (method === "GET" && path === "/__sim/requests") {
      answer(200, { requests: seen as unknown as Json[] });
    } else {
      answer(404, errorBody("Simulator.RouteNotFound", `no admin route ${method} ${path}`, "Use POST /__sim/faults or GET /__sim/requests."));
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(address.address)}:${address.port}`,
    port: address.port,
    setFaults,
    requests: () => [...seen],
    clearRequests: () => {
      seen = [];
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }).finally(() => sessions.close()),
  };
}

/** Aborted when the client goes away before the answer is written: the backend stops work for it. */
function abortOnClose(res: http.ServerResponse): AbortController {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the client closed the connection"));
  });
  return abort;
}

/** What the platform knows of a caller: the identity and trace headers. Bad identity headers are INVALID_ARGUMENT. */
function callContext(req: http.IncomingMessage, log: Logger, signal: AbortSignal): CallContext {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  const traceId = traceIdFromHeaders(headers);
  return { caller: callerFromHeaders(headers), traceId, log: log.child({ trace_id: traceId }), signal, remainingMs: () => undefined };
}

function findRoute(method: string, pathname: string): { route: Route; params: Record<string, string> } | undefined {
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

function serviceOf(pathname: string): Service | "DataRetrieval" | "Simulator" {
  if (pathname.startsWith("/tools/")) return "DataRetrieval";
  if (pathname.startsWith("/api/ontology-manager/")) return "OntologyManager";
  if (pathname.startsWith("/api/ontology-query/")) return "OntologyQuery";
  if (pathname.startsWith("/api/agent-operator-integration/")) return "AgentOperatorIntegration";
  return "Simulator";
}

function statusOf(code: ErrorCode): number {
  const statuses: Partial<Record<ErrorCode, number>> = {
    invalid_argument: 400,
    unauthenticated: 401,
    permission_denied: 403,
    not_found: 404,
    failed_precondition: 409,
    unavailable: 503,
    deadline_exceeded: 504,
  };
  return statuses[code] ?? 500;
}

/** "OBJECT_TYPE_NOT_FOUND" → "ObjectType.NotFound"; other codes by their kind, as the platform names them. */
function errorSuffix(err: ToolError): string {
  switch (err.code) {
    case "not_found": {
      const thing = err.reason.replace(/_NOT_FOUND$/, "");
      return thing === err.reason ? "NotFound" : `${pascal(thing)}.NotFound`;
    }
    case "invalid_argument":
      return "InvalidParameter";
    case "failed_precondition":
      return "FailedPrecondition";
    case "unauthenticated":
      return "Unauthorized";
    case "permission_denied":
      return "Forbidden";
    case "unavailable":
      return "ServiceUnavailable";
    case "deadline_exceeded":
      return "Timeout";
    default:
      return "InternalError";
  }
}

function pascal(upperSnake: string): string {
  return upperSnake
    .toLowerCase()
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
}

function errorBody(errorCode: string, description: string, solution: string): Json {
  return { error_code: errorCode, description, solution, error_link: "", error_details: "" };
}

function numberParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  return v === null || v === "" ? undefined : Number(v);
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function urlHost(address: string): string {
  if (address === "0.0.0.0") return "127.0.0.1";
  if (address === "::") return "[::1]";
  return address.includes(":") ? `[${address}]` : address;
}

function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(size === 0 ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
