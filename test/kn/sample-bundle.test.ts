import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_SEED, type GeneratedBundle, generateBundle } from "../../data/generator/build";
import { metricMonths } from "../../data/generator/calendar";
import { serializeBundle } from "../../data/generator/serialize";
import { type Bundle, parseBundle } from "../../src/kn/embedded/bundle";

const SAMPLE = fileURLToPath(new URL("../../data/kn_medical.bundle.json", import.meta.url));
/** The real export of kn_medical (a copy of the platform's published sample). */
const EXPORT = fileURLToPath(new URL("../fixtures/upstream/kn_medical.export.json", import.meta.url));

const sampleText = readFileSync(SAMPLE, "utf8");
const raw = JSON.parse(sampleText) as GeneratedBundle;
const sample = parseBundle(raw, SAMPLE);

const OBJECT_TYPE_IDS = [
  "checklist",
  "disease",
  "alias",
  "symptom",
  "supervision_unit",
  "department",
  "drug_product_class",
  "drug_product_type",
  "executive_standard",
  "drugs",
  "drug_product",
  "drug_product_new",
  "company",
  "drug_class",
  "facility",
  "bodypart",
];
/** Added to the export's: the skills type find_skills reads, and its bindings. */
const SKILL_TYPE_IDS = ["skills"];
const SKILL_RELATION_IDS = ["disease_skills", "department_skills"];
const RELATION_TYPE_IDS = [
  "belongs_to",
  "checks",
  "comly_with",
  "cures",
  "department_2_facility",
  "designated_to",
  "has_alias",
  "has_complication",
  "has_symptom",
  "is_a_drug",
  "is_a_facility",
  "is_a_level",
  "is_a_level3",
  "is_form",
  "produces",
  "shown_on",
  "supervises",
];

function rows(bundle: Bundle, type: string) {
  return bundle.objects[type] ?? [];
}

function byName(bundle: Bundle, type: string, name: string) {
  const t = bundle.object_types.find((o) => o.id === type);
  return rows(bundle, type).find((r) => t && r[t.display_key] === name);
}

function targetsOf(bundle: Bundle, relation: string, source: string | number): (string | number)[] {
  return (bundle.relations[relation] ?? []).filter(([s]) => s === source).map(([, t]) => t as string | number);
}

