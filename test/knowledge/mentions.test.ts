import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { miniBundle } from "../fixtures/mini-bundle";
import { clientWith } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

// Mention matching through the public API (issue 12): what people type finds the instance they mean,
// on both backends, and what names nothing finds nothing.

const KN = [{ knowledgeNetworkId: "kn_medical" }];
type Client = ReturnType<typeof clientOf>;
const clientOf = (server: TestServer) =>
  clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-mentions" });

async function session(client: Client, kn = KN, query = "疾病有哪些症状和别名"): Promise<string> {
  return (await client.retrieveSchema({ query, knIds: kn, sessionId: randomUUID(), topK: 20, compactFormat: false }))
    .sessionId;
}

let sim: Simulator;
let embedded: TestServer;
let overHttp: TestServer;
beforeAll(async () => {
  sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  [embedded, overHttp] = await Promise.all([
    startServer({ LOG_LEVEL: "silent" }),
    startServer({ ONTOLOGY_MANAGER_URL: sim.url, ONTOLOGY_QUERY_URL: sim.url, LOG_LEVEL: "silent" }),
  ]);
});
afterAll(async () => {
  await Promise.all([embedded?.close(), overHttp?.close()]);
  await sim?.close();
});

describe.each([
  ["the embedded engine", () => embedded],
  ["the platform over HTTP (simulator)", () => overHttp],
])("RetrieveKeywordContext finds what people mean, on %s", (_name, server) => {
  const find = async (query: string, objectTypeId = "disease") => {
    const client = clientOf(server());
    const res = await client.retrieveKeywordContext({
      query,
      knIds: KN,
      sessionId: await session(client),
      objectTypeId,
      compactFormat: false,
    });
    return { instances: res.keywordContext!.instances, warnings: res.warnings };
  };

  it.each([
    // [mention, the instance meant, how it matches]
    ["上气道梗阻", "上、下气道梗阻", "tokens"],
    ["羊角风", "癫痫", "alias"],
    ["急性呼吸窘迫征", "急性呼吸窘迫综合征", "tokens"],
    ["糖尿病视网膜病", "糖尿病视网膜病变", "contains"],
    ["阿尔兹海默病", "阿尔茨海默病", "fuzzy"],
    ["缺铁贫血", "缺铁性贫血", "exact"],
    ["帕金深病", "帕金森病", "fuzzy"],
    ["甲状腺功能亢进", "甲状腺功能亢进症", "contains"],
    ["扩心病", "扩张型心肌病", "abbreviation"],
    ["慢支", "慢性支气管炎", "abbreviation"],
    ["ＩｇＡ肾病", "ＩｇＡ肾病", "exact"],
    ["Ⅱ型糖尿病", "糖尿病（2型）", "alias"],
  ])("%s finds %s (%s)", async (mention, name, type) => {
    const { instances } = await find(mention);
    expect(instances[0], JSON.stringify(instances.map((i) => [i.instanceName, i.matchType, i.score]))).toMatchObject({
      instanceName: name,
      matchType: type,
    });
    expect(instances[0]!.score).toBeGreaterThanOrEqual(0.55);
    expect(instances[0]!.score).toBeLessThanOrEqual(1);
  });

  it("names the alias that matched: the alias relation and the alias type's property", async () => {
    const { instances } = await find("羊角风");
    expect(instances[0]!.matchedFields).toEqual(["has_alias:disease_alias_name"]);
  });

  it.each([
    // [mention, object type, the near name it must not be taken for]
    ["肝纤维化", "disease", "肺纤维化"], // 肝 is in the network's names (肝硬化): another organ, not a typo
    ["三尖瓣狭窄", "disease", "二尖瓣狭窄"],
    ["性腺功能减退症", "disease", "甲状腺功能减退症"], // 性 here is no filler
    ["维生素E", "drugs", "维生素C"], // a letter in a Chinese name designates
    ["右肩放射痛", "symptom", "左肩放射痛"],
  ])("does not take %s (%s) for %s, a name a character away", async (mention, objectTypeId, near) => {
    const { instances } = await find(mention, objectTypeId);
    expect(instances.map((i) => i.instanceName)).not.toContain(near);
  });

  it("still takes a misspelling for the name: a character the network's names never use", async () => {
    const { instances } = await find("类风湿关节灸");
    expect(instances[0]?.instanceName).toBe("类风湿关节炎");
  });

  it.each(["量子纠缠", "今天天气怎么样", "12345", "股票代码"])(
    "finds nothing for %s, and says so and what to try",
    async (mention) => {
      const { instances, warnings } = await find(mention);
      expect(instances).toEqual([]);
      expect(warnings).toEqual([expect.objectContaining({ reason: "NO_MATCHING_INSTANCE", target: "instances" })]);
      expect(warnings[0]!.message).toContain(mention);
    },
  );
});

