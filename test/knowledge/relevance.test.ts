import { describe, expect, it } from "vitest";
import { type Language, verbatim } from "../../src/errors/text";
import { ToolError } from "../../src/errors/tool-error";
import type { KnowledgeNetwork, ObjectType } from "../../src/kn/types";
import { coarseNetwork } from "../../src/knowledge/kn-search/coarse-recall";
import { type ConceptRetrievalConfig, conceptRetrievalInput } from "../../src/knowledge/kn-search/input";
import { DescriptionCache } from "../../src/knowledge/relevance/descriptions";
import { lexicalRelevance } from "../../src/knowledge/relevance/lexical";
import { type Candidate, rankWithoutLlm } from "../../src/knowledge/relevance/rank";
import { localEmbedder } from "../../src/upstream/embeddings";
import type { Reranker } from "../../src/upstream/reranker";
import { testContext } from "../helpers/call-context";

// The scorers that decide which schema a question sees. English questions are segmented at
// spaces, so their lexical scores are computed by hand below; Chinese questions go through
// jieba and the local embedder hashes n-grams, so those rows assert order and ranges only.

const descriptions = new DescriptionCache(localEmbedder);

describe("lexicalRelevance", () => {
  // "drug dosage": the meaningful words are drug (4 letters) and dosage (6), 10 in all.
  const rows: { name: string; question: string; description: string; expected: number }[] = [
    { name: "every word of the question", question: "drug dosage", description: "Dosage of a drug", expected: 1 },
    // dosage alone holds 6 of 10 letters; a count of words would say 1/2.
    { name: "the longer word weighs more", question: "drug dosage", description: "dosage form", expected: 0.6 },
    { name: "the shorter word weighs less", question: "drug dosage", description: "drug name", expected: 0.4 },
    // "Contains", not "has the token": drug is found inside drugstore (4 of 10).
    {
      name: "a word found inside a longer word counts",
      question: "drug dosage",
      description: "drugstore hours",
      expected: 0.4,
    },
    // The description is normalised too: full-width upper case ＤＯＳＡＧＥ is dosage.
    { name: "full-width description normalised", question: "drug dosage", description: "ＤＯＳＡＧＥ", expected: 0.6 },
    { name: "an empty description", question: "drug dosage", description: "", expected: 0 },
    // what, is, the are stop words: the only meaningful word is dosage, so a description holding
    // it holds everything, although it has none of the question's other words.
    {
      name: "stop words of the question do not weigh",
      question: "what is the dosage",
      description: "dosage",
      expected: 1,
    },
    // ...and a description holding only the stop words scores 0 (counting them would give 0.7).
    {
      name: "stop words in common do not count",
      question: "what is the dosage",
      description: "what is the",
      expected: 0,
    },
    // A question of stop words only has no meaningful word: 0 for everything, not NaN.
    { name: "a question of stop words only", question: "what is the", description: "what is the", expected: 0 },
  ];
  it.each(rows)("$name", ({ question, description, expected }) => {
    expect(lexicalRelevance(question, [description], descriptions)).toEqual([expected]);
  });

  it("weighs 注射剂 above 药 (jieba-segmented, so ranges rather than exact shares)", () => {
    const [injection, drug, tablet, whole] = lexicalRelevance(
      "注射剂和药",
      ["注射剂", "药", "片剂", "注射剂和药"],
      descriptions,
    );
    // 注射剂 is most of the question's weight, 药 one character of it, 片剂 none of its words
    // (剂 alone is not one), the question itself all of it.
    expect(injection).toBeGreaterThan(0.5);
    expect(drug).toBeGreaterThan(0);
    expect(drug).toBeLessThan(0.5);
    expect(tablet).toBe(0);
    expect(whole).toBe(1);
  });

  it("answers one score per description, in description order", () => {
    expect(lexicalRelevance("drug dosage", ["drug name", "dosage form", "drug name"], descriptions)).toEqual([
      0.4, 0.6, 0.4,
    ]);
    expect(lexicalRelevance("drug dosage", [], descriptions)).toEqual([]);
  });
});

