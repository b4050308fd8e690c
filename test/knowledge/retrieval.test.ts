import { randomUUID } from "node:crypto";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

const KN = [{ knowledgeNetworkId: "kn_medical" }];
const QUESTION = "上气道梗阻有哪些症状";

function clientOf(
  server: TestServer,
  account = "u-kr",
  headers: Record<string, string> = {},
): Client<typeof KnowledgeRetrievalService> {
  return clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": account, ...headers });
}

describe("RetrieveSchema (step one)", () => {
  let server: TestServer;
  let client: Client<typeof KnowledgeRetrievalService>;
  beforeAll(async () => {
    server = await startServer();
    client = clientOf(server);
  });
  afterAll(() => server.close());

  it("ranks has_symptom first for a question about symptoms and keeps the types at its ends, with scores and the method", async () => {
    const res = await client.retrieveSchema({ query: QUESTION, knIds: KN, topK: 5, compactFormat: false });
    expect(res.rankingMethod).toBe("embedding_lexical");
    expect(res.relationTypes).toHaveLength(5);
    expect(res.relationTypes[0]).toMatchObject({
      conceptId: "has_symptom",
      sourceObjectTypeId: "disease",
      targetObjectTypeId: "symptom",
      knId: "kn_medical",
    });
    const scores = res.relationTypes.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBeGreaterThan(scores[1]!);
    const ends = new Set(res.relationTypes.flatMap((r) => [r.sourceObjectTypeId, r.targetObjectTypeId]));
    expect(new Set(res.objectTypes.map((o) => o.conceptId))).toEqual(ends);
    const disease = res.objectTypes.find((o) => o.conceptId === "disease")!;
    expect(disease).toMatchObject({
      conceptType: "object_type",
      conceptName: "疾病",
      primaryKeyField: "disease_id",
      displayKey: "disease_name",
    });
    expect(disease.properties.find((p) => p.name === "disease_name")?.conditionOperations).toEqual([
      "==",
      "!=",
      "like",
      "not_like",
      "in",
      "not_in",
    ]);
  });

  it("answers compact YAML by default and generates a session id when none is given", async () => {
    const res = await client.retrieveSchema({ query: QUESTION, knIds: KN, topK: 3 });
    expect(res.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.round).toBe(1);
    expect(res.objectTypes).toEqual([]);
    const objects = parse(res.objects) as {
      objects: Record<string, { name: string; primary_keys: string[]; properties: { name: string }[] }>;
    };
    const relations = parse(res.relations) as {
      relations: Record<string, { name: string; score: number; from: string; to: string }>;
    };
    expect(relations.relations["has_symptom"]).toEqual({
      name: "疾病症状",
      score: expect.any(Number),
      from: "disease",
      to: "symptom",
    });
    expect(relations.relations["has_symptom"]!.score).toBeGreaterThan(0);
    expect(objects.objects["disease"]?.primary_keys).toEqual(["disease_id"]);
    expect(objects.objects["symptom"]?.properties.map((p) => p.name)).toContain("symptom_name");
  });

  it("returns only what is new in a later round, or the union of all rounds with return_union", async () => {
    const sessionId = randomUUID();
    const first = await client.retrieveSchema({ query: QUESTION, knIds: KN, sessionId, topK: 2, compactFormat: false });
    const second = await client.retrieveSchema({
      query: "哪些药企生产注射剂药品",
      knIds: KN,
      sessionId,
      topK: 2,
      compactFormat: false,
    });
    expect(second.round).toBe(2);
    const firstIds = first.relationTypes.map((r) => r.conceptId);
    expect(second.relationTypes.every((r) => !firstIds.includes(r.conceptId))).toBe(true);
    const third = await client.retrieveSchema({
      query: QUESTION,
      knIds: KN,
      sessionId,
      topK: 2,
      compactFormat: false,
      returnUnion: true,
    });
    expect(third.round).toBe(3);
    const union = new Set(third.relationTypes.map((r) => r.conceptId));
    for (const id of [...firstIds, ...second.relationTypes.map((r) => r.conceptId)]) expect(union.has(id)).toBe(true);
  });

  it("rejects bad parameters with field violations", async () => {
    const err = await failure(client.retrieveSchema({ query: " ", knIds: [], topK: 0 }));
    expect(err.code).toBe(Code.InvalidArgument);
    const fields = err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field);
    expect(fields).toEqual(expect.arrayContaining(["query", "kn_ids", "top_k"]));
  });

  it("answers NOT_FOUND for an unknown network, and a warning when another network answered", async () => {
    const err = await failure(client.retrieveSchema({ query: QUESTION, knIds: [{ knowledgeNetworkId: "kn_nope" }] }));
    expect(err.code).toBe(Code.NotFound);
    const res = await client.retrieveSchema({ query: QUESTION, knIds: [...KN, { knowledgeNetworkId: "kn_nope" }] });
    expect(res.warnings).toEqual([
      expect.objectContaining({ target: "kn:kn_nope", reason: "KNOWLEDGE_NETWORK_NOT_FOUND" }),
    ]);
    expect(res.relations).toContain("has_symptom");
  });

  it("refuses skip_llm=false without an LLM, naming the setting and suggesting skip_llm=true", async () => {
    const err = await failure(client.retrieveSchema({ query: QUESTION, knIds: KN, skipLlm: false }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("LLM_BASE_URL");
    expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("skip_llm=true");
  });
});

describe("RetrieveSchema with an LLM and a reranker", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: Client<typeof KnowledgeRetrievalService>;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted", RERANKER_URL: llm.rerankUrl });
    client = clientOf(server);
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });

  /** The number of a relation type in the list the LLM was shown. */
  const numberOf = (prompt: string, relationId: string) => {
    const line = prompt.split("\n").find((l) => new RegExp(`^\\d+\\. ${relationId} `).test(l));
    return Number(line?.split(".")[0]);
  };

  it("lets the LLM choose from a numbered list, with the session's earlier questions as history", async () => {
    const sessionId = randomUUID();
    await client.retrieveSchema({ query: "肺炎应该挂哪个科室", knIds: KN, sessionId, topK: 2 });
    llm.setFallback((req) => ({
      content: JSON.stringify({ selected: [numberOf(req.messages[1]!.content, "has_symptom")], reason: "symptoms" }),
    }));
    const before = llm.requests.length;
    const res = await client.retrieveSchema({
      query: QUESTION,
      knIds: KN,
      sessionId,
      skipLlm: false,
      topK: 3,
      compactFormat: false,
      returnUnion: true,
    });
    expect(res.rankingMethod).toBe("llm");
    const prompt = llm.requests[before]!.messages[1]!.content;
    expect(prompt).toContain("肺炎应该挂哪个科室");
    expect(prompt).toMatch(/\d+\. has_symptom 疾病症状: 疾病\(disease\) → 症状\(symptom\)/);
    expect(llm.requests[before]!.response_format).toEqual({ type: "json_object" });
    const chosen = res.relationTypes.filter((r) => r.score > 0 && r.conceptId === "has_symptom");
    expect(chosen).toHaveLength(1);
  });

  it("repairs an unusable answer once, then fails with the next step", async () => {
    llm.queue({ content: '{"selected": [9999]}' }, { content: "I think has_symptom" });
    const err = await failure(client.retrieveSchema({ query: QUESTION, knIds: KN, skipLlm: false }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_BAD_ANSWER");
    expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("skip_llm=true");
    const repair = llm.requests[llm.requests.length - 1]!.messages.at(-1)!.content;
    expect(repair).toContain("9999");
  });

  it("ranks with the reranker when one is configured", async () => {
    const res = await client.retrieveSchema({ query: QUESTION, knIds: KN, topK: 3, compactFormat: false });
    expect(res.rankingMethod).toBe("reranker");
    expect(res.relationTypes[0]?.score).toBeGreaterThan(0);
  });
});

