import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { soundDistance } from "../../src/core/pinyin";
import type { KnowledgeNetwork, ObjectType } from "../../src/kn/types";
import { aliasLinksOf } from "../../src/knowledge/matching/aliases";
import { looseKey, mentionOf, writtenForms } from "../../src/knowledge/matching/mention";
import { relaxedConditions, searchFieldsOf } from "../../src/knowledge/matching/queries";
import { MENTION_THRESHOLD, scoreValue } from "../../src/knowledge/matching/score";
import { anchoredSpan, editDistance, lcsLength } from "../../src/knowledge/matching/similarity";
import { loadVocabulary, VocabularyError } from "../../src/knowledge/matching/vocabulary";

// The mention matcher's pieces as plain functions (issue 12), pinned so that a change in what
// matches, or how sure the matcher is, shows up as a failing row.

describe("scoreValue: one confidence for every kind of match", () => {
  it.each([
    // [mention, stored name, type, confidence — and why]
    ["肺炎", "肺炎", "exact", 1],
    ["ＩｇＡ肾病", "IgA肾病", "exact", 1], // width and case set aside
    ["帕金森氏病", "帕金森病", "exact", 0.97], // equal once the filler 氏 is dropped
    ["2型糖尿病", "糖尿病（Ⅱ型）", "tokens", 0.9], // Ⅱ型 is 2型; the same characters, the words moved
    ["阑尾炎", "急性阑尾炎", "contains", 0.862], // 0.6 + 0.35 × 3/5
    ["肺", "肺炎", "contains", 0.659], // 0.6 + 0.35 × 1/2, × 0.85 for a single character
    ["梗阻", "肠梗阻", "contains", 0.833], // 0.6 + 0.35 × 2/3
    ["肺部", "肺", "contains", 0.65], // the mention holds the name: 0.45 + 0.4 × 1/2
    ["上气道梗阻", "上、下气道梗阻", "tokens", 0.85], // every word, in order, one character between: 0.6 + 0.3 × 5/6
    ["乙型病毒性肝炎", "病毒性肝炎（乙型）", "tokens", 0.9], // the same characters in another order
    ["慢性肾病", "慢性肾脏病", "fuzzy", 0.763], // 脏 dropped: 0.5 + 0.35 × 3/4 (性 is a filler on both sides)
    ["糖尿病肾脏病变", "糖尿病肾病", "fuzzy", 0.729], // the whole name inside a longer form: 0.45 + 0.35 × 5/7
    ["帕金深病", "帕金森病", "fuzzy", 0.825], // shen/sen are confused: 0.5 of an edit in 4 → 0.3 + 0.6 × 0.875
    ["湿诊", "湿疹", "fuzzy", 0.85], // the same reading: 0.25 of an edit in 2
    ["pnuemonia", "Pneumonia", "fuzzy", 0.833], // two letters swapped: one edit in 9
    ["爱滋病", "艾滋病/HIV感染", "fuzzy", 0.85], // the value lists two names; 爱/艾 share a reading
    ["甲亢", "甲状腺功能亢进症", "abbreviation", 0.65], // 0.55 + 0.3 × 2/6 (甲…亢 spans 6)
    ["慢阻肺", "慢性阻塞性肺疾病", "abbreviation", 0.775], // spans 慢阻塞肺 once 性 is dropped: 0.55 + 0.3 × 3/4
    ["AKI", "Acute Kidney Injury", "abbreviation", 0.8], // the initials of its words
    ["diabetes", "Type 2 Diabetes", "contains", 0.815], // from the start of one of its words: 0.6 + 0.35 × 8/13
    ["heart fail", "Acute Heart Failure", "contains", 0.785], // across words, ending inside one: 0.6 + 0.35 × 9/17
    ["上气道梗阻有哪些症状", "上、下气道梗阻", "tokens", 0.387], // a question holding some of the name's words
  ])("%s → %s: %s %s", (mention, value, type, confidence) => {
    const s = scoreValue(mentionOf(mention), value);
    expect(s?.type).toBe(type);
    expect(s!.confidence).toBeCloseTo(confidence, 3);
  });

  it.each([
    ["肺结节", "肺结核"], // one character of three replaced by one that does not sound alike: another disease
    ["慢性肠炎", "慢性胃炎"],
    ["量子纠缠", "肺结核"],
    ["12345", "J18.9"],
    ["今天天气怎么样", "天疱疮"],
  ])("%s is no match for %s", (mention, value) => {
    expect(scoreValue(mentionOf(mention), value)).toBeUndefined();
  });

  it("does not take Latin letters inside another word for the mention: RA is not in Tetralogy of Fallot", () => {
    const s = scoreValue(mentionOf("RA"), "Tetralogy of Fallot");
    expect(s === undefined || s.confidence < MENTION_THRESHOLD).toBe(true);
    expect(s?.type).not.toBe("contains");
  });

  it("doubts an abbreviation whose first character only sounds the same: 晕动病 is not 运动神经元病", () => {
    const s = scoreValue(mentionOf("晕动病"), "运动神经元病")!;
    expect(s.type).toBe("abbreviation");
    expect(s.confidence).toBeLessThan(0.55);
  });
});

