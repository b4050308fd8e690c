import type { Random } from "./random";
import type { SystemId } from "./vocabulary";

/**
 * Names beyond the hand-written ones, for scale mode, and the rules that give
 * a disease its aliases. Variants are built combinatorially from the word
 * lists (急性 + 肺炎, 肺炎 + （重型）, 盐酸 + 氨溴索…) so that large bundles keep
 * mostly unique, realistic names; numbered copies are the last resort.
 */

/**
 * `count` items with unique names: every base first, then the bases' variants
 * in a seeded order, then numbered copies ("名称（2）") if still short.
 */
export function expandNames<T extends { name: string }>(options: {
  bases: readonly T[];
  count: number;
  rng: Random;
  variantsOf: (base: T) => T[];
  renamed: (base: T, name: string) => T;
  forbidden?: readonly string[];
}): T[] {
  const { bases, count, rng } = options;
  const used = new Set(options.forbidden);
  const out: T[] = [];
  const add = (item: T): void => {
    if (out.length < count && !used.has(item.name)) {
      used.add(item.name);
      out.push(item);
    }
  };
  for (const base of bases) add(base);
  if (out.length < count) {
    const variants = bases.flatMap(options.variantsOf);
    for (const variant of rng.sample(variants, variants.length)) add(variant);
  }
  for (let n = 2; out.length < count; n++) {
    for (const base of bases) add(options.renamed(base, `${base.name}（${n}）`));
  }
  return out;
}

/** Disease prefixes, their English, and the systems whose diseases they do not fit (no 新生儿 + 前列腺炎). */
const DISEASE_PREFIXES: [string, string, SystemId[]?][] = [
  ["急性", "Acute"],
  ["慢性", "Chronic"],
  ["亚急性", "Subacute"],
  ["复发性", "Recurrent"],
  ["继发性", "Secondary"],
  ["原发性", "Primary"],
  ["难治性", "Refractory"],
  ["重症", "Severe"],
  ["药物性", "Drug-induced"],
  ["感染性", "Infectious"],
  ["特发性", "Idiopathic"],
  ["家族性", "Familial"],
  ["获得性", "Acquired"],
  ["迟发性", "Late-onset"],
  ["隐匿性", "Occult"],
  ["小儿", "Pediatric", ["peds", "obgyn"]],
  ["新生儿", "Neonatal", ["peds", "obgyn", "psych", "oral", "tumor", "rheum", "renal"]],
  ["老年", "Senile", ["peds"]],
  ["妊娠期", "Gestational", ["peds", "eye", "ent", "oral", "ortho", "renal"]],
  ["产后", "Postpartum", ["peds", "eye", "ent", "oral", "tumor", "renal"]],
  ["先天性", "Congenital", ["infect", "psych", "tumor", "oral"]],
  ["职业性", "Occupational", ["peds", "obgyn"]],
];

const DISEASE_SUFFIXES: [string, string][] = [
  ["（轻型）", " (Mild)"],
  ["（重型）", " (Severe)"],
  ["（急性期）", " (Acute Phase)"],
  ["（缓解期）", " (Remission)"],
  ["（Ⅰ型）", " Type I"],
  ["（Ⅱ型）", " Type II"],
  ["（Ⅲ型）", " Type III"],
  ["（早期）", " (Early Stage)"],
  ["（晚期）", " (Advanced Stage)"],
  ["（伴并发症）", " with Complications"],
];

/** A base that already says who or how (小儿…, 急性…) takes no second prefix. */
const QUALIFIED =
  /^(急性|慢性|亚急性|小儿|儿童|婴儿|老年|新生儿|妊娠|产后|复发性|继发性|原发性|先天性|难治性|重症|药物性|感染性|特发性|家族性|获得性|迟发性|隐匿性|职业性|病毒性|细菌性)/u;
const HAS_PARENTHESES = /[（(]/u;

export interface DiseaseNaming {
  name: string;
  en: string | null;
  system: SystemId;
}

export function diseaseVariants<T extends DiseaseNaming>(base: T): T[] {
  const fitting = DISEASE_PREFIXES.filter(([, , except]) => !except?.includes(base.system));
  const prefixes: [string, string][] = [["", ""]];
  if (!QUALIFIED.test(base.name)) for (const [zh, en] of fitting) prefixes.push([zh, en]);
  const suffixes: [string, string][] = HAS_PARENTHESES.test(base.name) ? [["", ""]] : [["", ""], ...DISEASE_SUFFIXES];
  const out: T[] = [];
  for (const [prefix, prefixEn] of prefixes) {
    for (const [suffix, suffixEn] of suffixes) {
      if (prefix === "" && suffix === "") continue;
      out.push({
        ...base,
        name: `${prefix}${base.name}${suffix}`,
        en: base.en === null ? null : `${prefixEn ? `${prefixEn} ` : ""}${base.en}${suffixEn}`,
      });
    }
  }
  return out;
}

const SYMPTOM_PATTERNS = ["间歇性", "持续性", "阵发性", "进行性", "反复", "夜间", "晨起", "活动后", "餐后", "突发"];
const SYMPTOM_DEGREES = ["轻度", "重度"];
const PATTERNED = /^(间歇性|持续性|阵发性|进行性|反复|夜间|晨起|活动后|餐后|突发|无痛性)/u;

export function symptomVariants<T extends { name: string }>(base: T): T[] {
  const patterns = PATTERNED.test(base.name) ? [""] : ["", ...SYMPTOM_PATTERNS];
  return ["", ...SYMPTOM_DEGREES]
    .flatMap((degree) => patterns.map((pattern) => `${degree}${pattern}`))
    .filter((qualifier) => qualifier !== "")
    .map((qualifier) => ({ ...base, name: `${qualifier}${base.name}` }));
}

const CHECK_QUALIFIERS = [
  "（急诊）",
  "（床旁）",
  "（复查）",
  "（术前）",
  "（门诊）",
  "（住院）",
  "（加急）",
  "（儿童）",
  "（孕期）",
  "（体检）",
];

export function checkVariants<T extends { name: string }>(base: T): T[] {
  if (/[）)]$/u.test(base.name)) return [];
  return CHECK_QUALIFIERS.map((q) => ({ ...base, name: `${base.name}${q}` }));
}