describe("rankWithoutLlm", () => {
  const noReranker = { reranker: undefined };
  const rank = (
    question: string,
    candidates: Candidate[],
    deps: { reranker: Reranker | undefined } = noReranker,
    language: Language = "en",
  ) => rankWithoutLlm(testContext({ language }), question, candidates, { ...deps, descriptions });

  // Candidates as schema recall builds them for relation types: "source relation target. comments".
  const visits: Candidate = { text: "疾病 就诊于 医院. 疾病名称 医院名称", names: ["就诊于", "visits"] };
  const hasSymptom: Candidate = { text: "疾病 有症状 症状. 疾病的临床表现 症状名称", names: ["有症状", "has_symptom"] };
  const madeBy: Candidate = { text: "药品 生产于 企业. 药品名称 企业名称", names: ["生产于", "made_by"] };

  it("ranks the symptom relation first for a question about symptoms", async () => {
    const r = await rank("糖尿病有哪些症状", [visits, hasSymptom, madeBy]);
    expect(r.method).toBe("embedding_lexical");
    expect(r.warnings).toEqual([]);
    // 症状 is the only meaningful word the candidates share with the question: has_symptom holds it
    // (lexical share > 0), the others hold none and live on hashed n-gram overlap alone.
    expect(r.scores[1]).toBeGreaterThan(r.scores[0]!);
    expect(r.scores[1]).toBeGreaterThan(r.scores[2]!);
    for (const s of r.scores) {
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
      // Three decimals, as answers show them.
      expect(Math.round(s * 1000) / 1000).toBe(s);
    }
  });

  // Pairs of candidates with the same text, so lexical and embedding scores are equal and only
  // the names tell them apart: a name said verbatim adds 0.2 (the third term of
  // 0.5·lexical + 0.3·cosine + 0.2·named). Each score is rounded to three decimals on its own, so
  // the difference is 0.2 within rounding.
  const nameRows: { name: string; question: string; names: [string[], string[]]; lift: number }[] = [
    {
      name: "a name said verbatim lifts its candidate",
      question: "阿司匹林的用法",
      names: [["布洛芬"], ["阿司匹林"]],
      lift: 0.2,
    },
    // Names are compared normalised: the question's half-width iga meets the name's full-width ＩｇＡ.
    {
      name: "names match after NFKC and lower case",
      question: "iga肾病的症状",
      names: [[], ["ＩｇＡ肾病"]],
      lift: 0.2,
    },
    // A one-character name is too common to mean anything (药 is in 药的用法 by chance): no lift.
    { name: "a one-character name does not count", question: "药的用法", names: [[], ["药"]], lift: 0 },
    // A name the question does not contain lifts nothing, however close: 阿司匹林片 ⊄ 阿司匹林的用法.
    {
      name: "a name only partly in the question does not count",
      question: "阿司匹林的用法",
      names: [[], ["阿司匹林片"]],
      lift: 0,
    },
  ];
  it.each(nameRows)("$name", async ({ question, names, lift }) => {
    const text = "药品 用法 疾病";
    const r = await rank(question, [
      { text, names: names[0] },
      { text, names: names[1] },
    ]);
    expect(r.scores[1]! - r.scores[0]!).toBeCloseTo(lift, 2);
  });

  it("warns NO_RELEVANCE_SIGNAL when every candidate scores the same", async () => {
    const same: Candidate = { text: "药品 生产于 企业", names: ["生产于"] };
    const r = await rank("糖尿病有哪些症状", [same, { ...same }, { ...same }]);
    // Identical texts and names: identical scores, so the order kept is the network's, and the
    // answer must say so rather than present it as relevance.
    expect(new Set(r.scores).size).toBe(1);
    expect(r.warnings).toEqual([
      {
        target: "ranking",
        reason: "NO_RELEVANCE_SIGNAL",
        message: expect.stringContaining(`every candidate scored ${r.scores[0]} (embedding_lexical)`),
      },
    ]);
    // A warning is in the caller's language.
    const zh = await rank("糖尿病有哪些症状", [same, { ...same }, { ...same }], noReranker, "zh");
    expect(zh.warnings[0]?.message).toContain(`每个候选的得分都是 ${r.scores[0]}（embedding_lexical）`);
  });

  it("does not warn for a single candidate or none", async () => {
    // One candidate cannot be told apart from others: there are none, nothing to warn about.
    expect((await rank("糖尿病有哪些症状", [madeBy])).warnings).toEqual([]);
    // No candidates: no scores, the method that would have been used, no warning.
    expect(await rank("糖尿病有哪些症状", [])).toEqual({ scores: [], method: "embedding_lexical", warnings: [] });
    expect(await rank("糖尿病有哪些症状", [], { reranker: fixedReranker([]) })).toEqual({
      scores: [],
      method: "reranker",
      warnings: [],
    });
  });

  // The reranker branch: its scores are used as given when they are probabilities, through a
  // logistic when any is outside 0..1 (raw logits), rounded to three decimals.
  const rerankRows: { name: string; raw: number[]; expected: number[] }[] = [
    // All within 0..1: kept, rounded (0.1234 → 0.123).
    { name: "probabilities are kept", raw: [0.9, 0.1234, 0], expected: [0.9, 0.123, 0] },
    // 1/(1+e⁰) = 0.5; 1/(1+e⁻²) = 0.8808 → 0.881; 1/(1+e²) = 0.1192 → 0.119.
    { name: "logits go through a logistic", raw: [0, 2, -2], expected: [0.5, 0.881, 0.119] },
    // One value outside 0..1 sends all through the logistic, so their order stays comparable:
    // 1/(1+e^-0.5) = 0.6225 → 0.622 (not 0.5 as given), 1/(1+e^-1.5) = 0.8176 → 0.818.
    { name: "one logit sends every score through the logistic", raw: [0.5, 1.5], expected: [0.622, 0.818] },
  ];
  it.each(rerankRows)("reranker: $name", async ({ raw, expected }) => {
    const r = await rank(
      "q",
      raw.map((_, i) => ({ text: `doc ${i}`, names: [] })),
      { reranker: fixedReranker(raw) },
    );
    expect(r).toEqual({ scores: expected, method: "reranker", warnings: [] });
  });

  it("reports a failing reranker and ranks by embeddings and tokens instead", async () => {
    const failing: Reranker = {
      name: "down",
      rerank: async () => {
        throw new ToolError({
          code: "unavailable",
          reason: "RERANKER_UNAVAILABLE",
          message: verbatim("connection refused"),
        });
      },
    };
    const withFailure = await rank("糖尿病有哪些症状", [visits, hasSymptom], { reranker: failing });
    const without = await rank("糖尿病有哪些症状", [visits, hasSymptom]);
    // Never silent: the warning names the reranker and its reason; the scores are exactly the
    // fallback's.
    expect(withFailure.method).toBe("embedding_lexical");
    expect(withFailure.scores).toEqual(without.scores);
    expect(withFailure.warnings).toEqual([
      { target: "reranker", reason: "RERANKER_UNAVAILABLE", message: expect.stringContaining("connection refused") },
    ]);
  });

  it("lets an error that is not a ToolError through (a bug is not an upstream failure)", async () => {
    const broken: Reranker = {
      name: "broken",
      rerank: async () => {
        throw new TypeError("bug");
      },
    };
    await expect(rank("q", [visits, hasSymptom], { reranker: broken })).rejects.toThrow(TypeError);
  });
});

