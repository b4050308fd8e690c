import { readFileSync } from "node:fs";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { ToolError } from "../../src/errors/tool-error";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { createHttpBackend } from "../../src/kn/http/http-backend";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { pathIdProblem, segment } from "../../src/upstream/path-ids";
import { miniBundle } from "../fixtures/mini-bundle";
import { testContext } from "../helpers/call-context";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Ids that could leave their URL path segment (".", "..", "/", "%2F", "?",
 * "#", "\", control characters) never reach the platform: the service runs
 * with its HTTP backend against the simulator, whose request log must stay
 * empty while each such id is answered INVALID_ARGUMENT naming the field the
 * caller gave it in (or the x-kn-id header).
 */

const HEADERS = { "x-account-id": "u-ids", "x-account-type": "user" };
const KNTOOLS = "contextloader.kntools.v1.KnowledgeToolsService";
const KNOWLEDGE = "contextloader.knowledge.v1.KnowledgeRetrievalService";
const RESOLVER = "contextloader.resolver.v1.LogicPropertyResolverService";

let sim: Simulator;
let server: TestServer;

beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  server = await startServer({
    ONTOLOGY_MANAGER_URL: sim.url,
    ONTOLOGY_QUERY_URL: sim.url,
    OPERATOR_MARKET_URL: sim.url,
    DATA_RETRIEVAL_URL: sim.url,
    LOG_LEVEL: "silent",
  });
});
afterAll(async () => {
  await server.close();
  await sim.close();
});
afterEach(() => sim.clearRequests());

/** A Connect JSON call: the status, the error code and the fields its BadRequest names. */
async function call(rpc: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.baseUrl}/${rpc}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...HEADERS, ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { code?: string; details?: { type: string; value: string }[] };
  const fields = (answer.details ?? [])
    .filter((d) => d.type === "google.rpc.BadRequest")
    .flatMap((d) => fromBinary(BadRequestSchema, Buffer.from(d.value, "base64")).fieldViolations.map((v) => v.field));
  return { status: res.status, code: answer.code, fields };
}

const path = (nodes: string[], relation: string) => ({
  relation_type_paths: [
    {
      object_types: nodes.map((id) => ({ id })),
      relation_types: [{ relation_type_id: relation }],
    },
  ],
});

const BAD_IDS = ["..", ".", "a/b", "%2F", "..%2F..", "a?mode=export", "x#y", "a\\b", "k\u0000", "a\u001fb", " . "];