describe("the committed sample bundle", () => {
  it("parses and carries the 16 object types and 17 relation types of kn_medical, then skills and its two relation types", () => {
    expect(sample.knowledge_network.id).toBe("kn_medical");
    expect(sample.object_types.map((t) => t.id)).toEqual([...OBJECT_TYPE_IDS, ...SKILL_TYPE_IDS]);
    expect(sample.relation_types.map((r) => r.id)).toEqual([...RELATION_TYPE_IDS, ...SKILL_RELATION_IDS]);
    expect(Object.keys(sample.objects)).toEqual([...OBJECT_TYPE_IDS, ...SKILL_TYPE_IDS]);
    for (const r of sample.relation_types) expect(r.mapping).toBeUndefined();
    expect(sample.action_types.length).toBeGreaterThanOrEqual(2);
  });

  it("has the export's ids, names, keys, properties and condition_operations exactly", () => {
    interface ExportedType {
      id: string;
      name: string;
      comment: string;
      tags: string[];
      primary_keys: string[];
      display_key: string;
      data_properties: {
        name: string;
        display_name: string;
        type: string;
        comment: string;
        condition_operations: string[] | null;
      }[];
    }
    interface ExportedRelation {
      id: string;
      name: string;
      source_object_type_id: string;
      target_object_type_id: string;
    }
    const exported = JSON.parse(readFileSync(EXPORT, "utf8")) as {
      id: string;
      name: string;
      comment: string;
      object_types: ExportedType[];
      relation_types: ExportedRelation[];
    };
    expect(raw.knowledge_network).toMatchObject({ id: exported.id, name: exported.name, comment: exported.comment });
    // The export's types first, as exported; the skills type (not in the export) after them.
    expect(raw.object_types.map((t) => t.id)).toEqual([...exported.object_types.map((t) => t.id), ...SKILL_TYPE_IDS]);
    for (const [i, t] of exported.object_types.entries()) {
      const ours = raw.object_types[i];
      expect(ours).toMatchObject({
        id: t.id,
        name: t.name,
        comment: t.comment,
        tags: t.tags,
        primary_keys: t.primary_keys,
        display_key: t.display_key,
      });
      // Raw file, not the parsed one: [] must stay [] and null stay null.
      expect(ours?.data_properties).toEqual(
        t.data_properties.map((p) => ({
          name: p.name,
          display_name: p.display_name,
          type: p.type,
          comment: p.comment,
          condition_operations: p.condition_operations,
        })),
      );
    }
    expect(
      raw.relation_types
        .slice(0, exported.relation_types.length)
        .map((r) => [r.id, r.name, r.source_object_type_id, r.target_object_type_id]),
    ).toEqual(exported.relation_types.map((r) => [r.id, r.name, r.source_object_type_id, r.target_object_type_id]));
  });

  it("has the sizes the retrieval tests rely on", () => {
    const count = (type: string) => rows(sample, type).length;
    expect(count("disease")).toBeGreaterThanOrEqual(300);
    expect(count("symptom")).toBeGreaterThanOrEqual(280);
    expect(count("drugs")).toBeGreaterThanOrEqual(200);
    expect(count("drug_product")).toBe(500);
    expect(count("department")).toBeGreaterThanOrEqual(40);
    expect(count("checklist")).toBeGreaterThanOrEqual(150);
    expect(count("bodypart")).toBeGreaterThanOrEqual(40);
    expect(count("alias")).toBeGreaterThanOrEqual(200);
    expect(count("company")).toBe(100);
    expect(count("facility")).toBeGreaterThanOrEqual(60);
    expect(count("drug_product_new")).toBeGreaterThan(0);
  });

  it("names 上、下气道梗阻 disease_004790 with the real sample's row, five symptoms and the alias 上气道阻塞, and has no disease 上气道梗阻", () => {
    const disease = byName(sample, "disease", "上、下气道梗阻");
    expect(disease).toEqual({
      age: "儿童",
      disease_english_name: null,
      disease_id: "disease_004790",
      disease_name: "上、下气道梗阻",
      icd_id: null,
      infection: "无传染性",
      insurance: "非医保疾病",
      money: null,
      period: "2-4周",
      rate: "0.9",
      treatment: "手术治疗、药物治疗",
    });
    expect(byName(sample, "disease", "上气道梗阻")).toBeUndefined();
    expect(byName(sample, "alias", "上气道梗阻")).toBeUndefined();

    const symptoms = targetsOf(sample, "has_symptom", "disease_004790").sort();
    expect(symptoms).toEqual([
      "symptom_000020",
      "symptom_000028",
      "symptom_000547",
      "symptom_000660",
      "symptom_000837",
    ]);
    const symptomNames = Object.fromEntries(rows(sample, "symptom").map((r) => [r.symptom_id, r.symptom_name]));
    expect(symptoms.map((id) => symptomNames[id])).toEqual(["呼吸困难", "咳嗽", "吞咽困难", "气喘", "流涎"]);

    const alias = byName(sample, "alias", "上气道阻塞");
    expect(targetsOf(sample, "has_alias", "disease_004790")).toEqual([alias?.disease_alias_id]);
  });

  it("has names with full-width and ASCII parentheses, full-width letters, 、 and /, aliases, and names inside other names", () => {
    for (const name of [
      "糖尿病（2型）",
      "肺炎(支原体)",
      "ＩｇＡ肾病",
      "维生素Ｄ缺乏症",
      "肝、胆管结石",
      "胃食管反流病/反流性食管炎",
      "肺炎",
      "小儿肺炎",
      "支气管炎",
      "慢性支气管炎",
    ]) {
      expect(byName(sample, "disease", name), name).toBeDefined();
    }
    const aliasesOf = (disease: string) => {
      const id = byName(sample, "disease", disease)?.disease_id as string;
      const names = Object.fromEntries(rows(sample, "alias").map((r) => [r.disease_alias_id, r.disease_alias_name]));
      return targetsOf(sample, "has_alias", id).map((a) => names[a as string]);
    };
    expect(aliasesOf("心肌梗死")).toContain("心梗");
    expect(aliasesOf("急性上呼吸道感染")).toContain("感冒");
  });

  it("links every relation pair, once, to existing instances of the relation's types", () => {
    const keys = new Map(
      sample.object_types.map((t) => [t.id, new Set(rows(sample, t.id).map((r) => r[t.primary_keys[0] ?? ""]))]),
    );
    for (const r of sample.relation_types) {
      const pairs = sample.relations[r.id] ?? [];
      expect(pairs.length, r.id).toBeGreaterThan(0);
      expect(new Set(pairs.map((p) => JSON.stringify(p))).size, `${r.id} duplicates`).toBe(pairs.length);
      for (const [source, target] of pairs) {
        expect(keys.get(r.source_object_type_id)?.has(source as string | number), `${r.id} ${String(source)}`).toBe(
          true,
        );
        expect(keys.get(r.target_object_type_id)?.has(target as string | number), `${r.id} ${String(target)}`).toBe(
          true,
        );
      }
    }
  });

  it("gives every instance exactly its type's data properties and unique primary keys", () => {
    for (const t of sample.object_types) {
      const names = t.data_properties.map((p) => p.name);
      const seen = new Set<unknown>();
      for (const row of rows(sample, t.id)) {
        expect(Object.keys(row)).toEqual(names);
        const key = row[t.primary_keys[0] ?? ""];
        expect(seen.has(key), `${t.id} ${String(key)}`).toBe(false);
        seen.add(key);
      }
    }
  });

  it("draws relations within the documented ranges", () => {
    const perDisease = (relation: string) => {
      const counts = new Map<unknown, number>();
      for (const [s] of sample.relations[relation] ?? []) counts.set(s, (counts.get(s) ?? 0) + 1);
      return rows(sample, "disease").map((d) => counts.get(d.disease_id) ?? 0);
    };
    const within = (values: number[], min: number, max: number) => values.every((v) => v >= min && v <= max);
    expect(within(perDisease("has_symptom"), 3, 8)).toBe(true);
    expect(within(perDisease("designated_to"), 1, 3)).toBe(true);
    expect(within(perDisease("cures"), 1, 4)).toBe(true);
    expect(within(perDisease("checks"), 1, 4)).toBe(true);
    expect(within(perDisease("shown_on"), 1, 2)).toBe(true);
    expect(within(perDisease("has_alias"), 0, 3)).toBe(true);

    const complications = new Set(
      (sample.relations.has_complication ?? []).map(([a, b]) => `${String(a)}>${String(b)}`),
    );
    const mutual = [...complications].filter((pair) => complications.has(pair.split(">").reverse().join(">")));
    expect(mutual.length).toBeGreaterThan(0);

    const produced = new Map<unknown, number>();
    for (const [company] of sample.relations.produces ?? []) produced.set(company, (produced.get(company) ?? 0) + 1);
    expect(rows(sample, "company").every((c) => (produced.get(c.company_id) ?? 0) >= 3)).toBe(true);
    for (const p of rows(sample, "drug_product")) {
      expect(Number.isInteger(p.approval_date)).toBe(true);
      expect(p.approval_date as number).toBeGreaterThanOrEqual(20150101);
      expect(p.approval_date as number).toBeLessThanOrEqual(20261031);
    }
  });
});

