import { soundAlike, soundDistance } from "../../core/pinyin";
import { bigrams, comparable } from "../../core/text";
import { looseKey, type Mention } from "./mention";
import { anchoredSpan, editDistance, lcsLength } from "./similarity";

/**
 * How an instance matched a mention, strongest evidence first:
 * - `exact`: a property equals the mention once width, case, punctuation, spaces and fillers (氏, 性) are set aside;
 * - `contains`: one holds the other whole (阑尾炎 in 急性阑尾炎; 急性阑尾炎 in 急性阑尾炎症);
 * - `alias`: an alias of the instance (its alias type, linked by an alias relation) matches;
 * - `tokens`: every word of the mention is in the property, in any order or with something between
 *   (上气道梗阻 → 上、下气道梗阻), or, weaker, some of its words;
 * - `fuzzy`: characters dropped, added, replaced or swapped, a typo or a near-homophone
 *   (慢性肾病 → 慢性肾脏病, 帕金深病 → 帕金森病, 湿诊 → 湿疹);
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

/** A property value (or one of the names it lists) in the forms it is compared in. */
interface ValueForms {
  key: string;
  loose: string;
  chars: string[];
  /** The value as stored: its words are split from it when a Latin mention needs them (valueWords). */
  source: string;
  words?: string[];
}

/** A name property may list several names: "艾滋病/HIV感染", "手癣/足癣". */
export const NAME_LIST = /\s*[/／|｜]\s*/;
/** More edits than this is another name, not a misspelling of this one. */
export const MAX_EDITS = 2;

/**
 * How well a property value answers a mention, or undefined when it does not
 * at all. The confidence means the same in every match type: about how often
 * a match that good is the instance meant (docs/internals.md, "Mention matching"). A
 * value listing names separated by "/" is as good as its best name.
 */
export function scoreValue(m: Mention, value: string): MentionScore | undefined {
  if (m.key === "") return undefined;
  // A call scores its mentions against the same names again (each lookup stage rescoring what the
  // earlier ones found): the score of a name is kept with the mention, which lives as long as the call.
  let known = scored.get(m);
  if (!known) scored.set(m, (known = new Map()));
  if (known.has(value)) return known.get(value);
  const s = scoreParts(m, value);
  known.set(value, s);
  return s;
}

const scored = new WeakMap<Mention, Map<string, MentionScore | undefined>>();

function scoreParts(m: Mention, value: string): MentionScore | undefined {
  const parts = value.split(NAME_LIST).filter((p) => p !== "");
  let best = scoreName(m, value);
  if (parts.length > 1) {
    for (const part of parts) {
      const s = scoreName(m, part);
      if (s && (!best || s.confidence > best.confidence)) best = s;
    }
  }
  return best && { type: best.type, confidence: Math.round(best.confidence * 1000) / 1000 };
}

function scoreName(m: Mention, value: string): MentionScore | undefined {
  const v = valueForms(value);
  if (v.key === "") return undefined;
  if (v.key === m.key) return { type: "exact", confidence: 1 };
  if (v.loose === m.loose) return { type: "exact", confidence: 0.97 };
  // The same characters with the words in another order (2型糖尿病, 糖尿病（2型）); not for Latin letters,
  // where that is a typo (pnuemonia).
  if (!m.latin && m.chars.length >= 3 && m.chars.length === v.chars.length && sorted(m.chars) === sorted(v.chars))
    return { type: "tokens", confidence: 0.9 };
  // Same-sounding characters only matter when a few characters differ: the plain count first, it is cheaper.
  const plain = lcsLength(m.chars, v.chars);
  const lcs =
    plain === m.chars.length || m.chars.length - plain > MAX_EDITS ? plain : lcsLength(m.chars, v.chars, soundAlike);
  let best: MentionScore | undefined;
  for (const s of [
    contained(m, v),
    ...inOrder(m, v, lcs, plain),
    misspelt(m, v),
    tokens(m, v, lcs),
    acronym(m, value),
  ]) {
    if (s && s.confidence > 0 && (!best || s.confidence > best.confidence)) best = s;
  }
  return best;
}