const cases: [string, string, (id: string) => unknown, string][] = [
  ["QueryObjectInstances kn_id", `${KNTOOLS}/QueryObjectInstances`, (id) => ({ kn_id: id, ot_id: "disease" }), "kn_id"],
  [
    "QueryObjectInstances ot_id",
    `${KNTOOLS}/QueryObjectInstances`,
    (id) => ({ kn_id: "kn_medical", ot_id: id }),
    "ot_id",
  ],
  ["SearchSchema kn_id", `${KNTOOLS}/SearchSchema`, (id) => ({ query: "疾病", kn_id: id }), "kn_id"],
  ["GetActionInfo at_id", `${KNTOOLS}/GetActionInfo`, (id) => ({ kn_id: "kn_medical", at_id: id }), "at_id"],
  [
    "FindSkills object_type_id (the skills type)",
    `${KNTOOLS}/FindSkills`,
    (id) => ({ kn_id: "kn_medical", object_type_id: id }),
    "object_type_id",
  ],
  [
    "QueryInstanceSubgraph relation_type_id",
    `${KNTOOLS}/QueryInstanceSubgraph`,
    (id) => ({ kn_id: "kn_medical", ...path(["disease", "symptom"], id) }),
    "relation_type_paths[0].relation_types[0].relation_type_id",
  ],
  [
    "QueryInstanceSubgraph object type id",
    `${KNTOOLS}/QueryInstanceSubgraph`,
    (id) => ({ kn_id: "kn_medical", ...path([id, "symptom"], "has_symptom") }),
    "relation_type_paths[0].object_types[0].id",
  ],
  [
    "RetrieveSchema knowledge_network_id",
    `${KNOWLEDGE}/RetrieveSchema`,
    (id) => ({ query: "上气道梗阻有哪些症状", kn_ids: [{ knowledge_network_id: id }] }),
    "kn_ids[0].knowledge_network_id",
  ],
  [
    "RetrieveKeywordContext object_type_id",
    `${KNOWLEDGE}/RetrieveKeywordContext`,
    (id) => ({ query: "上气道梗阻", kn_ids: [{ knowledge_network_id: "kn_medical" }], object_type_id: id }),
    "object_type_id",
  ],
  [
    "KnSearch knowledge_network_id",
    `${KNOWLEDGE}/KnSearch`,
    (id) => ({ query: "上气道梗阻", kn_ids: [{ knowledge_network_id: id }] }),
    "kn_ids[0].knowledge_network_id",
  ],
  [
    "ResolveLogicProperties kn_id",
    `${RESOLVER}/ResolveLogicProperties`,
    (id) => ({
      kn_id: id,
      ot_id: "company",
      query: "企业健康分",
      unique_identities: [{ company_id: "company_000001" }],
      properties: ["business_health_score"],
    }),
    "kn_id",
  ],
  [
    "ResolveLogicProperties ot_id",
    `${RESOLVER}/ResolveLogicProperties`,
    (id) => ({
      kn_id: "kn_medical",
      ot_id: id,
      query: "企业健康分",
      unique_identities: [{ company_id: "company_000001" }],
      properties: ["business_health_score"],
    }),
    "ot_id",
  ],
];

