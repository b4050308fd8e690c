import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import {
  KnowledgeRetrievalService,
  type KnSearchRequestSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

/**
 * KnSearch computed natively (no DATA_RETRIEVAL_URL) over the embedded sample
 * network, through the public RPC: the spec's parameters one by one
 * (kn-search-proxy.zh.md), each shown to change the answer.
 */

const KN = [{ knowledgeNetworkId: "kn_medical" }];
type Req = Omit<MessageInitShape<typeof KnSearchRequestSchema>, "$typeName">;
type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

function clientOf(server: TestServer, account = "u-kn", headers: Record<string, string> = {}): KnowledgeClient {
  return clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": account, ...headers });
}

/** The spec's note when no instance comes back is data-retrieval's Chinese: a caller asking for Chinese gets it. */
const ZH = { "accept-language": "zh" };

/** A request in a session of its own. */
function req(query: string, more: Omit<Req, "query" | "knIds"> = {}): Req {
  return { query, knIds: KN, sessionId: randomUUID(), ...more };
}

describe("KnSearch (native)", () => {
  let server: TestServer;
  let client: KnowledgeClient;
  beforeAll(async () => {
    server = await startServer({ LOG_LEVEL: "silent" });
    client = clientOf(server);
  });
  afterAll(() => server.close());

  it("answers a question with the brief schema and the instance it names, as a node with its name, identity and data properties", async () => {
    const res = await client.knSearch(req("上气道梗阻有哪些症状"));
    expect(res.relationTypes.map((r) => r.conceptId)).toContain("has_symptom");
    const disease = res.objectTypes.find((o) => o.conceptId === "disease")!;
    expect(disease).toMatchObject({ conceptName: "疾病", knId: "kn_medical", primaryKeys: [], displayKey: "" });
    // Brief: properties by name and display name only.
    expect(disease.dataProperties.find((p) => p.name === "disease_name")).toMatchObject({
      displayName: "疾病名称",
      type: "",
      conditionOperations: [],
    });
    const [node, ...rest] = res.nodes;
    expect(rest).toEqual([]);
    expect(node).toMatchObject({
      objectTypeId: "disease",
      objectTypeName: "疾病",
      instanceName: "上、下气道梗阻",
      uniqueIdentities: { disease_id: "disease_004790" },
      knId: "kn_medical",
    });
    expect(node!.finalScore).toBeGreaterThan(0.3);
    expect(node!.finalScore).toBeLessThanOrEqual(1);
    // The display key first; primary keys only in unique_identities.
    expect(Object.keys(node!.dataProperties!)[0]).toBe("disease_name");
    expect(node!.dataProperties).toMatchObject({ age: "儿童", treatment: "手术治疗、药物治疗" });
    expect(node!.dataProperties).not.toHaveProperty("disease_id");
    expect(res.message).toBe("");
    expect(res.actionTypes.every((a) => res.objectTypes.some((o) => o.conceptId === a.objectTypeId))).toBe(true);
  });

  it("generates a session id when none is given and returns it", async () => {
    const res = await client.knSearch({ query: "肺炎", knIds: KN });
    expect(res.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers the full schema with schema_brief=false: property details, logic properties with parameters, keys", async () => {
    const res = await client.knSearch(
      req("药企的经营健康评分", { retrievalConfig: { conceptRetrieval: { schemaBrief: false } }, onlySchema: true }),
    );
    const company = res.objectTypes.find((o) => o.conceptId === "company")!;
    expect(company).toMatchObject({
      conceptType: "object_type",
      primaryKeys: ["company_id"],
      displayKey: "company_name",
    });
    expect(company.dataProperties.find((p) => p.name === "company_name")).toMatchObject({
      type: "varchar",
      conditionOperations: expect.arrayContaining(["==", "like"]),
    });
    const score = company.logicProperties.find((lp) => lp.name === "business_health_score")!;
    expect(score.type).toBe("operator");
    expect(score.dataSource).toMatchObject({ id: "op_business_health_score" });
    expect(score.parameters.map((p) => p["name"])).toEqual(
      expect.arrayContaining(["weights", "focus_categories", "as_of"]),
    );
    expect(res.relationTypes.every((r) => r.conceptType === "relation_type")).toBe(true);
  });

  it("keeps the primary and display keys and the per_object_property_top_k most relevant properties in the brief schema", async () => {
    const trimmed = await client.knSearch(
      req("上气道梗阻的治疗方式", {
        retrievalConfig: { conceptRetrieval: { perObjectPropertyTopK: 3 } },
        onlySchema: true,
      }),
    );
    const disease = trimmed.objectTypes.find((o) => o.conceptId === "disease")!;
    expect(disease.dataProperties.map((p) => p.name)).toEqual(["disease_id", "disease_name", "treatment"]);
    const whole = await client.knSearch(
      req("上气道梗阻的治疗方式", {
        retrievalConfig: { conceptRetrieval: { enablePropertyBrief: false } },
        onlySchema: true,
      }),
    );
    expect(whole.objectTypes.find((o) => o.conceptId === "disease")!.dataProperties).toHaveLength(11);
    // With a global limit the keys alone exceed, every type keeps its keys and nothing else — as with one property per type.
    const names = (r: typeof trimmed) => r.objectTypes.map((o) => [o.conceptId, o.dataProperties.map((p) => p.name)]);
    const global = await client.knSearch(
      req("上气道梗阻的治疗方式", {
        retrievalConfig: { conceptRetrieval: { globalPropertyTopK: 1 } },
        onlySchema: true,
      }),
    );
    const keysOnly = await client.knSearch(
      req("上气道梗阻的治疗方式", {
        retrievalConfig: { conceptRetrieval: { perObjectPropertyTopK: 1 } },
        onlySchema: true,
      }),
    );
    expect(names(global)).toEqual(names(keysOnly));
    expect(names(global)).toContainEqual(["disease", ["disease_id", "disease_name"]]);
  });

  it("adds one sample instance per object type with include_sample_data", async () => {
    const res = await client.knSearch(
      req("上气道梗阻有哪些症状", {
        retrievalConfig: { conceptRetrieval: { includeSampleData: true } },
        onlySchema: true,
      }),
    );
    const symptom = res.objectTypes.find((o) => o.conceptId === "symptom")!;
    expect(symptom.sampleData).toMatchObject({ symptom_id: expect.any(String), symptom_name: expect.any(String) });
    expect(symptom.sampleData).not.toHaveProperty("_instance_id");
  });

  it("narrows a network with at least coarse_min_relation_count relation types to the coarse limits before ranking", async () => {
    const coarse = { coarseMinRelationCount: 1, coarseRelationLimit: 2, coarseObjectLimit: 3 };
    const narrowed = await client.knSearch(
      req("上气道梗阻有哪些症状", { retrievalConfig: { conceptRetrieval: coarse }, onlySchema: true }),
    );
    expect(narrowed.relationTypes.length).toBeLessThanOrEqual(2);
    expect(narrowed.objectTypes.length).toBeLessThanOrEqual(3);
    expect(narrowed.relationTypes.map((r) => r.conceptId)).toContain("has_symptom");
    const off = await client.knSearch(
      req("上气道梗阻有哪些症状", {
        retrievalConfig: { conceptRetrieval: { ...coarse, enableCoarseRecall: false } },
        onlySchema: true,
      }),
    );
    expect(off.relationTypes).toHaveLength(10);
    const below = await client.knSearch(
      req("上气道梗阻有哪些症状", {
        retrievalConfig: { conceptRetrieval: { ...coarse, coarseMinRelationCount: 20 } },
        onlySchema: true,
      }),
    );
    expect(below.relationTypes).toHaveLength(10);
  });

  it("returns top_k relation types and only the object types at their ends", async () => {
    const res = await client.knSearch(
      req("上气道梗阻有哪些症状", { retrievalConfig: { conceptRetrieval: { topK: 1 } }, onlySchema: true }),
    );
    expect(res.relationTypes.map((r) => [r.conceptId, r.sourceObjectTypeId, r.targetObjectTypeId])).toEqual([
      ["has_symptom", "disease", "symptom"],
    ]);
    expect(res.objectTypes.map((o) => o.conceptId).sort()).toEqual(["disease", "symptom"]);
  });

  it("returns concepts and no nodes and no message with only_schema", async () => {
    const res = await client.knSearch(req("上气道梗阻", { onlySchema: true }));
    expect(res.objectTypes.length).toBeGreaterThan(0);
    expect(res.nodes).toEqual([]);
    expect(res.message).toBe("");
  });

  it("treats space-separated words as keywords and lifts an instance named exactly as one to exact_name_match_score", async () => {
    const res = await client.knSearch(req("上气道梗阻 呼吸困难"));
    const byName = Object.fromEntries(res.nodes.map((n) => [n.instanceName, n]));
    expect(byName["呼吸困难"]).toMatchObject({ objectTypeId: "symptom", finalScore: 0.85 });
    expect(byName["上、下气道梗阻"]).toMatchObject({ objectTypeId: "disease" });
    expect(byName["上、下气道梗阻"]!.finalScore).toBeLessThan(0.85);
    expect(res.nodes[0]!.instanceName).toBe("呼吸困难");
    const higher = await client.knSearch(
      req("上气道梗阻 呼吸困难", { retrievalConfig: { semanticInstanceRetrieval: { exactNameMatchScore: 0.97 } } }),
    );
    expect(higher.nodes.find((n) => n.instanceName === "呼吸困难")!.finalScore).toBe(0.97);
  });

  it("says which keywords past the fifth were not searched", async () => {
    const res = await client.knSearch(req("肺炎 咳嗽 发热 头痛 呼吸困难 上气道梗阻"));
    expect(res.warnings).toContainEqual(
      expect.objectContaining({
        target: "query",
        reason: "TOO_MANY_KEYWORDS",
        message: expect.stringContaining("not searched: 上气道梗阻"),
      }),
    );
    const five = await client.knSearch(req("肺炎 咳嗽 发热 头痛 呼吸困难"));
    expect(five.warnings.filter((w) => w.target === "query")).toEqual([]);
  });

  it("leaves empty property values out of nodes, so max_properties_per_instance keeps real ones", async () => {
    const res = await client.knSearch(req("上气道梗阻"));
    expect(res.nodes.length).toBeGreaterThan(0);
    for (const n of res.nodes)
      for (const [k, v] of Object.entries(n.dataProperties ?? {})) expect(v, `${n.instanceName}.${k}`).not.toBeNull();
  });

  it("finds an instance stored in another width, and an exact name scores 1", async () => {
    const res = await client.knSearch(req("IgA肾病"));
    expect(res.nodes.map((n) => [n.objectTypeId, n.instanceName, n.finalScore])).toEqual(
      expect.arrayContaining([
        ["disease", "ＩｇＡ肾病", 1],
        ["alias", "IgA肾病", 1],
      ]),
    );
  });

  it("drops instances below min_direct_relevance, and says why when none is left", async () => {
    const found = await client.knSearch(req("上气道梗阻"));
    // Every word of 上气道梗阻 in order, one character between: a tokens match, 0.6 + 0.3 × 5/6.
    expect(found.nodes.map((n) => [n.instanceName, n.finalScore])).toEqual([["上、下气道梗阻", 0.85]]);
    const strict = await client.knSearch(
      req("上气道梗阻", { retrievalConfig: { semanticInstanceRetrieval: { minDirectRelevance: 0.9 } } }),
    );
    expect(strict.nodes).toEqual([]);
    expect(strict.message).toMatch(/^No related instance data was found: /);
    expect(strict.message).toContain("min_direct_relevance=0.9");
    const inChinese = await clientOf(server, "u-kn", ZH).knSearch(
      req("上气道梗阻", { retrievalConfig: { semanticInstanceRetrieval: { minDirectRelevance: 0.9 } } }),
    );
    expect(inChinese.message).toMatch(/^未查询到相关实例数据：/);
    expect(inChinese.message).toContain("min_direct_relevance=0.9");
    const loose = await client.knSearch(
      req("上气道梗阻", { retrievalConfig: { semanticInstanceRetrieval: { minDirectRelevance: 0.2 } } }),
    );
    expect(loose.nodes.length).toBeGreaterThan(1);
    expect(loose.nodes.some((n) => n.instanceName === "肠梗阻")).toBe(true);
  });

  it("keeps per_type_instance_limit instances per type, best first", async () => {
    const res = await client.knSearch(
      req("肺", { retrievalConfig: { semanticInstanceRetrieval: { perTypeInstanceLimit: 2 } } }),
    );
    const perType = new Map<string, number>();
    for (const n of res.nodes) perType.set(n.objectTypeId, (perType.get(n.objectTypeId) ?? 0) + 1);
    expect(Math.max(...perType.values())).toBe(2);
    const scores = res.nodes.map((n) => n.finalScore);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("drops nodes below global_final_score_ratio of the best final_score, unless the filter is off", async () => {
    const names = (r: { nodes: { instanceName: string }[] }) => r.nodes.map((n) => n.instanceName).sort();
    // 呼吸困难 is named exactly by a keyword (0.85); 上、下气道梗阻 answers the other keyword well (0.85 / 2);
    // 夜间阵发性呼吸困难 only holds one keyword in a longer name (0.775 / 2), under half the best.
    const half = await client.knSearch(
      req("上气道梗阻 呼吸困难", { retrievalConfig: { semanticInstanceRetrieval: { globalFinalScoreRatio: 0.5 } } }),
    );
    expect(names(half)).toEqual(["呼吸困难", "上、下气道梗阻"].sort());
    const off = await client.knSearch(
      req("上气道梗阻 呼吸困难", {
        retrievalConfig: {
          semanticInstanceRetrieval: { globalFinalScoreRatio: 0.5, enableGlobalFinalScoreRatioFilter: false },
        },
      }),
    );
    expect(names(off)).toEqual(["上、下气道梗阻", "呼吸困难", "夜间阵发性呼吸困难"].sort());
  });

  it("limits each node's data properties and their length with property_filter, or returns them whole without it", async () => {
    const cut = await client.knSearch(
      req("上气道梗阻", {
        retrievalConfig: { propertyFilter: { maxPropertiesPerInstance: 2, maxPropertyValueLength: 4 } },
      }),
    );
    expect(cut.nodes[0]!.dataProperties).toEqual({ disease_name: "上、下…", age: "儿童" });
    const whole = await client.knSearch(
      req("上气道梗阻", {
        retrievalConfig: { propertyFilter: { maxPropertiesPerInstance: 2, enablePropertyFilter: false } },
      }),
    );
    expect(Object.keys(whole.nodes[0]!.dataProperties!)).toHaveLength(10);
    expect(whole.nodes[0]!.dataProperties!["disease_name"]).toBe("上、下气道梗阻");
  });

  it("searches no more properties than semantic_field_keep_max, the display key always among them", async () => {
    // treatment holds 手术治疗 for 上、下气道梗阻; with one property searched only the name is.
    const wide = await client.knSearch(
      req("手术治疗", {
        retrievalConfig: { semanticInstanceRetrieval: { semanticFieldKeepMin: 11, semanticFieldKeepMax: 11 } },
      }),
    );
    expect(wide.nodes.some((n) => n.objectTypeId === "disease")).toBe(true);
    const narrow = await client.knSearch(
      req("手术治疗", {
        retrievalConfig: { semanticInstanceRetrieval: { semanticFieldKeepMin: 1, semanticFieldKeepMax: 1 } },
      }),
    );
    expect(narrow.nodes.some((n) => n.objectTypeId === "disease")).toBe(false);
  });

  it("returns only what is new in a later round of a session, or everything with return_union", async () => {
    const sessionId = randomUUID();
    const first = await client.knSearch({ query: "上气道梗阻", knIds: KN, sessionId });
    expect(first.nodes.map((n) => n.instanceName)).toEqual(["上、下气道梗阻"]);
    const again = await client.knSearch({ query: "上气道梗阻", knIds: KN, sessionId });
    expect(again.nodes).toEqual([]);
    expect(again.objectTypes).toEqual([]);
    expect(again.message).toContain("already returned in earlier rounds of this session");
    expect(again.message).toContain("return_union=true");
    const third = await client.knSearch({
      query: "肺炎应该挂哪个科室",
      knIds: KN,
      sessionId,
      retrievalConfig: { conceptRetrieval: { returnUnion: true } },
    });
    // This round's nodes first, then the earlier rounds'.
    expect(third.nodes.map((n) => n.instanceName)).toEqual(["肺炎", "上、下气道梗阻"]);
    expect(third.objectTypes.map((o) => o.conceptId)).toEqual(
      expect.arrayContaining(first.objectTypes.map((o) => o.conceptId)),
    );
  });

  it("keeps each account's session apart", async () => {
    const sessionId = randomUUID();
    await client.knSearch({ query: "上气道梗阻", knIds: KN, sessionId });
    const other = await clientOf(server, "u-other").knSearch({ query: "上气道梗阻", knIds: KN, sessionId });
    expect(other.nodes.map((n) => n.instanceName)).toEqual(["上、下气道梗阻"]);
  });

  it("answers NOT_FOUND for an unknown network, and a warning when another network answered", async () => {
    const err = await failure(client.knSearch({ query: "肺炎", knIds: [{ knowledgeNetworkId: "kn_nope" }] }));
    expect(err.code).toBe(Code.NotFound);
    const res = await client.knSearch({ query: "肺炎", knIds: [...KN, { knowledgeNetworkId: "kn_nope" }] });
    expect(res.warnings).toContainEqual(
      expect.objectContaining({ target: "kn:kn_nope", reason: "KNOWLEDGE_NETWORK_NOT_FOUND" }),
    );
    expect(res.nodes.some((n) => n.instanceName === "肺炎")).toBe(true);
  });

  it("rejects bad parameters with one field violation each, named as in the request", async () => {
    const err = await failure(
      client.knSearch({
        query: " ",
        knIds: [{ knowledgeNetworkId: "" }],
        retrievalConfig: {
          conceptRetrieval: { topK: 0, coarseObjectLimit: 0 },
          semanticInstanceRetrieval: {
            globalFinalScoreRatio: 1.5,
            minDirectRelevance: -0.1,
            semanticFieldKeepMin: 20,
            semanticFieldKeepMax: 10,
            maxSemanticSubConditions: 101,
          },
          propertyFilter: { maxPropertyValueLength: 0 },
        },
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    const fields = err
      .findDetails(BadRequestSchema)[0]!
      .fieldViolations.map((v) => v.field)
      .sort();
    expect(fields).toEqual(
      [
        "query",
        "kn_ids[0].knowledge_network_id",
        "retrieval_config.concept_retrieval.top_k",
        "retrieval_config.concept_retrieval.coarse_object_limit",
        "retrieval_config.semantic_instance_retrieval.global_final_score_ratio",
        "retrieval_config.semantic_instance_retrieval.min_direct_relevance",
        "retrieval_config.semantic_instance_retrieval.semantic_field_keep_min",
        "retrieval_config.semantic_instance_retrieval.max_semantic_sub_conditions",
        "retrieval_config.property_filter.max_property_value_length",
      ].sort(),
    );
    expect(err.rawMessage).toContain("global_final_score_ratio: must be from 0 to 1");
  });

  it("asks for kn_ids when there are none", async () => {
    const err = await failure(client.knSearch({ query: "肺炎" }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0]!.fieldViolations).toEqual([
      expect.objectContaining({ field: "kn_ids" }),
    ]);
  });

  it("refuses skip_llm=false without an LLM, naming LLM_BASE_URL and the parameter", async () => {
    const err = await failure(
      client.knSearch(req("肺炎", { retrievalConfig: { conceptRetrieval: { skipLlm: false } } })),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("LLM_BASE_URL");
    expect(err.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!.field).toBe(
      "retrieval_config.concept_retrieval.skip_llm",
    );
    expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("skip_llm=true");
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_NOT_CONFIGURED");
  });
});

describe("KnSearch (native) with an LLM", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: KnowledgeClient;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted", LOG_LEVEL: "silent" });
    client = clientOf(server);
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });

  const numberOf = (prompt: string, relationId: string) =>
    Number(
      prompt
        .split("\n")
        .find((l) => new RegExp(`^\\d+\\. ${relationId} `).test(l))
        ?.split(".")[0],
    );

  it("lets the LLM choose the relation types with skip_llm=false", async () => {
    llm.setFallback((r) => ({
      content: JSON.stringify({ selected: [numberOf(r.messages[1]!.content, "has_symptom")] }),
    }));
    const before = llm.requests.length;
    const res = await client.knSearch(
      req("上气道梗阻有哪些症状", { retrievalConfig: { conceptRetrieval: { skipLlm: false } } }),
    );
    expect(llm.requests.length).toBe(before + 1);
    expect(llm.requests[before]!.messages[1]!.content).toContain("上气道梗阻有哪些症状");
    expect(res.relationTypes.map((r) => r.conceptId)).toEqual(["has_symptom"]);
    expect(res.objectTypes.map((o) => o.conceptId).sort()).toEqual(["disease", "symptom"]);
    expect(res.nodes.map((n) => n.instanceName)).toEqual(["上、下气道梗阻"]);
  });

  it("says so when the LLM judges nothing relevant: no concepts, no nodes, the reason in message", async () => {
    llm.setFallback(() => ({ content: JSON.stringify({ selected: [] }) }));
    const res = await client.knSearch(
      req("今天天气怎么样", { retrievalConfig: { conceptRetrieval: { skipLlm: false } } }),
    );
    expect(res.objectTypes).toEqual([]);
    expect(res.nodes).toEqual([]);
    expect(res.message).toMatch(
      /^No related instance data was found: No object type related to the query was recalled/,
    );
    expect(res.warnings.map((w) => w.reason)).toContain("LLM_SELECTED_NOTHING");
  });
});