/** Names recur across candidates and calls: their forms are kept, up to this many. */
const FORMS_CACHED = 50_000;
const forms = new Map<string, ValueForms>();

function sorted(chars: readonly string[]): string {
  return [...chars].sort().join("");
}

function valueForms(value: string): ValueForms {
  let f = forms.get(value);
  if (f === undefined) {
    const loose = looseKey(value);
    f = { key: comparable(value), loose, chars: [...loose], source: value };
    if (forms.size >= FORMS_CACHED) forms.clear();
    forms.set(value, f);
  }
  return f;
}

/** A value's comparable form (comparable), kept with its other forms. */
export function keyOf(value: string): string {
  return valueForms(value).key;
}

/**
 * Whether the mention is a shorter or a longer form of the value rather than
 * a rewording of it: every character of the mention is in the value (甲型肝炎
 * of 甲型病毒性肝炎, or its words in another order), or the mention holds the
 * value whole (右下腹痛 holds 腹痛).
 */
export function shorterOrLonger(m: Mention, value: string): boolean {
  const loose = valueForms(value).loose;
  return m.loose.includes(loose) || m.chars.every((c) => loose.includes(c));
}

/** One holds the other whole, the more of the longer one the shorter covers the surer. */
function contained(m: Mention, v: ValueForms): MentionScore | undefined {
  const lm = m.chars.length;
  const lv = v.chars.length;
  // The name holds the mention (阑尾炎 in 急性阑尾炎); a single character is a weak mention. Latin letters
  // count only from the start of one of the name's words: "as" inside "measles" is another word's letters.
  if (v.loose.includes(m.loose) && (!m.latin || beginsAWord(m.key, valueWords(v))))
    return { type: "contains", confidence: (0.6 + (0.35 * lm) / lv) * (lm === 1 ? 0.85 : 1) };
  // The mention holds the whole name (a longer everyday form, or a question naming it): less sure,
  // since the mention may name something more specific (肺部 names 肺; 心内科 is not 内科).
  if ((lv >= 2 || lm === 2) && m.loose.includes(v.loose))
    return { type: "contains", confidence: 0.45 + (0.4 * lv) / lm };
  return undefined;
}

/** The value's words, each comparable; split once, and only for the few values a Latin mention is found inside. */
function valueWords(v: ValueForms): string[] {
  v.words ??= v.source
    .normalize("NFKC")
    .split(/[^\p{L}\p{N}]+/u)
    .map(comparable)
    .filter((w) => w !== "");
  return v.words;
}

/** Whether `key` begins at one of `words` and runs on through the words after it (diabetes in "type 2 diabetes"). */
function beginsAWord(key: string, words: readonly string[]): boolean {
  for (let i = 0; i < words.length; i++) {
    let rest = key;
    for (let j = i; j < words.length && rest !== ""; j++) {
      const w = words[j]!;
      if (rest.startsWith(w)) rest = rest.slice(w.length);
      else if (w.startsWith(rest)) rest = "";
      else break;
    }
    if (rest === "") return true;
  }
  return false;
}

/**
 * The characters of one appear in the other in order (characters that sound
 * the same count as the same: people type by pinyin): an abbreviation (the
 * mention's characters beginning the name: 甲亢, 慢阻肺), characters dropped
 * or added (慢性肾病, 糖尿病肾脏病变). `lcs` counts same-sounding characters,
 * `plain` only those written alike: with characters dropped or added, at
 * least two must be, since one character and one that merely sounds like
 * another is no evidence of a longer name (卡铂 is not 卡泊三醇, 丙肝 not
 * 病毒性肝炎（乙型）, whose 病 sounds like 丙).
 */