function fixedReranker(scores: number[]): Reranker {
  return { name: "fixed", rerank: async () => scores };
}

describe("coarseNetwork", () => {
  const objectType = (
    id: string,
    comment = "",
    properties: [name: string, displayName: string][] = [],
  ): ObjectType => ({
    id,
    name: id,
    comment,
    tags: [],
    primary_keys: ["id"],
    display_key: "id",
    data_properties: properties.map(([name, display_name]) => ({
      name,
      display_name,
      type: "string",
      comment: "",
      condition_operations: [],
    })),
    logic_properties: [],
  });
  const relation = (id: string, name: string, source: string, target: string) => ({
    id,
    name,
    comment: "",
    source_object_type_id: source,
    target_object_type_id: target,
  });
  const action = (id: string, objectTypeId: string) => ({
    id,
    name: id,
    action_type: "modify",
    object_type_id: objectTypeId,
    comment: "",
    tags: [],
  });

  // Network order matters: ties keep it. Lexical texts (id name comment, plus end type names for
  // relations, property display names for types) are English so the scores are exact.
  const kn: KnowledgeNetwork = {
    id: "kn_medical",
    name: "medical",
    comment: "",
    tags: [],
    object_types: [
      objectType("city", "", [["population", ""]]),
      objectType("hospital", "where a disease is treated"),
      objectType("disease"),
      objectType("symptom"),
      objectType("drug", "", [["dose_mg", "dosage"]]),
    ],
    relation_types: [
      relation("r_located", "located in", "hospital", "city"),
      relation("r_treats", "treats", "drug", "disease"),
      relation("r_sells", "sells", "hospital", "drug"),
      relation("r_symptom", "has symptom", "disease", "symptom"),
    ],
    action_types: [action("a_prescribe", "drug"), action("a_report", "symptom"), action("a_call", "city")],
  };
  const config = (overrides: Partial<ConceptRetrievalConfig>): ConceptRetrievalConfig => ({
    ...conceptRetrievalInput.parse({}),
    ...overrides,
  });

  // "which symptom does a disease have": meaningful words symptom and disease (7 letters each).
  // Relation scores: r_located 0, r_treats 0.5 (its target's name, disease), r_sells 0, r_symptom 1.
  // Type scores: city 0, hospital 0.5 (its comment), disease 0.5, symptom 0.5, drug 0.
  const SYMPTOMS = "which symptom does a disease have";
  const rows: {
    name: string;
    question: string;
    cfg: Partial<ConceptRetrievalConfig>;
    objects: string[];
    relations: string[];
    actions: string[];
  }[] = [
    // 4 relation types = coarse_min_relation_count: narrowed ("at least"), so the relations come
    // back best first, ties (r_located, r_sells at 0) in network order; a "more than" threshold
    // would return the network untouched, relations in network order.
    {
      name: "at coarse_min_relation_count it narrows, relations best first",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 4, coarse_object_limit: 5 },
      objects: ["city", "hospital", "disease", "symptom", "drug"],
      relations: ["r_symptom", "r_treats", "r_located", "r_sells"],
      actions: ["a_prescribe", "a_report", "a_call"],
    },
    // The two best relations, and their ends (disease, symptom; drug, disease) fill the 3 object
    // slots; object types come back in network order. r_treats is second because the end type
    // names are part of a relation's text.
    {
      name: "ends of the kept relations fill the object slots",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 2, coarse_object_limit: 3 },
      objects: ["disease", "symptom", "drug"],
      relations: ["r_symptom", "r_treats"],
      actions: ["a_prescribe", "a_report"],
    },
    // Two object slots: r_symptom's ends take them, so drug is cut and r_treats (drug → disease)
    // goes with it, and so does drug's action.
    {
      name: "a relation whose end was cut goes too",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 2, coarse_object_limit: 2 },
      objects: ["disease", "symptom"],
      relations: ["r_symptom"],
      actions: ["a_report"],
    },
    // One slot: only r_symptom's source fits, so even the best relation goes.
    {
      name: "one object slot keeps no relation",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 2, coarse_object_limit: 1 },
      objects: ["disease"],
      relations: [],
      actions: [],
    },
    // One relation, three slots: its ends, then the best other type, hospital (0.5 by its comment).
    {
      name: "free slots go to the best other object types",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 1, coarse_object_limit: 3 },
      objects: ["hospital", "disease", "symptom"],
      relations: ["r_symptom"],
      actions: ["a_report"],
    },
    // Four slots: the fourth is a tie at 0 between city and drug; city is earlier in the network.
    // Only the coarse_relation_limit best relations are kept, so r_located does not come back
    // although both its ends did.
    {
      name: "ties among object types keep network order",
      question: SYMPTOMS,
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 1, coarse_object_limit: 4 },
      objects: ["city", "hospital", "disease", "symptom"],
      relations: ["r_symptom"],
      actions: ["a_report", "a_call"],
    },
    // Nothing matches: every relation scores 0, so the first two in network order are kept;
    // r_located's ends take both slots and r_treats goes.
    {
      name: "a question matching nothing keeps network order",
      question: "weather forecast",
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 2, coarse_object_limit: 2 },
      objects: ["city", "hospital"],
      relations: ["r_located"],
      actions: ["a_call"],
    },
    // A property's display name is part of its type's text: "dosage" (display name of dose_mg)
    // lifts drug over disease for the free slot; matching property names would have taken disease.
    {
      name: "property display names count for their type",
      question: "dosage",
      cfg: { coarse_min_relation_count: 4, coarse_relation_limit: 1, coarse_object_limit: 3 },
      objects: ["city", "hospital", "drug"],
      relations: ["r_located"],
      actions: ["a_prescribe", "a_call"],
    },
  ];
  it.each(rows)("$name", ({ question, cfg, objects, relations, actions }) => {
    const out = coarseNetwork(kn, question, config(cfg), descriptions);
    expect(out.object_types.map((o) => o.id)).toEqual(objects);
    expect(out.relation_types.map((r) => r.id)).toEqual(relations);
    expect(out.action_types.map((a) => a.id)).toEqual(actions);
    // The network itself is the same network, and it was not changed in place.
    expect({ id: out.id, name: out.name }).toEqual({ id: kn.id, name: kn.name });
    expect(kn.object_types).toHaveLength(5);
    expect(kn.relation_types.map((r) => r.id)).toEqual(["r_located", "r_treats", "r_sells", "r_symptom"]);
  });

  const untouched: { name: string; cfg: Partial<ConceptRetrievalConfig> }[] = [
    // 4 relation types < 5: small networks go to the finer ranking as they are.
    {
      name: "below coarse_min_relation_count",
      cfg: { coarse_min_relation_count: 5, coarse_relation_limit: 1, coarse_object_limit: 1 },
    },
    // The default threshold is 5000 relation types.
    { name: "with the defaults", cfg: {} },
    // Switched off, even a network over the threshold is untouched.
    {
      name: "with enable_coarse_recall off",
      cfg: {
        enable_coarse_recall: false,
        coarse_min_relation_count: 1,
        coarse_relation_limit: 1,
        coarse_object_limit: 1,
      },
    },
  ];
  it.each(untouched)("returns the network as is $name", ({ cfg }) => {
    expect(coarseNetwork(kn, SYMPTOMS, config(cfg), descriptions)).toBe(kn);
  });
});