describe("the company logic properties and metric", () => {
  it("declares approved_drug_count and business_health_score as specified", () => {
    const company = raw.object_types.find((t) => t.id === "company");
    expect(company?.logic_properties).toEqual([
      {
        name: "approved_drug_count",
        display_name: "药品上市数量",
        type: "metric",
        comment: "企业在时间范围内获批上市的药品数量（按月统计）",
        data_source: { type: "metric", id: "metric_company_approved_drug_count" },
        unit_type: "countUnit",
        unit: "times",
        parameters: [
          {
            name: "company_id",
            type: "STRING",
            value_from: "property",
            value: "company_id",
            operation: "=",
            if_system_generate: false,
            comment: "企业ID",
          },
          {
            name: "instant",
            type: "BOOLEAN",
            value_from: "input",
            if_system_generate: true,
            comment: "是否即时查询：true 即时（单点），false 趋势（需 step）",
          },
          {
            name: "start",
            type: "INTEGER",
            value_from: "input",
            if_system_generate: true,
            comment: "开始时间戳（毫秒）",
          },
          {
            name: "end",
            type: "INTEGER",
            value_from: "input",
            if_system_generate: true,
            comment: "结束时间戳（毫秒）",
          },
          {
            name: "step",
            type: "STRING",
            value_from: "input",
            if_system_generate: true,
            comment: "趋势查询步长：day/week/month/quarter/year",
          },
        ],
      },
      {
        name: "business_health_score",
        display_name: "企业健康度评分",
        type: "operator",
        comment: "根据企业药品上市情况、产品结构与给定权重计算健康度评分（0-1）和等级（A-E）",
        data_source: { type: "operator", id: "op_business_health_score" },
        parameters: [
          {
            name: "company_id",
            type: "STRING",
            value_from: "property",
            value: "company_id",
            source: "body",
            if_system_generate: false,
            comment: "企业ID",
          },
          {
            name: "company_name",
            type: "STRING",
            value_from: "property",
            value: "company_name",
            source: "body",
            if_system_generate: false,
            comment: "企业名称",
          },
          {
            name: "model_version",
            type: "STRING",
            value_from: "const",
            value: "v2",
            source: "query",
            if_system_generate: false,
            comment: "评分模型版本",
          },
          {
            name: "weights",
            type: "OBJECT",
            value_from: "input",
            source: "body",
            if_system_generate: false,
            comment: '各维度权重，如 {"growth":0.4,"breadth":0.3,"stability":0.3}',
          },
          {
            name: "focus_categories",
            type: "ARRAY",
            value_from: "input",
            source: "body",
            if_system_generate: false,
            comment: '重点关注的药品剂型列表，如 ["片剂","注射剂"]',
          },
          {
            name: "as_of",
            type: "INTEGER",
            value_from: "input",
            source: "body",
            if_system_generate: false,
            comment: "评估时点（毫秒时间戳）",
          },
        ],
      },
    ]);
  });

  it("has one point per month from 2015-01 to 2026-10 at 00:00 Asia/Shanghai", () => {
    const months = metricMonths();
    expect(months).toHaveLength(142);
    expect(months[0]).toBe(Date.parse("2015-01-01T00:00:00+08:00"));
    expect(months.at(-1)).toBe(Date.parse("2026-10-01T00:00:00+08:00"));
    const series = sample.metrics["company.approved_drug_count"] ?? {};
    expect(Object.keys(series).sort()).toEqual(
      rows(sample, "company")
        .map((c) => c.company_id)
        .sort(),
    );
    for (const points of Object.values(series)) expect(points.map(([ts]) => ts)).toEqual(months);
  });

  it("counts each company's products approved in each month", () => {
    const approval = new Map(rows(sample, "drug_product").map((p) => [p.drug_product_id, p.approval_date as number]));
    const series = sample.metrics["company.approved_drug_count"] ?? {};
    for (const companyId of ["company_000001", "company_000002", "company_000050", "company_000100"]) {
      const expected = new Map<string, number>();
      for (const product of targetsOf(sample, "produces", companyId)) {
        const date = String(approval.get(product));
        const month = `${date.slice(0, 4)}-${date.slice(4, 6)}`;
        expected.set(month, (expected.get(month) ?? 0) + 1);
      }
      const actual = new Map<string, number>();
      for (const [ts, count] of series[companyId] ?? []) {
        const month = new Date(ts + 8 * 3600 * 1000).toISOString().slice(0, 7);
        if (count) actual.set(month, count);
      }
      expect(actual, companyId).toEqual(expected);
      expect([...actual.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    }
  });
});

describe("the generator", () => {
  it("is deterministic: the same seed gives the same bytes, another seed other data", () => {
    const first = serializeBundle(generateBundle({ seed: 7 }));
    expect(serializeBundle(generateBundle({ seed: 7 }))).toBe(first);
    expect(serializeBundle(generateBundle({ seed: 8 }))).not.toBe(first);
  });

  it("reproduces the committed sample byte for byte with the default seed", () => {
    expect(serializeBundle(generateBundle({ seed: DEFAULT_SEED }))).toBe(sampleText);
  });

  it("makes a bundle of --scale instances that passes parseBundle", () => {
    const bundle = parseBundle(generateBundle({ scale: 20_000 }), "scale 20000");
    const counts = Object.fromEntries(Object.entries(bundle.objects).map(([type, list]) => [type, list.length]));
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(20_000);
    expect(counts.drug_product).toBeGreaterThan(counts.disease ?? Infinity);
    expect(counts.disease).toBeGreaterThan(counts.symptom ?? Infinity);
    expect(byName(bundle, "disease", "上、下气道梗阻")?.disease_id).toBe("disease_004790");
    expect(byName(bundle, "disease", "上气道梗阻")).toBeUndefined();
    const diseaseNames = rows(bundle, "disease").map((d) => d.disease_name);
    expect(new Set(diseaseNames).size).toBe(diseaseNames.length);
  });
});
