import type { Json } from "../../src/core/json";
import type { Random } from "./random";
import { INFECTIOUS_MARKERS, SYSTEMS, type SystemId, TREATMENT_ORDER } from "./vocabulary";

/**
 * A disease's row values besides id and name, drawn to look like the
 * platform's rows: age group, infectiousness, insurance, treatments, course,
 * cure rate and cost follow the disease's name and body system.
 */

/** A disease as drawn: its hand-written entry or a variant of one. */
export interface DiseaseSeed {
  name: string;
  en: string | null;
  icd: string | null;
  system: SystemId;
  aliases: string[];
}

const AGE_GROUPS = ["成人", "成人", "青壮年", "中老年人", "老年人", "所有人群", "儿童", "青少年"];
const CHRONIC_SYSTEMS: SystemId[] = ["endo", "rheum", "psych"];
const PERIODS = {
  acute: ["3-5天", "5-7天", "7-10天", "1-2周", "2-4周"],
  chronic: ["1-3个月", "3-6个月", "6-12个月", "长期治疗", "终身治疗"],
  tumor: ["3-6个月", "6-12个月", "1-2年", "长期治疗"],
  any: ["7-10天", "1-2周", "2-4周", "1-3个月", "3-6个月"],
};
const CURE_RATES = {
  acute: ["0.95", "0.9", "0.85", "0.8"],
  chronic: ["0.3", "0.4", "0.5", "0.6", "0.7"],
  tumor: ["0.1", "0.2", "0.3", "0.4", "0.5"],
  any: ["0.6", "0.7", "0.8", "0.85", "0.9", "0.95"],
};
const COSTS = ["100-500元", "500-1000元", "1000-3000元", "3000-5000元", "5000-10000元", "10000-30000元"];
const TUMOR_COSTS = ["10000-30000元", "30000-100000元", "100000元以上"];

/** A disease's drawn properties, shaped like the platform's rows (see the real disease_004790). */
export function diseaseProperties(disease: DiseaseSeed, rng: Random): Record<string, Json> {
  const { name, system } = disease;
  let age: string;
  if (/新生儿|婴儿|婴幼儿/u.test(name)) age = "婴幼儿";
  else if (/小儿|儿童/u.test(name) || system === "peds") age = "儿童";
  else if (name.includes("老年")) age = "老年人";
  else if (/妊娠|产后|流产/u.test(name)) age = "孕产妇";
  else if (system === "obgyn") age = rng.pick(["育龄女性", "中年女性"]);
  else age = rng.pick(AGE_GROUPS);

  const course =
    system === "tumor"
      ? "tumor"
      : /急性/u.test(name) || system === "infect"
        ? "acute"
        : /慢性|先天性|家族性/u.test(name) || CHRONIC_SYSTEMS.includes(system)
          ? "chronic"
          : "any";

  const options = SYSTEMS[system].treatments;
  const treatments = rng.sample(options, rng.int(1, 3));
  const usual = options[0];
  if (usual !== undefined && !treatments.includes(usual) && rng.chance(0.6)) treatments.push(usual);
  treatments.sort((a, b) => TREATMENT_ORDER.indexOf(a) - TREATMENT_ORDER.indexOf(b));

  const costRoll = rng.next();
  const money =
    costRoll < 0.1
      ? null
      : costRoll < 0.2
        ? "根据不同医院，收费标准不一致"
        : rng.pick(system === "tumor" ? TUMOR_COSTS : COSTS);
  // The platform's rows often lack the English name and the ICD code.
  const english = rng.chance(0.1) ? null : disease.en;
  const icd = rng.chance(0.1) ? null : disease.icd;
  return {
    age,
    disease_english_name: english,
    icd_id: icd,
    infection: system === "infect" || INFECTIOUS_MARKERS.some((m) => name.includes(m)) ? "有传染性" : "无传染性",
    insurance: rng.chance(0.7) ? "医保疾病" : "非医保疾病",
    money,
    period: rng.pick(PERIODS[course]),
    rate: rng.pick(CURE_RATES[course]),
    treatment: treatments.join("、"),
  };
}
