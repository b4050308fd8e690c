import { randomUUID } from "node:crypto";
import { type MessageInitShape, toJson } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  KnowledgeRetrievalService,
  type KnSearchRequestSchema,
  KnSearchResponseSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * One kn_search contract, two modes: computed natively over the embedded
 * sample network, and forwarded to data-retrieval (the simulator serving the
 * same network at /tools/kn_search). Every answer — concepts, nodes and their
 * scores, message, warnings — must be the same, round after round.
 */

type Req = Omit<MessageInitShape<typeof KnSearchRequestSchema>, "$typeName">;
const KN = [{ knowledgeNetworkId: "kn_medical" }];

let sim: Simulator;
let native: TestServer;
let proxied: TestServer;
let clients: { native: Client<typeof KnowledgeRetrievalService>; proxied: Client<typeof KnowledgeRetrievalService> };

function clientOf(server: TestServer) {
  return clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-contract" });
}

beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  [native, proxied] = await Promise.all([
    startServer({ LOG_LEVEL: "silent" }),
    startServer({ DATA_RETRIEVAL_URL: sim.url, LOG_LEVEL: "silent" }),
  ]);
  clients = { native: clientOf(native), proxied: clientOf(proxied) };
});
afterAll(async () => {
  await Promise.all([native.close(), proxied.close()]);
  await sim.close();
});

/** Both modes' answers to the same request, as JSON. */
async function both(req: Req) {
  const [a, b] = await Promise.all([clients.native.knSearch(req), clients.proxied.knSearch(req)]);
  const json = (r: typeof a) => toJson(KnSearchResponseSchema, r, { useProtoFieldName: true });
  return { native: json(a), proxied: json(b), raw: a };
}

const cases: [string, Omit<Req, "knIds" | "sessionId">][] = [
  ["a question, brief schema", { query: "上气道梗阻有哪些症状" }],
  ["keywords separated by spaces", { query: "上气道梗阻 呼吸困难" }],
  ["an instance name in another width", { query: "IgA肾病" }],
  [
    "full schema with sample data, tight instance limits",
    {
      query: "哪些药企生产注射剂药品",
      retrievalConfig: {
        conceptRetrieval: { schemaBrief: false, includeSampleData: true, topK: 5 },
        semanticInstanceRetrieval: { perTypeInstanceLimit: 2, minDirectRelevance: 0.5 },
        propertyFilter: { maxPropertiesPerInstance: 3, maxPropertyValueLength: 6 },
      },
    },
  ],
  [
    "coarse recall and property brief",
    {
      query: "肺炎应该挂哪个科室",
      retrievalConfig: {
        conceptRetrieval: { coarseMinRelationCount: 1, coarseRelationLimit: 4, perObjectPropertyTopK: 2 },
      },
    },
  ],
  ["only_schema", { query: "上气道梗阻", onlySchema: true }],
  [
    "nothing found",
    { query: "上气道梗阻", retrievalConfig: { semanticInstanceRetrieval: { minDirectRelevance: 0.99 } } },
  ],
];

describe("kn_search native and proxied to data-retrieval give the same answer", () => {
  it.each(cases)("%s", async (_, req) => {
    const { native: a, proxied: b, raw } = await both({ ...req, knIds: KN, sessionId: randomUUID() });
    expect(b).toEqual(a);
    // The comparison means something: there are concepts, and (unless only_schema) nodes or a message.
    expect(raw.objectTypes.length).toBeGreaterThan(0);
    if (!req.onlySchema) expect(raw.nodes.length > 0 || raw.message !== "").toBe(true);
  });

  it("fail alike: an unknown network is NOT_FOUND on kn_ids, a bad setting INVALID_ARGUMENT on its field", async () => {
    const errorOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    const cases: [Req, Code][] = [
      [{ query: "肺炎", knIds: [{ knowledgeNetworkId: "kn_nope" }] }, Code.NotFound],
      [
        { query: "肺炎", knIds: KN, retrievalConfig: { semanticInstanceRetrieval: { globalFinalScoreRatio: 2 } } },
        Code.InvalidArgument,
      ],
    ];
    for (const [req, code] of cases) {
      const [a, b] = await Promise.all([errorOf(clients.native.knSearch(req)), errorOf(clients.proxied.knSearch(req))]);
      expect([a?.code, b?.code]).toEqual([code, code]);
    }
  });

  it("round after round of one session, with and without return_union", async () => {
    const sessionId = randomUUID();
    const rounds: Omit<Req, "knIds" | "sessionId">[] = [
      { query: "上气道梗阻" },
      { query: "上气道梗阻" },
      { query: "肺炎应该挂哪个科室" },
      { query: "上气道梗阻 呼吸困难", retrievalConfig: { conceptRetrieval: { returnUnion: true } } },
    ];
    for (const [i, round] of rounds.entries()) {
      const { native: a, proxied: b } = await both({ ...round, knIds: KN, sessionId });
      expect(b, `round ${i + 1}`).toEqual(a);
    }
  });
});
