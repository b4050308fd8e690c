import { soundDistance } from "../../core/pinyin";
import { bigrams, comparable } from "../../core/text";
import { looseKey, type Mention } from "./mention";
import { anchoredSpan, editDistance, lcsLength } from "./similarity";

/**
 * How an instance matched a mention, strongest evidence first:
 * - `exact`: a property equals the mention once width, case, punctuation, spaces and fillers (氏, 性) are set aside;
 * - `contains`: one holds the other whole (阑尾炎 in 急性阑尾炎; 急性阑尾炎 in 急性阑尾炎症);
 * - `alias`: an alias of the instance (its alias type, linked by an alias relation) matches;
 * - `tokens`: every word of the mention is in the property, with something between (上气道梗阻 → 上、下气道梗阻), or some of its words;
 * - `fuzzy`: characters dropped or added, or a typo or near-homophone (慢性肾病 → 慢性肾脏病, 帕金深病 → 帕金森病);
 * - `abbreviation`: the mention's characters begin the name and appear in it in order (甲亢 → 甲状腺功能亢进症), or the initials of its English words (AKI);
 * - `fulltext`, `vector`: found only by the platform's full-text or vector search.
 */
export type MatchType = "exact" | "contains" | "alias" | "tokens" | "fuzzy" | "abbreviation" | "fulltext" | "vector";

/**
 * Below this confidence a candidate is not what the mention names: keyword
 * context returns nothing rather than the least bad candidate.
 */
export const MENTION_THRESHOLD = 0.55;

/** A match and how sure the matcher is of it, 0..1 (1 only for an exact match). */
export interface MentionScore {
  type: MatchType;
  confidence: number;
}

/** A property value in the forms it is compared in. */
interface ValueForms {
  key: string;
  loose: string;
  chars: string[];
}

/**
 * How well a property value answers a mention, or undefined when it does not
 * at all. The confidence means the same in every match type: about how often
 * a match that good is the instance meant (README "Mention matching").
 */
export function scoreValue(m: Mention, value: string): MentionScore | undefined {
  if (m.key === "") return undefined;
  const v = formsOf(value);
  if (v.key === "") return undefined;
  if (v.key === m.key) return { type: "exact", confidence: 1 };
  if (v.loose === m.loose) return { type: "exact", confidence: 0.97 };
  const best = candidates(m, v, value).reduce<MentionScore | undefined>((b, s) => (s && (!b || s.confidence > b.confidence) ? s : b), undefined);
  return best && { type: best.type, confidence: Math.round(best.confidence * 1000) / 1000 };
}

function formsOf(value: string): ValueForms {
  const loose = looseKey(value);
  return { key: comparable(value), loose, chars: [...loose] };
}

function candidates(m: Mention, v: ValueForms, raw: string): (MentionScore | undefined)[] {
  const lm = m.chars.length;
  const lv = v.chars.length;
  const out: (MentionScore | undefined)[] = [];
  if (v.loose.includes(m.loose)) {
    // The name holds the mention whole: the more of the name it covers, the surer.
    out.push({ type: "contains", confidence: (0.6 + (0.35 * lm) / lv) * (lm === 1 ? 0.85 : 1) });
  } else if (lv >= 2 && m.loose.includes(v.loose)) {
    // The mention holds the whole name (a longer everyday form, or a question naming it).
    out.push({ type: "contains", confidence: 0.5 + (0.4 * lv) / lm });
  }
  const lcs = lcsLength(m.chars, v.chars);
  if (lcs === lm && lm >= 2) out.push(inOrder(m, v));
  out.push(misspelt(m, v), partialTokens(m, v), acronym(m, raw));
  return out;
}

/** Every character of the mention appears in the name, in order, with others between. */
function inOrder(m: Mention, v: ValueForms): MentionScore | undefined {
  const lm = m.chars.length;
  const lv = v.chars.length;
  const coverage = lm / lv;
  const words = m.tokens.filter((t) => [...t].length >= 2);
  if (words.length >= 2 && words.length === m.tokens.length && words.every((t) => v.key.includes(t))) return { type: "tokens", confidence: 0.6 + 0.3 * coverage };
  const span = anchoredSpan(m.chars, v.chars);
  if (span !== undefined && lm <= 0.6 * lv) return { type: "abbreviation", confidence: 0.55 + (0.3 * lm) / span };
  return coverage >= 0.5 ? { type: "fuzzy", confidence: 0.5 + 0.35 * coverage } : undefined;
}

/** More edits than this is another name, not a misspelling of this one. */
const MAX_EDITS = 2;

/** A typo or near-homophone: a small edit, a wrong character costing less when it sounds the same. */
function misspelt(m: Mention, v: ValueForms): MentionScore | undefined {
  const longer = Math.max(m.chars.length, v.chars.length);
  if (longer < 2) return undefined;
  const distance = editDistance(m.chars, v.chars, MAX_EDITS, soundDistance);
  if (distance > MAX_EDITS) return undefined;
  const similarity = 1 - distance / longer;
  return similarity >= 0.7 ? { type: "fuzzy", confidence: 0.3 + 0.6 * similarity } : undefined;
}

/**
 * Some of the mention's words are in the name (a question naming an instance
 * in other words): the share of the mention's word length found, damped by
 * how much of the name is unrelated ("梗阻" alone makes 肠梗阻 a weak match for 上气道梗阻).
 */
function partialTokens(m: Mention, v: ValueForms): MentionScore | undefined {
  const total = m.tokens.reduce((s, t) => s + [...t].length, 0);
  if (total === 0) return undefined;
  const covered = m.tokens.reduce((s, t) => (v.key.includes(t) ? s + [...t].length : s), 0) / total;
  if (covered === 0) return undefined;
  const grams = bigrams(v.loose);
  const related = grams.filter((g) => m.grams.has(g)).length / grams.length;
  const confidence = 0.75 * covered * Math.sqrt(related);
  return confidence > 0 ? { type: "tokens", confidence } : undefined;
}

/** An English abbreviation made of the initials of the name's words (AKI: Acute Kidney Injury). */
function acronym(m: Mention, raw: string): MentionScore | undefined {
  if (!m.latin || !/^[a-z]{2,6}$/.test(m.key)) return undefined;
  const initials = raw
    .normalize("NFKC")
    .split(/[^A-Za-z]+/)
    .filter((w) => w.length > 0)
    .map((w) => w[0]!.toLowerCase())
    .join("");
  return initials === m.key ? { type: "abbreviation", confidence: 0.8 } : undefined;
}