describe("a mention's forms", () => {
  it.each([
    ["上、下气道梗阻", "上下气道梗阻"],
    ["帕金森氏病", "帕金森病"],
    ["缺铁性贫血", "缺铁贫血"],
    ["糖尿病（Ⅱ型）", "糖尿病2型"],
    ["二型糖尿病", "2型糖尿病"],
    ["III期肺癌", "3期肺癌"],
    ["性", "性"], // nothing but a filler: kept rather than left empty
  ])("looseKey(%s) = %s", (text, loose) => {
    expect(looseKey(text)).toBe(loose);
  });

  it("asks for every written form: as typed, NFKC, full-width, and the cases of Latin text", () => {
    expect(writtenForms("IgA肾病")).toEqual(["IgA肾病", "ＩｇＡ肾病", "iga肾病", "IGA肾病", "Iga肾病"]);
    expect(writtenForms("上、下气道梗阻")).toEqual(["上、下气道梗阻"]);
  });

  it("keeps the meaningful words: stop words out, single characters only when nothing longer", () => {
    expect(mentionOf("上气道梗阻").tokens).toEqual(["气道", "梗阻"]);
    expect(mentionOf("Parkinson disease").latin).toBe(true);
    expect(mentionOf("帕金森病").latin).toBe(false);
  });
});

describe("the relaxed lookup's pieces", () => {
  const fields = searchFieldsOf(
    [
      { name: "name", display_name: "名称", type: "varchar", comment: "", condition_operations: ["==", "like"] },
      { name: "note", display_name: "备注", type: "varchar", comment: "", condition_operations: ["==", "like"] },
    ],
    "name",
  );
  const likes = (c: unknown): string[] => JSON.stringify(c).match(/"like","value":"[^"]*"/g) ?? [];

  it("searches the names only, never other text properties", () => {
    expect(relaxedConditions(fields, mentionOf("帕金深病")).every((c) => !JSON.stringify(c).includes('"note"'))).toBe(
      true,
    );
  });

  it("asks for all the characters but one, so one wrong character still finds the name, then any bigram", () => {
    const queries = relaxedConditions(fields, mentionOf("帕金深病"));
    expect(queries.slice(0, 4).map((c) => likes(c).length)).toEqual([3, 3, 3, 3]);
    expect(JSON.stringify(queries[0])).not.toContain('"帕"');
    expect(JSON.stringify(queries.at(-1))).toContain('"operation":"or"');
  });

  it("asks a two-character mention for both characters, then for each alone", () => {
    expect(relaxedConditions(fields, mentionOf("湿诊")).map(likes)).toEqual([
      ['"like","value":"湿"', '"like","value":"诊"'],
      ['"like","value":"湿"'],
      ['"like","value":"诊"'],
    ]);
  });

  it("leaves questions and single characters to stage one", () => {
    expect(relaxedConditions(fields, mentionOf("上气道梗阻会引起哪些并发症呢"))).toEqual([]);
    expect(relaxedConditions(fields, mentionOf("肺"))).toEqual([]);
  });
});

describe("similarities", () => {
  const c = (s: string) => [...s];
  it.each([
    ["冠心病", "冠状动脉粥样硬化心脏病", 3],
    ["慢性肾病", "慢性肾脏病", 4],
    ["abc", "xyz", 0],
  ])("lcsLength(%s, %s) = %i", (a, b, n) => expect(lcsLength(c(a), c(b))).toBe(n));

  it.each([
    ["帕金深病", "帕金森病", 1],
    ["pnuemonia", "pneumonia", 1], // a swap is one edit
    ["克隆病", "克罗恩病", 2],
    ["abcdef", "uvwxyz", 3], // over max (2): max + 1
  ])("editDistance(%s, %s) = %i", (a, b, n) => expect(editDistance(c(a), c(b), 2)).toBe(n));

  it.each([
    ["甲亢", "甲状腺功能亢进症", 6],
    ["甲亢", "甲状旁腺功能亢进症", 7],
    ["房颤", "心房颤动", undefined], // must start where the name starts
  ])("anchoredSpan(%s, %s) = %s", (a, b, n) => expect(anchoredSpan(c(a), c(b))).toBe(n));

  it.each([
    ["疹", "诊", 0.25], // the same reading
    ["荨", "寻", 0.25], // one of 荨's readings (qián, xún)
    ["森", "深", 0.5], // sen / shen, easily confused
    ["核", "节", 1],
    ["a", "b", 1],
  ])("soundDistance(%s, %s) = %s", (a, b, d) => expect(soundDistance(a, b)).toBe(d));
});