describe("ids that could leave their path segment", () => {
  it.each(cases)(
    "%s: every such id is INVALID_ARGUMENT naming the field, and the platform hears nothing",
    async (_, rpc, body, field) => {
      for (const id of BAD_IDS) {
        const answer = await call(rpc, body(id));
        expect({ id, status: answer.status, code: answer.code }).toEqual({ id, status: 400, code: "invalid_argument" });
        expect(answer.fields, JSON.stringify(id)).toContain(field);
      }
      expect(sim.requests()).toEqual([]);
    },
  );

  it("refuses an x-kn-id header of '..' naming the header, before the ot_id could be used", async () => {
    for (const id of ["..", ".", "a/b", "%2F", "a?b", "x#y"]) {
      const answer = await call(`${KNTOOLS}/QueryObjectInstances`, { ot_id: ".." }, { "x-kn-id": id });
      expect({ id, code: answer.code, fields: answer.fields }).toEqual({
        id,
        code: "invalid_argument",
        fields: ["x-kn-id"],
      });
    }
    expect(sim.requests()).toEqual([]);
  });

  it.each([
    [
      "query_object_instance (ids in the query string)",
      (id: string) =>
        `/api/agent-retrieval/in/v1/kn/query_object_instance?kn_id=kn_medical&ot_id=${encodeURIComponent(id)}`,
      {},
      "ot_id",
    ],
    [
      "query_object_instance kn_id",
      (id: string) =>
        `/api/agent-retrieval/in/v1/kn/query_object_instance?kn_id=${encodeURIComponent(id)}&ot_id=disease`,
      {},
      "kn_id",
    ],
    ["the resolver's route", () => "/api/kn/logic-property-resolver", "ot_id", "ot_id"],
    ["kn_search's route", () => "/kn/kn_search", "kn_ids", "kn_ids[0].knowledge_network_id"],
  ] as [string, (id: string) => string, unknown, string][])(
    "the REST route of %s refuses them too, naming the field",
    async (_, url, put, field) => {
      for (const id of ["..", "a/b", "%2F", "x#y", "k\u0000"]) {
        const body =
          put === "ot_id"
            ? {
                kn_id: "kn_medical",
                ot_id: id,
                query: "q",
                unique_identities: [{ company_id: "c" }],
                properties: ["p"],
              }
            : put === "kn_ids"
              ? { query: "q", kn_ids: [{ knowledge_network_id: id }] }
              : {};
        const res = await fetch(`${server.baseUrl}${url(id)}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...HEADERS },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        expect({ id, status: res.status }).toEqual({ id, status: 400 });
        expect(text).toContain(field);
      }
      expect(sim.requests()).toEqual([]);
    },
  );

  it("still calls the platform for good ids, with each segment as given", async () => {
    const answer = await call(
      `${KNTOOLS}/QueryObjectInstances`,
      { ot_id: "disease", limit: 1 },
      { "x-kn-id": "kn_medical" },
    );
    expect(answer.status).toBe(200);
    expect(sim.requests().map((r) => r.path)).toContain(
      "/api/ontology-query/in/v1/knowledge-networks/kn_medical/object-types/disease",
    );
  });
});

describe("the one rule", () => {
  const idsIn = (value: unknown, keys: ReadonlySet<string>, out: Set<string>): Set<string> => {
    if (Array.isArray(value)) for (const v of value) idsIn(v, keys, out);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        if (keys.has(k) && typeof v === "string" && v !== "") out.add(v);
        idsIn(v, keys, out);
      }
    }
    return out;
  };
  const ID_KEYS = new Set([
    "id",
    "kn_id",
    "object_type_id",
    "source_object_type_id",
    "target_object_type_id",
    "relation_type_id",
    "action_type_id",
  ]);

  it.each([
    [
      "the platform's kn_medical export",
      JSON.parse(readFileSync("test/fixtures/upstream/kn_medical.export.json", "utf8")),
    ],
    ["the sample bundle", JSON.parse(readFileSync("data/kn_medical.bundle.json", "utf8"))],
    ["the test bundle", miniBundle],
  ])("accepts every network and type id of %s", (_, source) => {
    const ids = idsIn(source, ID_KEYS, new Set());
    expect(ids.size).toBeGreaterThan(5);
    expect([...ids].filter((id) => pathIdProblem(id) !== undefined)).toEqual([]);
  });

  it("accepts at most 256 characters", () => {
    expect(pathIdProblem("a".repeat(256))).toBeUndefined();
    expect(pathIdProblem("a".repeat(257))).toEqual({
      en: "must be at most 256 characters",
      zh: "至多 256 个字符",
    });
  });

  it("encodes every segment with one helper that refuses what URL parsers collapse", () => {
    expect(segment("a/b?c#d%")).toBe("a%2Fb%3Fc%23d%25");
    for (const bad of ["", ".", ".."]) {
      expect(() => segment(bad)).toThrow(ToolError);
      try {
        segment(bad);
      } catch (err) {
        expect((err as ToolError).code).toBe("internal");
        expect((err as ToolError).message).not.toContain(bad === "" ? "\u0000" : bad.repeat(3));
      }
    }
  });

  it("keeps an id from the platform's own data ('..' as an operator id) inside its segment too: refused, never sent", async () => {
    const own = await startSimulator({ backend: new EmbeddedBackend([miniBundle], { timeZone: "Asia/Shanghai" }) });
    const backend = createHttpBackend({
      ontologyManagerUrl: own.url,
      ontologyQueryUrl: own.url,
      operatorMarketUrl: own.url,
      timeoutMs: 2000,
      maxSockets: 2,
      spelling: "new",
    });
    try {
      for (const id of ["..", "."]) {
        const err = await backend.getOperator(testContext(), id).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ToolError);
        expect((err as ToolError).reason).toBe("UNSAFE_PATH_SEGMENT");
      }
      expect(own.requests()).toEqual([]);
    } finally {
      backend.close();
      await own.close();
    }
  });
});