const FACILITY_QUALIFIERS = ["便携式", "全自动", "数字化", "智能", "多功能", "移动式", "高端", "国产", "进口", "新型"];

export function facilityVariants<T extends { name: string }>(base: T): T[] {
  return FACILITY_QUALIFIERS.map((q) => ({ ...base, name: `${q}${base.name}` }));
}

const SALT_PREFIXES: [string, string][] = [
  ["盐酸", "Hydrochloride"],
  ["硫酸", "Sulfate"],
  ["磷酸", "Phosphate"],
  ["马来酸", "Maleate"],
  ["枸橼酸", "Citrate"],
  ["酒石酸", "Tartrate"],
  ["甲磺酸", "Mesylate"],
  ["富马酸", "Fumarate"],
];
const SALT_SUFFIXES: [string, string][] = [
  ["钠", "Sodium"],
  ["钾", "Potassium"],
  ["钙", "Calcium"],
  ["镁", "Magnesium"],
];
const ALREADY_SALT =
  /^(盐酸|硫酸|磷酸|马来酸|枸橼酸|酒石酸|甲磺酸|富马酸|苯磺酸|草酸|氢溴酸|醋酸|硫酸氢)|(钠|钾|钙|镁|铁|锌)$/u;
const CHINESE_MEDICINE_PREFIXES: [string, string][] = [
  ["复方", "Fufang"],
  ["小儿", "Xiao'er"],
  ["强力", "Qiangli"],
  ["加味", "Jiawei"],
  ["精制", "Jingzhi"],
  ["浓缩", "Nongsuo"],
];

export interface DrugNaming {
  name: string;
  en: string;
  /** Set for proprietary Chinese medicines, whose name holds their form. */
  fixedForm: string | null;
  /** Biological products take no salts. */
  biological: boolean;
}

export function drugVariants<T extends DrugNaming>(base: T): T[] {
  if (base.fixedForm !== null) {
    return CHINESE_MEDICINE_PREFIXES.filter(([prefix]) => !base.name.startsWith(prefix)).map(([prefix, pinyin]) => ({
      ...base,
      name: `${prefix}${base.name}`,
      en: `${pinyin} ${base.en}`,
    }));
  }
  const out: T[] = [];
  if (!base.biological && !ALREADY_SALT.test(base.name)) {
    for (const [prefix, en] of SALT_PREFIXES)
      out.push({ ...base, name: `${prefix}${base.name}`, en: `${base.en} ${en}` });
    for (const [suffix, en] of SALT_SUFFIXES)
      out.push({ ...base, name: `${base.name}${suffix}`, en: `${base.en} ${en}` });
  }
  if (!base.name.startsWith("复方")) out.push({ ...base, name: `复方${base.name}`, en: `Compound ${base.en}` });
  return out;
}

/**
 * Aliases a disease plausibly goes by, derived from its name: the qualifier
 * in parentheses moved to the front (糖尿病（2型） → 2型糖尿病), older or
 * colloquial spellings (梗死 → 梗塞, 综合征 → 综合症, 帕金森病 → 帕金森症),
 * and the English initials of a name of four or more capitalised words (COPD).
 */
export function derivedAliases(name: string, en: string | null): string[] {
  const out: string[] = [];
  const parenthesised = /^(.+?)[（(]([^）)]+)[）)]$/u.exec(name);
  if (parenthesised) out.push(`${parenthesised[2]}${parenthesised[1]}`);
  if (name.includes("梗死")) out.push(name.replace("梗死", "梗塞"));
  if (name.includes("综合征")) out.push(name.replace("综合征", "综合症"));
  if (name.startsWith("小儿")) out.push(`儿童${name.slice(2)}`);
  if (name.startsWith("复发性")) out.push(`${name.slice(3)}复发`);
  if (name.startsWith("老年") && !name.startsWith("老年性")) out.push(`老年性${name.slice(2)}`);
  // Eponyms are also called …症 (帕金森病 → 帕金森症); other …病 are not (白血病 is no 白血症).
  if (name.endsWith("病") && /'s Disease\b/u.test(en ?? "")) out.push(`${name.slice(0, -1)}症`);
  const words = (en ?? "").split(" ");
  if (words.length >= 4 && words.every((word) => /^[A-Z][a-z]+$/u.test(word)))
    out.push(words.map((word) => word[0]).join(""));
  return out;
}