describe("RetrieveKeywordContext (step two)", () => {
  let server: TestServer;
  let client: Client<typeof KnowledgeRetrievalService>;
  let sessionId: string;
  beforeAll(async () => {
    server = await startServer();
    client = clientOf(server);
    sessionId = await freshSession();
  });
  afterAll(() => server.close());

  async function freshSession(): Promise<string> {
    const id = randomUUID();
    await client.retrieveSchema({ query: QUESTION, knIds: KN, sessionId: id, topK: 10 });
    return id;
  }

  it("finds 上、下气道梗阻 for the keyword 上气道梗阻, with its symptoms as outgoing neighbours", async () => {
    const res = await client.retrieveKeywordContext({
      query: "上气道梗阻",
      sessionId,
      objectTypeId: "disease",
      compactFormat: false,
    });
    const kc = res.keywordContext!;
    expect(kc.keyword).toBe("上气道梗阻");
    expect(kc.matchedField).toBe("disease_name");
    const [hit] = kc.instances;
    expect(hit).toMatchObject({
      instanceId: "disease_004790",
      instanceName: "上、下气道梗阻",
      matchType: "tokens",
      matchedFields: ["disease_name"],
      alreadyReturned: false,
    });
    expect(hit!.properties).toMatchObject({
      disease_id: "disease_004790",
      age: "儿童",
      treatment: "手术治疗、药物治疗",
    });
    const symptoms = hit!.neighbors.filter((n) => n.relationTypeId === "has_symptom");
    expect(symptoms.map((n) => n.instanceId).sort()).toEqual([
      "symptom_000020",
      "symptom_000028",
      "symptom_000547",
      "symptom_000660",
      "symptom_000837",
    ]);
    expect(
      symptoms.every(
        (n) =>
          n.relationDirection === "outgoing" &&
          n.relationTypeName === "疾病症状" &&
          n.properties?.["symptom_name"] !== undefined,
      ),
    ).toBe(true);
    expect(kc.statistics).toMatchObject({ totalInstances: 1, matchedFields: ["disease_name"] });
    expect(kc.statistics!.totalNeighbors).toBe(hit!.neighbors.length);
  });

  it("returns only the exact match when one exists", async () => {
    const s = await freshSession();
    const res = await client.retrieveKeywordContext({
      query: "肺炎",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(res.keywordContext!.instances.map((i) => [i.instanceName, i.matchType])).toEqual([["肺炎", "exact"]]);
  });

  it("ranks contains-matches by how much of the name the keyword covers, at most 10", async () => {
    const s = await freshSession();
    const res = await client.retrieveKeywordContext({
      query: "肺",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    const kc = res.keywordContext!;
    expect(kc.instances.length).toBe(10);
    expect(kc.statistics!.totalInstances).toBeGreaterThan(10);
    const contains = kc.instances.filter((i) => i.matchType === "contains");
    expect(contains.length).toBeGreaterThan(5);
    expect(contains.every((i) => i.instanceName.includes("肺"))).toBe(true);
    // Best first: the score never rises down the list, and the shortest name holding 肺 comes first.
    const scores = kc.instances.map((i) => i.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect([...contains[0]!.instanceName].length).toBe(Math.min(...contains.map((i) => [...i.instanceName].length)));
  });

  it("compares full-width and half-width forms alike", async () => {
    const s = await freshSession();
    const res = await client.retrieveKeywordContext({
      query: "IgA肾病",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(res.keywordContext!.instances[0]).toMatchObject({ instanceName: "ＩｇＡ肾病", matchType: "exact" });
  });

  it("walks a self-relation both ways: 呼吸衰竭 is a complication of 肺炎 and of 上、下气道梗阻", async () => {
    const s = await freshSession();
    const res = await client.retrieveKeywordContext({
      query: "呼吸衰竭",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    const incoming = res.keywordContext!.instances[0]!.neighbors.filter(
      (n) => n.relationTypeId === "has_complication" && n.relationDirection === "incoming",
    );
    expect(incoming.map((n) => n.instanceName).sort()).toEqual(["上、下气道梗阻", "肺炎"].sort());
  });

  it("lists what the session already returned in full by id and name only", async () => {
    const s = await freshSession();
    const first = await client.retrieveKeywordContext({
      query: "上气道梗阻",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    expect(first.keywordContext!.instances[0]!.alreadyReturned).toBe(false);
    const again = await client.retrieveKeywordContext({
      query: "上气道梗阻",
      sessionId: s,
      objectTypeId: "disease",
      compactFormat: false,
    });
    const hit = again.keywordContext!.instances[0]!;
    expect(hit).toMatchObject({ instanceId: "disease_004790", instanceName: "上、下气道梗阻", alreadyReturned: true });
    expect(hit.properties).toBeUndefined();
    expect(hit.neighbors.every((n) => n.alreadyReturned && n.properties === undefined)).toBe(true);
  });

  it("gives an instance in full to exactly one of two concurrent calls of a session", async () => {
    const s = await freshSession();
    const calls = await Promise.all(
      Array.from({ length: 4 }, () =>
        client.retrieveKeywordContext({
          query: "上气道梗阻",
          sessionId: s,
          objectTypeId: "disease",
          compactFormat: false,
        }),
      ),
    );
    const full = calls.filter((c) => !c.keywordContext!.instances[0]!.alreadyReturned);
    expect(full).toHaveLength(1);
  });

  it("answers compact YAML by default", async () => {
    const s = await freshSession();
    const res = await client.retrieveKeywordContext({ query: "上气道梗阻", sessionId: s, objectTypeId: "disease" });
    const kc = parse(res.keywordContextText) as {
      instances: { instance_id: string; neighbors: Record<string, string[]> }[];
    };
    expect(kc.instances[0]!.instance_id).toBe("disease_004790");
    expect(kc.instances[0]!.neighbors["has_symptom 疾病症状 (outgoing)"]).toContain(
      "呼吸困难 [symptom:symptom_000020]",
    );
  });

  describe("errors, in the spec's order and words", () => {
    /** The spec's words are Chinese: a caller that asks for Chinese gets them. */
    const zh = () => clientOf(server, "u-kr", { "accept-language": "zh" });

    it("asks for session_id first", async () => {
      const err = await failure(zh().retrieveKeywordContext({ query: "上气道梗阻", objectTypeId: "disease" }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe("session_id参数必须提供，用于存储和检索schema信息");
      expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field).toBe("session_id");
      const en = await failure(client.retrieveKeywordContext({ query: "上气道梗阻", objectTypeId: "disease" }));
      expect(en.rawMessage).toBe("session_id is required: it is where the recalled schema is stored and looked up");
    });

    it("says the schema is missing, and to call RetrieveSchema first, before asking for object_type_id", async () => {
      const err = await failure(zh().retrieveKeywordContext({ query: "上气道梗阻", sessionId: randomUUID() }));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toBe("Schema信息不存在，请先调用RetrieveSchema召回schema");
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SCHEMA_NOT_IN_SESSION");
      expect(err.findDetails(AgentHintSchema)[0]?.nextRpc).toBe(
        "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema",
      );
    });

    it("asks for object_type_id, suggesting the types of the session's schema", async () => {
      const err = await failure(zh().retrieveKeywordContext({ query: "上气道梗阻", sessionId }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toBe("object_type_id参数必须提供，用于指定关键词所属的对象类型");
      const hint = err.findDetails(AgentHintSchema)[0]!;
      expect(hint.message).toBe("请提供object_type_id参数（本会话的对象类型之一），例如：object_type_id='person'");
      expect(hint.validValues).toContain("disease");
    });

    it("refuses an object type the session's schema does not contain, listing the valid ones", async () => {
      const err = await failure(
        client.retrieveKeywordContext({ query: "上气道梗阻", sessionId, objectTypeId: "person" }),
      );
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("OBJECT_TYPE_NOT_IN_SCHEMA");
      expect(err.findDetails(AgentHintSchema)[0]?.validValues).toEqual(expect.arrayContaining(["disease", "symptom"]));
    });

    it("keeps sessions of different accounts apart", async () => {
      const other = clientOf(server, "u-someone-else");
      const err = await failure(
        other.retrieveKeywordContext({ query: "上气道梗阻", sessionId, objectTypeId: "disease" }),
      );
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SCHEMA_NOT_IN_SESSION");
    });
  });
});