describe("alias links found in the schema", () => {
  const type = (id: string, name: string, comment = ""): ObjectType => ({
    id,
    name,
    comment,
    tags: [],
    primary_keys: [`${id}_id`],
    display_key: `${id}_name`,
    data_properties: [
      { name: `${id}_name`, display_name: "名称", type: "varchar", comment: "", condition_operations: ["==", "like"] },
    ],
    logic_properties: [],
  });
  const kn = (
    relations: { id: string; name: string; from: string; to: string; comment?: string }[],
    types: ObjectType[],
  ): KnowledgeNetwork => ({
    id: "kn",
    name: "kn",
    comment: "",
    tags: [],
    object_types: types,
    relation_types: relations.map((r) => ({
      id: r.id,
      name: r.name,
      comment: r.comment ?? "",
      source_object_type_id: r.from,
      target_object_type_id: r.to,
    })),
    action_types: [],
  });
  const disease = type("disease", "疾病");

  it("finds kn_medical's shape: an alias type (别名) linked from the named type", () => {
    const net = kn(
      [{ id: "has_alias", name: "别名", from: "disease", to: "alias" }],
      [disease, type("alias", "疾病别名")],
    );
    expect(aliasLinksOf(net, disease, [])).toEqual([
      {
        relation_type_id: "has_alias",
        alias_object_type_id: "alias",
        alias_fields: [{ name: "alias_name", condition_operations: ["==", "like"] }],
        alias_is_source: false,
      },
    ]);
  });

  it("finds an alias type by its comment, in English, whichever way the relation points", () => {
    const net = kn(
      [{ id: "names", name: "names", from: "other_name", to: "disease" }],
      [disease, type("other_name", "names", "synonyms of a disease")],
    );
    expect(aliasLinksOf(net, disease, []).map((l) => [l.relation_type_id, l.alias_is_source])).toEqual([
      ["names", true],
    ]);
  });

  it("gives an alias type no aliases of its own, and ignores relations that say nothing", () => {
    const alias = type("alias", "疾病别名");
    const net = kn(
      [
        { id: "has_alias", name: "别名", from: "disease", to: "alias" },
        { id: "has_symptom", name: "症状", from: "disease", to: "symptom" },
      ],
      [disease, alias, type("symptom", "症状")],
    );
    expect(aliasLinksOf(net, alias, [])).toEqual([]);
    expect(aliasLinksOf(net, disease, []).map((l) => l.relation_type_id)).toEqual(["has_alias"]);
  });

  it("takes a relation named in MENTION_ALIAS_RELATIONS, by id or as kn_id/id", () => {
    const net = kn([{ id: "called", name: "叫做", from: "disease", to: "label" }], [disease, type("label", "标签")]);
    expect(aliasLinksOf(net, disease, [])).toEqual([]);
    expect(aliasLinksOf(net, disease, ["called"])).toHaveLength(1);
    expect(aliasLinksOf(net, disease, ["kn/called"])).toHaveLength(1);
    expect(aliasLinksOf(net, disease, ["other_kn/called"])).toEqual([]);
  });
});

describe("the vocabulary", () => {
  const dir = mkdtempSync(join(tmpdir(), "cl-vocabulary-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  };
  const vocabulary = loadVocabulary([
    file("generic.json", {
      knowledge_network_id: "*",
      equivalents: [
        ["头疼", "头痛", "colloquial"],
        ["疼", "痛"],
      ],
    }),
    file("kn.json", {
      knowledge_network_id: "kn",
      entries: [{ object_type_id: "drugs", name: "阿托伐他汀钙", also: ["立普妥", "Lipitor"] }],
    }),
  ]);

  it("adds the formal wording of a mention, longest form first", () => {
    const m = vocabulary.expand("kn", "symptom", mentionOf("偏头疼"));
    expect(m.alternates.map((a) => [a.mention.text, a.via, a.weight])).toEqual([["偏头痛", "equivalent", 0.95]]);
  });

  it("adds the instance a network's other name stands for, in that network and type only, compared loosely", () => {
    expect(
      vocabulary.expand("kn", "drugs", mentionOf("LIPITOR")).alternates.map((a) => [a.mention.text, a.via]),
    ).toEqual([["阿托伐他汀钙", "dictionary"]]);
    expect(vocabulary.expand("other", "drugs", mentionOf("立普妥")).alternates).toEqual([]);
    expect(vocabulary.expand("kn", "disease", mentionOf("立普妥")).alternates).toEqual([]);
  });

  it("leaves a mention it knows nothing of as it is", () => {
    const m = mentionOf("肺炎");
    expect(vocabulary.expand("kn", "disease", m)).toBe(m);
  });

  it.each([
    ["not JSON", "{", /not valid JSON|Unexpected|JSON/],
    ["no network", { entries: [] }, /knowledge_network_id/],
    ["an unknown field", { knowledge_network_id: "*", synonyms: [] }, /synonyms/],
    [
      "an entry without names",
      { knowledge_network_id: "kn", entries: [{ object_type_id: "drugs", name: "x", also: [] }] },
      /also/,
    ],
  ])("refuses a file with %s, naming the file", (name, content, why) => {
    const path = file(`${name.replaceAll(" ", "-")}.json`, content);
    expect(() => loadVocabulary([path])).toThrow(VocabularyError);
    expect(() => loadVocabulary([path])).toThrow(path);
    expect(() => loadVocabulary([path])).toThrow(why);
  });
});
