/**
 * The instances the retrieval spec is about, placed where the real platform
 * has them. The real sample (shared/upstream/kn_medical.call-samples.txt)
 * answers a question about "上气道梗阻" with disease_004790 and five symptoms;
 * here that disease is named "上、下气道梗阻" and no disease is named
 * "上气道梗阻", so an exact-name lookup misses and retrieval has to find it
 * some other way (the alias "上气道阻塞", a fuzzy match, the symptoms).
 * Parentheses, full-width characters, "、", "/" and names that contain each
 * other live in vocabulary.ts with the rest of their system.
 */

/** Ids the real platform uses, by type and name; every other id is allocated around them. */
export const FIXED_IDS: Record<string, Record<string, string>> = {
  disease: { "上、下气道梗阻": "disease_004790" },
  symptom: {
    呼吸困难: "symptom_000020",
    咳嗽: "symptom_000028",
    吞咽困难: "symptom_000547",
    气喘: "symptom_000660",
    流涎: "symptom_000837",
  },
};

/** Names no instance of the type may have. */
export const FORBIDDEN_NAMES: Record<string, string[]> = {
  disease: ["上气道梗阻"],
  alias: ["上气道梗阻"],
};

/** Diseases whose row is copied from the real sample rather than drawn (only the name differs). */
export const FIXED_DISEASES: Record<
  string,
  { properties: Record<string, string | null>; symptoms: string[]; aliases: string[] }
> = {
  "上、下气道梗阻": {
    properties: {
      age: "儿童",
      disease_english_name: null,
      icd_id: null,
      infection: "无传染性",
      insurance: "非医保疾病",
      money: null,
      period: "2-4周",
      rate: "0.9",
      treatment: "手术治疗、药物治疗",
    },
    symptoms: ["呼吸困难", "咳嗽", "吞咽困难", "气喘", "流涎"],
    aliases: ["上气道阻塞"],
  },
};