function inOrder(m: Mention, v: ValueForms, lcs: number, plain: number): (MentionScore | undefined)[] {
  const lm = m.chars.length;
  const lv = v.chars.length;
  if (lm < 2 || lv < 2 || (plain < 2 && lm !== lv)) return [];
  const out: (MentionScore | undefined)[] = [];
  if (lcs === lm) {
    // An abbreviation typed with a wrong (if same-sounding) character is doubly uncertain.
    const strict = anchoredSpan(m.chars, v.chars);
    const span = strict ?? anchoredSpan(m.chars, v.chars, soundAlike);
    const misheard = strict === undefined ? 0.2 : 0;
    if (span !== undefined && lm <= 0.6 * lv)
      out.push({ type: "abbreviation", confidence: 0.55 + (0.3 * lm) / span - misheard });
    else if (lm / lv >= 0.5) out.push({ type: "fuzzy", confidence: 0.5 + (0.35 * lm) / lv });
  }
  // The whole name inside a longer mention, with characters added between (a longer everyday form).
  if (lcs === lv && lv >= 3 && lv / lm >= 0.6) out.push({ type: "fuzzy", confidence: 0.45 + (0.35 * lv) / lm });
  return out;
}

/** A typo or near-homophone: a small edit, a wrong character costing less when it sounds the same. */
function misspelt(m: Mention, v: ValueForms): MentionScore | undefined {
  const longer = Math.max(m.chars.length, v.chars.length);
  if (longer < 2) return undefined;
  // Latin words take an edit per five letters (scabies is not rabies); a short Chinese name only a
  // same-sounding character (味觉减退 is not 嗅觉减退): a wrong character there is another word.
  const allowed = m.latin ? Math.min(MAX_EDITS, Math.floor(longer / 5)) : longer <= 4 ? 0.5 : MAX_EDITS;
  const distance = editDistance(m.chars, v.chars, allowed, soundDistance);
  if (distance > allowed) return undefined;
  const similarity = 1 - distance / longer;
  return similarity >= 0.7 ? { type: "fuzzy", confidence: 0.3 + 0.6 * similarity } : undefined;
}

/**
 * The mention's words in the name: all of them, in any order (乙型病毒性肝炎
 * → 病毒性肝炎（乙型）), the more of the name they cover the surer; or some
 * of them (a question naming an instance in other words): the share of the
 * mention's word length found, damped by how much of the name is unrelated
 * ("梗阻" alone makes 肠梗阻 a weak match for 上气道梗阻).
 */
function tokens(m: Mention, v: ValueForms, lcs: number): MentionScore | undefined {
  const words = wordsOf(m);
  if (words.total === 0) return undefined;
  const found = words.list.filter((w) => v.key.includes(w.token) || v.loose.includes(w.loose));
  if (found.length === words.list.length && words.list.length >= 2 && words.list.every((w) => w.length >= 2)) {
    // In order, the whole mention covers the name; in another order, its words do.
    const covered = lcs === m.chars.length ? m.chars.length : words.total;
    return { type: "tokens", confidence: 0.6 + 0.3 * Math.min(1, covered / v.chars.length) };
  }
  const covered = found.reduce((s, w) => s + w.length, 0) / words.total;
  if (covered === 0) return undefined;
  const grams = bigrams(v.loose);
  const related = grams.filter((g) => m.grams.has(g)).length / grams.length;
  return { type: "tokens", confidence: 0.75 * covered * Math.sqrt(related) };
}

interface MentionWords {
  list: { token: string; loose: string; length: number }[];
  /** Their characters in all. */
  total: number;
}

/** A mention's words with their loose forms and lengths, worked out once per mention. */
function wordsOf(m: Mention): MentionWords {
  let w = words.get(m);
  if (!w) {
    const list = m.tokens.map((token) => ({ token, loose: looseKey(token), length: [...token].length }));
    w = { list, total: list.reduce((s, x) => s + x.length, 0) };
    words.set(m, w);
  }
  return w;
}

const words = new WeakMap<Mention, MentionWords>();

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