describe("the other routes match the same way", () => {
  it("POST /tools/knowledge_retrieve finds the alias and refuses nonsense with a warning", async () => {
    const client = clientOf(embedded);
    const sessionId = await session(client);
    const post = (query: string) =>
      fetch(`${embedded.baseUrl}/tools/knowledge_retrieve`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": "u-mentions" },
        body: JSON.stringify({
          query,
          kn_ids: [{ knowledge_network_id: "kn_medical" }],
          session_id: sessionId,
          enable_keyword_context: true,
          object_type_id: "disease",
          compact_format: false,
        }),
      }).then(
        (r) =>
          r.json() as Promise<{
            keyword_context: { instances: { instance_name: string; match_type: string }[] };
            warnings?: { reason: string }[];
          }>,
      );
    const alias = await post("老年痴呆");
    expect(alias.keyword_context.instances[0]).toMatchObject({ instance_name: "阿尔茨海默病", match_type: "alias" });
    const nothing = await post("量子纠缠");
    expect(nothing.keyword_context.instances).toEqual([]);
    expect(nothing.warnings?.map((w) => w.reason)).toEqual(["NO_MATCHING_INSTANCE"]);
  });

  it("KnSearch returns no node for nonsense, and finds an alias's disease", async () => {
    const client = clientOf(embedded);
    const nonsense = await client.knSearch({ query: "量子纠缠", knIds: KN });
    expect(nonsense.nodes).toEqual([]);
    const alias = await client.knSearch({ query: "羊角风", knIds: KN });
    expect(alias.nodes.map((n) => [n.objectTypeId, n.instanceName])).toContainEqual(["disease", "癫痫"]);
  });
});

