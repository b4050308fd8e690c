import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

// Near-miss negatives (issue 22): a mention that is another instance's name but for a character or
// two names a different thing and finds nothing of it, while a typo of a name still finds the name.
// What tells them apart is the network's own names and the dictionaries (jieba's, CC-CEDICT), never
// a list of mentions: matching/near-names.ts.

const KN = [{ knowledgeNetworkId: "kn_medical" }];

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
])("near names on %s", (_name, server) => {
  const find = async (query: string, objectTypeId: string) => {
    const client = clientWith(KnowledgeRetrievalService, server().baseUrl, { "x-account-id": "u-near-miss" });
    const { sessionId } = await client.retrieveSchema({
      query: "疾病有哪些症状和别名",
      knIds: KN,
      sessionId: randomUUID(),
      topK: 20,
      compactFormat: false,
    });
    const res = await client.retrieveKeywordContext({
      query,
      knIds: KN,
      sessionId,
      objectTypeId,
      compactFormat: false,
    });
    return res.keywordContext!.instances.map((i) => ({ name: i.instanceName, type: i.matchType, score: i.score }));
  };

  it.each([
    // [mention, object type, the near name it is not, why]
    // 臀 replaces the whole word 肩 (jieba: 左|肩|放射|痛), though no name of the network uses 臀.
    ["左臀放射痛", "symptom", "左肩放射痛"],
    // 听 replaces the whole word 面 of 面|神经炎: the acoustic nerve, not the facial one.
    ["听神经炎", "disease", "面神经炎"],
    // CC-CEDICT: 丁型肝炎 is hepatitis D, 乙型肝炎 (an alias of 病毒性肝炎（乙型）) hepatitis B.
    ["丁型肝炎", "disease", "病毒性肝炎（乙型）"],
    // 左 for 右 replaces a whole word too: the other side.
    ["左上腹痛", "symptom", "右上腹痛"],
  ])("does not take %s (%s) for %s, a name a character or two away", async (mention, objectTypeId, near) => {
    const found = await find(mention, objectTypeId);
    expect(
      found.map((f) => f.name),
      JSON.stringify(found),
    ).not.toContain(near);
  });

  it.each([
    // [typo, object type, the name meant]
    // A same-sounding character (机 for 肌, jī) that happens to make a word, 心机: still a typo.
    ["心机梗死", "disease", "心肌梗死"],
    // A look-alike (狠 for 狼) that leaves no word in its place, and that no name of the network uses.
    ["系统性红斑狠疮", "disease", "系统性红斑狼疮"],
    ["偏头通", "disease", "偏头痛"],
    ["心肌埂死", "disease", "心肌梗死"],
  ])("still takes the typo %s (%s) for %s", async (mention, objectTypeId, name) => {
    const found = await find(mention, objectTypeId);
    expect(found[0], JSON.stringify(found)).toMatchObject({ name });
    expect(found[0]!.score).toBeGreaterThanOrEqual(0.55);
  });

  it.each([
    // [mention, object type, the name meant, the near name beside it]
    // A shorter form of a name, though 乙型肝炎 is a character away and another name.
    ["甲型肝炎", "disease", "甲型病毒性肝炎"],
    // A longer, more specific form of a name (it holds 腹痛 whole), though 右上腹痛 is a character away.
    ["右下腹痛", "symptom", "腹痛"],
  ])("still takes %s (%s) for %s, beside a near name that is another", async (mention, objectTypeId, name) => {
    const found = await find(mention, objectTypeId);
    expect(found[0], JSON.stringify(found)).toMatchObject({ name });
  });
});
