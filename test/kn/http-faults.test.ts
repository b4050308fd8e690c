import { getEventListeners } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ErrorCode } from "../../src/errors/tool-error";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { createHttpBackend, type HttpBackendOptions } from "../../src/kn/http/http-backend";
import type { SimRequest } from "../../src/simulator/request-log";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { miniBundle } from "../fixtures/mini-bundle";
import { testContext } from "../helpers/call-context";
import { failureOf } from "./backend.contract";

const KN = "kn_mini";
const ctx = testContext();
const QUERY_PATH = "/api/ontology-query/in/v1/knowledge-networks/kn_mini/object-types/disease";

/** A backend pointed at `url` for all three services; closed after each test. */
const opened: { close(): void }[] = [];
function backendAt(url: string, options: Partial<HttpBackendOptions> = {}) {
  const backend = createHttpBackend({
    ontologyManagerUrl: url,
    ontologyQueryUrl: url,
    operatorMarketUrl: url,
    timeoutMs: 2000,
    maxSockets: 4,
    spelling: "new",
    ...options,
  });
  opened.push(backend);
  return backend;
}
afterEach(() => {
  for (const b of opened.splice(0)) b.close();
});

/** A server answering every request with the status and body set last. */
async function startStub() {
  let next = { status: 200, body: "{}" };
  const server = http.createServer((req, res) => {
    req.resume().on("end", () => {
      res.writeHead(next.status, { "content-type": "application/json" });
      res.end(next.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answer(status: number, body: unknown) {
      next = { status, body: typeof body === "string" ? body : JSON.stringify(body) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const elapsedOf = async (call: () => Promise<unknown>) => {
  const started = performance.now();
  const outcome = await call().catch((err: unknown) => err);
  return { outcome, ms: performance.now() - started };
};

describe("upstream failures through the simulator", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ backend: new EmbeddedBackend([miniBundle], { timeZone: "Asia/Shanghai" }) });
  });
  afterAll(() => sim.close());
  afterEach(() => {
    sim.setFaults({ latencyMs: 0, jitterMs: 0, errorRate: 0, timeoutRate: 0, malformedRate: 0, match: undefined });
    sim.clearRequests();
  });

  it("keeps the platform's error_code, its description only for the log: an unknown object type is NOT_FOUND", async () => {
    const err = await failureOf(backendAt(sim.url).queryObjects(ctx, KN, "no_such_type", { limit: 1 }));
    expect(err.code).toBe("not_found");
    expect(err.reason).toBe("UPSTREAM_NOT_FOUND");
    expect(err.message).toBe(
      "ontology-query does not have it (asked for instances of object type no_such_type in knowledge network kn_mini; HTTP 404; error_code OntologyQuery.ObjectType.NotFound; retrying will not help)",
    );
    expect(err.metadata).toEqual({
      upstream: "ontology-query",
      upstream_status: "404",
      error_code: "OntologyQuery.ObjectType.NotFound",
    });
    expect(err.privateDetail).toContain("object type no_such_type does not exist in knowledge network kn_mini");
  });

  it("reports a 503 as UNAVAILABLE, worth retrying", async () => {
    sim.setFaults({ errorRate: 1 });
    const err = await failureOf(backendAt(sim.url).queryObjects(ctx, KN, "disease", { limit: 1 }));
    expect(err.code).toBe("unavailable");
    expect(err.reason).toBe("UPSTREAM_UNAVAILABLE");
    expect(err.metadata).toMatchObject({
      upstream: "ontology-query",
      upstream_status: "503",
      error_code: "OntologyQuery.ServiceUnavailable",
    });
    expect(err.hint?.message.en).toMatch(/retry/i);
    expect(err.hint?.message.zh).toContain("重试");
  });

  it("injects faults only into the calls `match` selects", async () => {
    sim.setFaults({ errorRate: 1, match: "subgraph" });
    const backend = backendAt(sim.url);
    expect((await backend.queryObjects(ctx, KN, "disease", { limit: 1 })).datas).toHaveLength(1);
    const err = await failureOf(
      backend.querySubgraph(ctx, KN, {
        relation_type_paths: [
          {
            object_types: [{ id: "disease" }, { id: "symptom" }],
            relation_types: [
              { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
            ],
          },
        ],
      }),
    );
    expect(err.code).toBe("unavailable");
  });

  it("reports a body that is not JSON as UNAVAILABLE UPSTREAM_BAD_RESPONSE, its excerpt only for the log", async () => {
    sim.setFaults({ malformedRate: 1 });
    const err = await failureOf(backendAt(sim.url).querySubgraph(ctx, KN, { relation_type_paths: [] }));
    expect(err.code).toBe("unavailable");
    expect(err.reason).toBe("UPSTREAM_BAD_RESPONSE");
    expect(err.message).toContain("a body that is not JSON, HTTP 200");
    expect(err.message).not.toContain("truncated");
    expect(err.privateDetail).toContain('not JSON: {"datas":[{"truncated');
    expect(err.metadata).toMatchObject({ upstream: "ontology-query", upstream_status: "200" });
  });

  it("gives up on a platform that never answers after the client's timeout: DEADLINE_EXCEEDED", async () => {
    sim.setFaults({ timeoutRate: 1 });
    const { outcome, ms } = await elapsedOf(() =>
      backendAt(sim.url, { timeoutMs: 200 }).queryObjects(ctx, KN, "disease", { limit: 1 }),
    );
    expect(outcome).toMatchObject({
      code: "deadline_exceeded",
      reason: "UPSTREAM_TIMEOUT",
      metadata: { upstream: "ontology-query", timeout_ms: "200", limited_by: "upstream_timeout" },
    });
    expect(ms).toBeGreaterThanOrEqual(190);
    // Not waiting for a platform that never answers; wide, for a loaded machine.
    expect(ms).toBeLessThan(4000);
    expect(sim.requests()).toMatchObject([{ path: QUERY_PATH, status: 0 }]);
  });

  it("honours the caller's deadline when it is shorter than the client's timeout", async () => {
    sim.setFaults({ timeoutRate: 1 });
    const short = testContext({ remainingMs: () => 150 });
    const { outcome, ms } = await elapsedOf(() =>
      backendAt(sim.url, { timeoutMs: 5000 }).queryObjects(short, KN, "disease", { limit: 1 }),
    );
    expect(outcome).toMatchObject({
      code: "deadline_exceeded",
      reason: "UPSTREAM_TIMEOUT",
      metadata: { timeout_ms: "150", limited_by: "caller_deadline" },
    });
    // Well before the client's 5 s timeout; wide, for a loaded machine.
    expect(ms).toBeLessThan(4000);
  });

  it("does not call at all when the caller's deadline has already passed", async () => {
    const err = await failureOf(backendAt(sim.url).getKnowledgeNetwork(testContext({ remainingMs: () => 0 }), KN));
    expect(err.code).toBe("deadline_exceeded");
    expect(sim.requests()).toEqual([]);
  });

  it("rethrows the caller's abort as it came, mid-call", async () => {
    sim.setFaults({ timeoutRate: 1 });
    const controller = new AbortController();
    const reason = new Error("client cancelled");
    setTimeout(() => controller.abort(reason), 50);
    const { outcome, ms } = await elapsedOf(() =>
      backendAt(sim.url).queryObjects(testContext({ signal: controller.signal }), KN, "disease", { limit: 1 }),
    );
    expect(outcome).toBe(reason);
    // At the abort (the outcome above is its reason, not a timeout), before the client's 2 s timeout.
    expect(ms).toBeLessThan(1900);
  });

  it("reuses one keep-alive connection for sequential calls", async () => {
    const backend = backendAt(sim.url);
    for (let i = 0; i < 5; i++) await backend.queryObjects(ctx, KN, "symptom", { limit: 1 });
    const requests = sim.requests();
    expect(requests).toHaveLength(5);
    expect(new Set(requests.map((r) => r.remotePort)).size).toBe(1);
  });

  it("opens at most maxSockets connections for parallel calls", async () => {
    sim.setFaults({ latencyMs: 30 });
    const backend = backendAt(sim.url, { maxSockets: 2 });
    await Promise.all(Array.from({ length: 6 }, () => backend.queryObjects(ctx, KN, "symptom", { limit: 1 })));
    expect(sim.requests()).toHaveLength(6);
    expect(new Set(sim.requests().map((r) => r.remotePort)).size).toBe(2);
  });

  it("lets one call have many requests in flight on its signal without a listener-leak warning, and removes its listeners", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    try {
      const controller = new AbortController();
      const call = testContext({ signal: controller.signal });
      const backend = backendAt(sim.url, { maxSockets: 32 });
      await Promise.all(Array.from({ length: 24 }, () => backend.queryObjects(call, KN, "symptom", { limit: 1 })));
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.message)).toEqual([]);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("answers an ontology-query read without X-HTTP-Method-Override 400 with the platform's error body", async () => {
    const post = (headers: Record<string, string>) =>
      fetch(sim.url + QUERY_PATH, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ limit: 1 }),
      });
    const refused = await post({});
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      error_code: "OntologyQuery.InvalidParameter.MethodOverride",
      description: "ontology-query reads are POST requests that must carry the header X-HTTP-Method-Override: GET",
      solution: "Send X-HTTP-Method-Override: GET.",
      error_link: "",
      error_details: "",
    });
    expect((await post({ "x-http-method-override": "GET" })).status).toBe(200);
  });

  it("answers an unknown route 404 with an error body", async () => {
    const res = await fetch(`${sim.url}/api/ontology-query/in/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error_code: "Simulator.RouteNotFound" });
  });

  it("takes faults over POST /__sim/faults and shows its request log at GET /__sim/requests", async () => {
    const set = await fetch(`${sim.url}/__sim/faults`, {
      method: "POST",
      body: JSON.stringify({ errorRate: 1, latencyMs: 5 }),
    });
    expect(await set.json()).toEqual({
      faults: { latencyMs: 5, jitterMs: 0, errorRate: 1, timeoutRate: 0, malformedRate: 0, match: null },
    });
    expect((await failureOf(backendAt(sim.url).getKnowledgeNetwork(ctx, KN))).code).toBe("unavailable");
    const bad = await fetch(`${sim.url}/__sim/faults`, { method: "POST", body: JSON.stringify({ errorRate: 2 }) });
    expect(bad.status).toBe(400);
    const { requests } = (await (await fetch(`${sim.url}/__sim/requests`)).json()) as { requests: SimRequest[] };
    expect(requests).toMatchObject([
      { method: "GET", path: "/api/ontology-manager/in/v1/knowledge-networks/kn_mini?mode=export", status: 503 },
    ]);
    // libuv timers may fire up to a millisecond early against performance.now().
    expect(requests[0]!.ms).toBeGreaterThanOrEqual(4);
  });

  it("logs one line per call: debug on success, warn on failure", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: "debug" },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const backend = backendAt(sim.url);
    await backend.getKnowledgeNetwork(testContext({ log }), KN);
    await failureOf(backend.getKnowledgeNetwork(testContext({ log }), "kn_unknown"));
    expect(lines).toMatchObject([
      {
        level: 20,
        upstream: "ontology-manager",
        method: "GET",
        path: "/api/ontology-manager/in/v1/knowledge-networks/kn_mini",
        status: 200,
        ms: expect.any(Number),
      },
      {
        level: 40,
        upstream: "ontology-manager",
        method: "GET",
        path: "/api/ontology-manager/in/v1/knowledge-networks/kn_unknown",
        status: 404,
        reason: "UPSTREAM_NOT_FOUND",
      },
    ]);
  });
});

describe("upstream failures from any HTTP server", () => {
  let stub: Awaited<ReturnType<typeof startStub>>;
  beforeAll(async () => {
    stub = await startStub();
  });
  afterAll(() => stub.close());

  const platformError = (error_code: string, description: string) => ({
    error_code,
    description,
    solution: "联系管理员",
    error_link: "",
    error_details: "",
  });
  const statuses: [number, ErrorCode, string][] = [
    [400, "invalid_argument", "UPSTREAM_INVALID_ARGUMENT"],
    [401, "unauthenticated", "UPSTREAM_UNAUTHENTICATED"],
    [403, "permission_denied", "UPSTREAM_PERMISSION_DENIED"],
    [404, "not_found", "UPSTREAM_NOT_FOUND"],
    [405, "failed_precondition", "UPSTREAM_REJECTED"],
    [408, "deadline_exceeded", "UPSTREAM_TIMEOUT"],
    [409, "failed_precondition", "UPSTREAM_FAILED_PRECONDITION"],
    [422, "invalid_argument", "UPSTREAM_INVALID_ARGUMENT"],
    [429, "unavailable", "UPSTREAM_RATE_LIMITED"],
    [500, "unavailable", "UPSTREAM_UNAVAILABLE"],
    [502, "unavailable", "UPSTREAM_UNAVAILABLE"],
    [504, "deadline_exceeded", "UPSTREAM_TIMEOUT"],
  ];

  it.each(statuses)(
    "maps HTTP %i to %s (%s), keeping the platform's error_code, its description and solution only for the log",
    async (status, code, reason) => {
      stub.answer(status, platformError("OntologyManager.Test.Failure", "说明文字"));
      const err = await failureOf(backendAt(stub.url).listKnowledgeNetworks(ctx, {}));
      expect({ code: err.code, reason: err.reason }).toEqual({ code, reason });
      expect(err.metadata).toEqual({
        upstream: "ontology-manager",
        upstream_status: String(status),
        error_code: "OntologyManager.Test.Failure",
      });
      const retry =
        code === "unavailable" || code === "deadline_exceeded"
          ? "retrying in a moment may help"
          : "retrying will not help";
      expect(err.message).toMatch(
        new RegExp(`^ontology-manager .+ \\(HTTP ${status}; error_code OntologyManager\\.Test\\.Failure; ${retry}\\)$`),
      );
      for (const said of ["说明文字", "联系管理员"]) {
        expect([err.message, err.hint?.message.en].join(" ")).not.toContain(said);
        expect(err.privateDetail).toContain(said);
      }
    },
  );

  it("keeps a non-JSON error page for the log, telling the caller the status", async () => {
    stub.answer(502, "<html><body>Bad Gateway</body></html>");
    const err = await failureOf(backendAt(stub.url).getOperator(ctx, "op_x"));
    expect(err.code).toBe("unavailable");
    expect(err.message).toBe(
      "operator-market failed (asked for operator op_x; HTTP 502; retrying in a moment may help)",
    );
    expect(err.metadata).toEqual({ upstream: "operator-market", upstream_status: "502" });
    expect(err.privateDetail).toBe(
      "GET /api/agent-operator-integration/internal-v1/operator/market/op_x answered HTTP 502: <html><body>Bad Gateway</body></html>",
    );
  });

  it("reports a JSON answer of the wrong shape as UPSTREAM_BAD_RESPONSE, naming what is wrong, never as an empty result", async () => {
    stub.answer(200, { rows: [] });
    const err = await failureOf(backendAt(stub.url).queryObjects(ctx, KN, "disease", { limit: 1 }));
    expect(err.code).toBe("unavailable");
    expect(err.reason).toBe("UPSTREAM_BAD_RESPONSE");
    expect(err.message).toContain("datas:");
    expect(err.message).not.toContain('{"rows":[]}');
    expect(err.privateDetail).toContain('{"rows":[]}');
  });

  const goodObject = {
    _instance_id: "disease-d1",
    _instance_identity: { disease_id: "d1" },
    _display: "肺炎",
    object_type_id: "disease",
    properties: { disease_name: "肺炎" },
  };
  const goodRelation = {
    relation_type_id: "has_symptom",
    source_object_id: "disease-d1",
    target_object_id: "symptom-s1",
  };
  const entryWith = (objects: unknown, relations: unknown = [goodRelation]) => ({
    entries: [{ objects, relation_paths: [{ relations, length: 1 }], total_count: 1 }],
  });
  it.each([
    [
      "an object without object_type_id",
      entryWith({ d: { ...goodObject, object_type_id: undefined } }),
      "entries.0.objects.d.object_type_id: expected a non-empty string",
    ],
    [
      "an identity that is not an object",
      entryWith({ d: { ...goodObject, _instance_identity: "d1" } }),
      "entries.0.objects.d._instance_identity: expected a JSON object",
    ],
    [
      "properties that are a list",
      entryWith({ d: { ...goodObject, properties: [] } }),
      "entries.0.objects.d.properties: expected a JSON object",
    ],
    [
      "a relation without its target",
      entryWith({ d: goodObject }, [{ ...goodRelation, target_object_id: "" }]),
      "entries.0.relation_paths.0.relations.0.target_object_id: expected a non-empty string",
    ],
    [
      "relations that are not a list",
      entryWith({ d: goodObject }, { r: goodRelation }),
      "entries.0.relation_paths.0.relations: expected an array",
    ],
    ["an entry that is a string", { entries: ["x"] }, "entries.0: expected an object"],
  ])("reports a subgraph answer with %s as UPSTREAM_BAD_RESPONSE naming the place", async (_what, body, where) => {
    stub.answer(200, body);
    const err = await failureOf(backendAt(stub.url).querySubgraph(ctx, KN, { relation_type_paths: [] }));
    expect({ code: err.code, reason: err.reason }).toEqual({ code: "unavailable", reason: "UPSTREAM_BAD_RESPONSE" });
    expect(err.message).toContain(where);
  });

  it("reads a subgraph answer in either spelling, filling in what the platform left out", async () => {
    stub.answer(200, {
      entries: [
        {
          objects: {
            "disease-d1": goodObject,
            "symptom-s1": { id: "symptom-s1", unique_identities: { symptom_id: "s1" }, object_type_id: "symptom" },
          },
          relation_paths: [{ relations: [{ ...goodRelation, relation_type_name: null }] }],
        },
      ],
    });
    const { entries } = await backendAt(stub.url).querySubgraph(ctx, KN, { relation_type_paths: [] });
    expect(entries).toEqual([
      {
        objects: {
          "disease-d1": { ...goodObject, object_type_name: "" },
          "symptom-s1": {
            _instance_id: "symptom-s1",
            _instance_identity: { symptom_id: "s1" },
            _display: null,
            object_type_id: "symptom",
            object_type_name: "",
            properties: {},
          },
        },
        relation_paths: [{ relations: [{ ...goodRelation, relation_type_name: "" }], length: 1 }],
      },
    ]);
  });

  it("reports connection refused as UNAVAILABLE UPSTREAM_UNREACHABLE", async () => {
    const closed = await startStub();
    await closed.close();
    const err = await failureOf(backendAt(closed.url).getKnowledgeNetwork(ctx, KN));
    expect(err.code).toBe("unavailable");
    expect(err.reason).toBe("UPSTREAM_UNREACHABLE");
    expect(err.metadata).toEqual({ upstream: "ontology-manager", network_error: "ECONNREFUSED" });
  });

  it("fails getOperator with FAILED_PRECONDITION naming OPERATOR_MARKET_URL when no operator market is configured", async () => {
    const err = await failureOf(
      backendAt(stub.url, { operatorMarketUrl: undefined }).getOperator(ctx, "op_business_health_score"),
    );
    expect(err.code).toBe("failed_precondition");
    expect(err.message).toContain("OPERATOR_MARKET_URL");
  });
});