describe("with an embeddings endpoint", () => {
  let llm: ScriptedLlm;
  let dir: string;
  let withMeaning: TestServer;
  let withoutMeaning: TestServer;
  const MINI = [{ knowledgeNetworkId: "kn_mini" }];
  beforeAll(async () => {
    // A model that knows "airway obstruction" means 上、下气道梗阻 (and nothing else here).
    llm = await startScriptedLlm(undefined, { concepts: [["airway obstruction", "上、下气道梗阻"]] });
    dir = mkdtempSync(join(tmpdir(), "cl-mentions-"));
    writeFileSync(join(dir, "mini.json"), JSON.stringify(miniBundle));
    [withMeaning, withoutMeaning] = await Promise.all([
      startServer({ KN_BUNDLE: join(dir, "mini.json"), EMBEDDINGS_BASE_URL: llm.baseUrl, LOG_LEVEL: "silent" }),
      startServer({ KN_BUNDLE: join(dir, "mini.json"), LOG_LEVEL: "silent" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([withMeaning?.close(), withoutMeaning?.close(), llm?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts what only the platform's vector search found when its name means the mention, and nothing without it", async () => {
    const ask = async (server: TestServer) => {
      const client = clientOf(server);
      const sessionId = await session(client, MINI, "疾病的症状");
      return client.retrieveKeywordContext({
        query: "airway obstruction",
        knIds: MINI,
        sessionId,
        objectTypeId: "disease",
        compactFormat: false,
      });
    };
    const meant = await ask(withMeaning);
    expect(meant.keywordContext!.instances.map((i) => [i.instanceName, i.matchType])).toEqual([
      ["上、下气道梗阻", "vector"],
    ]);
    expect(meant.keywordContext!.instances[0]!.score).toBeGreaterThanOrEqual(0.8);
    const lexical = await ask(withoutMeaning);
    expect(lexical.keywordContext!.instances).toEqual([]);
  });

  it("reaches a Chinese name from its English one through the dictionary, on a network that has no English names", async () => {
    const client = clientOf(withoutMeaning);
    const sessionId = await session(client, MINI, "疾病的症状");
    const find = (query: string) =>
      client.retrieveKeywordContext({ query, knIds: MINI, sessionId, objectTypeId: "disease", compactFormat: false });
    const pneumonia = await find("Pneumonia");
    expect(pneumonia.keywordContext!.instances[0]).toMatchObject({ instanceName: "肺炎", matchType: "alias" });
    // A translation is looked up, not trusted: the dictionary knows "weather", no disease is named 天气.
    expect((await find("weather")).keywordContext!.instances).toEqual([]);
  });

  it("KnSearch looks a keyword not found as written up translated too", async () => {
    const client = clientOf(withoutMeaning);
    const res = await client.knSearch({ query: "Pneumonia", knIds: MINI });
    expect(res.nodes.map((n) => [n.objectTypeId, n.instanceName])).toContainEqual(["disease", "肺炎"]);
  });
});

describe("with an LLM: names proposed for a keyword that matched nothing", () => {
  let llm: ScriptedLlm;
  let dir: string;
  let server: TestServer;
  const MINI = [{ knowledgeNetworkId: "kn_mini" }];
  beforeAll(async () => {
    llm = await startScriptedLlm();
    dir = mkdtempSync(join(tmpdir(), "cl-proposals-"));
    writeFileSync(join(dir, "mini.json"), JSON.stringify(miniBundle));
    server = await startServer({
      KN_BUNDLE: join(dir, "mini.json"),
      LLM_BASE_URL: llm.baseUrl,
      LLM_MODEL: "scripted",
      LLM_TIMEOUT_MS: "500",
      LOG_LEVEL: "silent",
    });
  });
  afterAll(async () => {
    await Promise.all([server?.close(), llm?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });
  const find = async (query: string) => {
    const client = clientOf(server);
    const sessionId = await session(client, MINI, "疾病的症状");
    const res = await client.retrieveKeywordContext({
      query,
      knIds: MINI,
      sessionId,
      objectTypeId: "disease",
      compactFormat: false,
    });
    return { instances: res.keywordContext!.instances, warnings: res.warnings };
  };

  it("looks the proposed names up and scores them like any name, says so, and asks once per keyword", async () => {
    llm.setFallback((req) =>
      req.messages[0]!.content.includes('"PNA"') ? { content: '{"names": ["pneumonia", "肺炎", "大叶性肺炎"]}' } : {},
    );
    const before = llm.requests.length;
    const { instances, warnings } = await find("PNA");
    expect(instances.map((i) => [i.instanceName, i.matchType, i.score])).toEqual([["肺炎", "alias", 0.9]]);
    expect(warnings).toEqual([
      expect.objectContaining({ reason: "MATCHED_THROUGH_PROPOSED_NAMES", target: "instances" }),
    ]);
    expect(warnings[0]!.message).toContain("肺炎");
    expect(llm.requests.at(-1)!.messages[0]!.content).toContain("疾病");
    await find("PNA");
    expect(llm.requests.length - before).toBe(1);
  });

  it("reads a hostile answer within bounds: names too long, not strings or beyond five are left out", async () => {
    // 1.5 MB of over-long names: enough to be refused, small enough to arrive within the proposal's 4 s on a busy machine.
    const long = Array.from({ length: 100 }, (_, i) => `病${"名".repeat(5000)}${i}`);
    llm.setFallback(() => ({
      content: JSON.stringify({ names: [...long, 42, null, { a: 1 }, "肺炎", "a", "b", "c", "d", "e"] }),
    }));
    const { instances, warnings } = await find("HOSTILE-NAMES");
    expect(instances.map((i) => i.instanceName)).toEqual(["肺炎"]);
    const proposed = warnings.find((w) => w.reason === "MATCHED_THROUGH_PROPOSED_NAMES")!;
    expect(proposed.message).toContain("肺炎, a, b, c, d)");
    expect(proposed.message).not.toContain("e)");
    expect(proposed.message.length).toBeLessThan(400);
  });

  it("finds nothing through a proposed name no instance has: the LLM is not trusted", async () => {
    llm.setFallback(() => ({ content: '{"names": ["量子纠缠综合征"]}' }));
    const { instances, warnings } = await find("QES");
    expect(instances).toEqual([]);
    expect(warnings.map((w) => w.reason)).toEqual(["NO_MATCHING_INSTANCE"]);
  });

  it("answers without proposals when the LLM fails, with a warning saying why", async () => {
    llm.setFallback(() => ({ status: 503, body: '{"error":"down"}' }));
    const { instances, warnings } = await find("XYZQ");
    expect(instances).toEqual([]);
    expect(warnings.map((w) => w.target)).toEqual(["instances:llm", "instances"]);
    expect(warnings[0]!.message).toContain("only the keyword itself was looked up");
  });
});
