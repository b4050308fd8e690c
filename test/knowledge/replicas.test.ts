import { randomUUID } from "node:crypto";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * One agent session served by two replicas behind a load balancer: both share
 * the real Redis on this machine, and the session's calls alternate between
 * them. Every test uses a session id of its own, so runs never see each
 * other's state.
 */

const REDIS_URL = "redis://127.0.0.1:6379";
const KN = [{ knowledgeNetworkId: "kn_medical" }];
const QUESTION = "上气道梗阻有哪些症状";
const ACCOUNT = "u-replicas";

type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

function clientOf(server: TestServer): KnowledgeClient {
  return clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": ACCOUNT });
}

const keyword = (client: KnowledgeClient, sessionId: string, sessionType = "") =>
  client.retrieveKeywordContext({
    query: "上气道梗阻",
    knIds: KN,
    sessionId,
    objectTypeId: "disease",
    compactFormat: false,
    sessionType,
  });

let a: TestServer;
let b: TestServer;
let noRedis: TestServer;
let onA: KnowledgeClient;
let onB: KnowledgeClient;
beforeAll(async () => {
  [a, b, noRedis] = await Promise.all([
    startServer({ REDIS_URL, LOG_LEVEL: "silent" }),
    startServer({ REDIS_URL, LOG_LEVEL: "silent" }),
    startServer({ LOG_LEVEL: "silent" }),
  ]);
  onA = clientOf(a);
  onB = clientOf(b);
});
afterAll(() => Promise.all([a.close(), b.close(), noRedis.close()]));

describe("a session in Redis, its calls alternating between two replicas", () => {
  it("finds on B the schema recalled on A, and A then lists what B returned as already returned", async () => {
    const sessionId = randomUUID();
    await onA.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 5 });

    const first = await keyword(onB, sessionId);
    const [found] = first.keywordContext!.instances;
    expect(found).toMatchObject({
      instanceId: "disease_004790",
      instanceName: "上、下气道梗阻",
      alreadyReturned: false,
    });
    expect(found?.properties).toMatchObject({
      disease_id: "disease_004790",
      disease_name: "上、下气道梗阻",
      age: "儿童",
    });
    expect(found?.neighbors.filter((n) => n.relationTypeId === "has_symptom").map((n) => n.instanceName)).toEqual([
      "呼吸困难",
      "咳嗽",
      "吞咽困难",
      "气喘",
      "流涎",
    ]);

    const again = await keyword(onA, sessionId);
    const [repeated] = again.keywordContext!.instances;
    expect(repeated).toMatchObject({
      instanceId: "disease_004790",
      instanceName: "上、下气道梗阻",
      alreadyReturned: true,
    });
    expect(repeated?.properties).toBeUndefined();
    expect(repeated?.neighbors.every((n) => n.alreadyReturned && n.properties === undefined)).toBe(true);
  });

  it("numbers the schema rounds of one session across replicas", async () => {
    const sessionId = randomUUID();
    const first = await onA.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 2 });
    const second = await onB.retrieveSchema({ query: "哪些药企生产注射剂药品", knIds: KN, sessionId, topK: 2 });
    expect([first.round, second.round]).toEqual([1, 2]);
  });

  it("gives the instance in full to exactly one of two concurrent calls on A and B", async () => {
    const sessionId = randomUUID();
    await onA.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 5 });

    const answers = await Promise.all([keyword(onA, sessionId), keyword(onB, sessionId)]);
    const instances = answers.map((r) => r.keywordContext!.instances[0]!);
    expect(instances.map((i) => i.instanceId)).toEqual(["disease_004790", "disease_004790"]);
    expect(instances.filter((i) => !i.alreadyReturned)).toHaveLength(1);
    expect(instances.filter((i) => i.properties !== undefined)).toHaveLength(1);
    // Each neighbour too: in full in exactly one of the two answers.
    const full = instances.flatMap((i) =>
      i.neighbors.filter((n) => !n.alreadyReturned).map((n) => `${n.relationTypeId}/${n.instanceId}`),
    );
    expect(full).toHaveLength(new Set(full).size);
    expect(new Set(full)).toEqual(new Set(instances[0]!.neighbors.map((n) => `${n.relationTypeId}/${n.instanceId}`)));
  });
});

describe("choosing the session store", () => {
  it("keeps an in_memory session on its replica: B does not see the schema A stored", async () => {
    const sessionId = randomUUID();
    await onA.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 5, sessionType: "in_memory" });
    expect((await keyword(onA, sessionId, "in_memory")).keywordContext!.instances[0]?.instanceId).toBe(
      "disease_004790",
    );

    const err = await failure(keyword(onB, sessionId, "in_memory"));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SCHEMA_NOT_IN_SESSION");
    expect(err.rawMessage).toBe("this session has no recalled schema: recall it with RetrieveSchema first");
  });

  it("uses Redis when session_type is left empty and REDIS_URL is set, so an explicit redis call finds the session", async () => {
    const sessionId = randomUUID();
    await onA.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 5 });
    expect((await keyword(onB, sessionId, "redis")).keywordContext!.instances[0]?.instanceId).toBe("disease_004790");
  });

  it("refuses session_type redis on a server without REDIS_URL, naming the setting", async () => {
    const err = await failure(
      clientOf(noRedis).retrieveSchema({ query: QUESTION, knIds: KN, sessionId: randomUUID(), sessionType: "redis" }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("REDIS_NOT_CONFIGURED");
    expect(err.rawMessage).toContain("REDIS_URL");
  });
});
