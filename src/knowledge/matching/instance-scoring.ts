import { bigrams, comparable, contentTokens, words } from "../../core/text";

/** A keyword (or a whole question) in the forms it is compared in. */
export interface Keyword {
  text: string;
  /** comparable(text): NFKC, lower case, no punctuation or spaces. */
  key: string;
  grams: ReadonlySet<string>;
  /** Its meaningful words (precise segmentation, stop words out; single characters only when nothing longer). */
  tokens: string[];
}

export function keywordOf(text: string): Keyword {
  const meaningful = new Set(contentTokens(text));
  const all = [...new Set(words(text).filter((w) => meaningful.has(w)).map(comparable).filter((w) => w !== ""))];
  const long = all.filter((w) => [...w].length >= 2);
  const key = comparable(text);
  return { text, key, grams: new Set(bigrams(key)), tokens: long.length > 0 ? long : all };
}

/**
 * 0..1: how directly a property value answers a keyword, compared without
 * width, case or punctuation differences:
 *  - 1        the value is the keyword;
 *  - 0.8..1   the value contains the keyword ("肺炎" in "病毒性肺炎"), more the more of it the keyword covers;
 *  - 0.7..0.9 the keyword (a question) names the value ("肺炎应该挂哪个科室" names "肺炎");
 *  - 0.6..0.8 the value holds every word of the keyword ("上气道梗阻" → "上、下气道梗阻");
 *  - below    the share of the keyword's words the value holds, damped by how
 *             much of the value is unrelated ("梗阻" alone makes "肠梗阻" a weak match for "上气道梗阻").
 */
export function valueRelevance(k: Keyword, value: string): number {
  const v = comparable(value);
  if (v === "" || k.key === "") return 0;
  if (v === k.key) return 1;
  const lv = [...v].length;
  const lk = [...k.key].length;
  if (v.includes(k.key)) return 0.8 + (0.2 * lk) / lv;
  if (lv >= 2 && k.key.includes(v)) return 0.7 + (0.2 * lv) / lk;
  const total = k.tokens.reduce((s, t) => s + [...t].length, 0);
  const covered = total === 0 ? 0 : k.tokens.reduce((s, t) => (v.includes(t) ? s + [...t].length : s), 0) / total;
  if (covered === 0) return 0;
  const grams = bigrams(v);
  const related = grams.filter((g) => k.grams.has(g)).length / grams.length;
  if (covered === 1) return 0.6 + 0.2 * related;
  return 0.7 * covered * Math.sqrt(related);
}

/** A property searched, and how much a match in it counts (the instance's name counts fully). */
export interface WeightedField {
  name: string;
  weight: number;
}

/** How directly an instance answers a keyword: its best weighted property, or what full-text/vector search found (`semantic`, 0..1). */
export function instanceRelevance(k: Keyword, row: Record<string, unknown>, fields: readonly WeightedField[], semantic: number): number {
  let best = semantic;
  for (const f of fields) {
    const value = row[f.name];
    if (typeof value !== "string" && typeof value !== "number") continue;
    best = Math.max(best, f.weight * valueRelevance(k, String(value)));
  }
  return best;
}

/**
 * One instance's scores over the query's keywords. `direct`, what
 * min_direct_relevance filters, is its relevance to its best keyword; the
 * final score is that for a one-keyword query, and for several keywords the
 * share of the whole query the instance answers (their mean) — so an
 * instance named exactly as one keyword is lifted to exact_name_match_score
 * rather than sinking below instances that half-match two.
 */
export function fuse(perKeyword: readonly number[], nameIsAKeyword: boolean, exactNameMatchScore: number): { direct: number; final: number } {
  const direct = Math.max(0, ...perKeyword);
  if (perKeyword.length <= 1) return { direct, final: direct };
  const mean = perKeyword.reduce((s, x) => s + x, 0) / perKeyword.length;
  return { direct, final: nameIsAKeyword ? Math.max(mean, exactNameMatchScore) : mean };
}
