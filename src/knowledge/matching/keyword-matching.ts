import { MAX_SUB_CONDITIONS, type Condition, type LeafCondition, type Row } from "../../kn/types";
import { type Json } from "../../core/json";
import { round3 } from "../../core/scores";
import { bigrams, comparable, textOf, words } from "../../core/text";
import type { RecalledObjectType } from "../session";

/** How an instance matched the keyword, strongest first. */
export type MatchType = "exact" | "contains" | "tokens" | "fulltext" | "vector";

const BASE: Record<MatchType, number> = { exact: 1, contains: 0.8, tokens: 0.6, fulltext: 0.45, vector: 0.3 };

export interface ScoredInstance {
  row: Row;
  match_type: MatchType;
  /** 0..1: the match type's base plus how much of the value the keyword covers. */
  score: number;
  matched_fields: string[];
}

/** Properties whose values are text (a string keyword is only compared with these). */
const TEXT_TYPES = /char|text|string|keyword/i;
/** At most this many tokens of a long keyword are AND-ed. */
const MAX_TOKENS = 6;

/** The keyword's words (jieba's precise mode), punctuation dropped: what "tokens" matching AND-s. */
export function keywordTokens(keyword: string): string[] {
  const tokens = [...new Set(words(keyword))];
  return tokens.length <= MAX_TOKENS ? tokens : [...tokens].sort((a, b) => b.length - a.length).slice(0, MAX_TOKENS);
}

/**
 * The forms a keyword may be stored in: as typed, NFKC (full-width letters,
 * digits and brackets made half-width) and full-width. The platform compares
 * raw strings, so each form is asked for.
 */
export function keywordVariants(keyword: string): string[] {
  const nfkc = keyword.normalize("NFKC");
  const full = nfkc.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
  return [...new Set([keyword, nfkc, full])];
}

/**
 * The two instance queries for a keyword, asked in parallel. `exact`: any
 * text property equal to a form of the keyword. `fuzzy`: what each property
 * supports beyond that — contains (`like`), every token contained (`like`
 * AND-ed per property), full-text `match`, vector `knn`. Only operations a
 * property lists in condition_operations are used; or-nodes are split to stay
 * within 100 sub-conditions.
 */
export function keywordConditions(ot: RecalledObjectType, keyword: string, knnK: number): { exact?: Condition; fuzzy?: Condition } {
  const variants = keywordVariants(keyword);
  const tokens = keywordTokens(keyword);
  const numeric = /^-?\d+(\.\d+)?$/.test(keyword.trim());
  const exact: LeafCondition[] = [];
  const fuzzy: Condition[] = [];
  for (const p of ot.data_properties) {
    const ops = new Set(p.condition_operations);
    const text = TEXT_TYPES.test(p.type);
    if (!text && !numeric) continue;
    if (ops.has("==")) {
      for (const v of text ? variants : [Number(keyword)]) exact.push({ field: p.name, operation: "==", value: v, value_from: "const" });
    }
    if (!text) continue;
    if (ops.has("like")) {
      for (const v of variants) fuzzy.push({ field: p.name, operation: "like", value: v, value_from: "const" });
      if (tokens.length >= 2) {
        fuzzy.push({
          operation: "and",
          sub_conditions: tokens.map((t) => ({ field: p.name, operation: "like", value: t, value_from: "const" }) satisfies LeafCondition),
        });
      }
    }
    if (ops.has("match")) fuzzy.push({ field: p.name, operation: "match", value: keyword, value_from: "const" });
    if (ops.has("knn")) fuzzy.push({ field: p.name, operation: "knn", value: keyword, limit_key: "k", limit_value: knnK, value_from: "const" });
  }
  return {
    ...(exact.length > 0 ? { exact: anyOf(exact) } : {}),
    ...(fuzzy.length > 0 ? { fuzzy: anyOf(fuzzy) } : {}),
  };
}

function anyOf(conditions: Condition[]): Condition {
  if (conditions.length <= MAX_SUB_CONDITIONS) return { operation: "or", sub_conditions: conditions };
  const chunks: Condition[] = [];
  for (let i = 0; i < conditions.length; i += MAX_SUB_CONDITIONS) chunks.push(anyOf(conditions.slice(i, i + MAX_SUB_CONDITIONS)));
  return anyOf(chunks);
}

/**
 * Scores candidates locally, comparing normalised text (width, case,
 * punctuation): exact, contains, all tokens contained, else full-text or
 * vector (what the platform found by `_score`). Within a match type, a value
 * the keyword covers more of scores higher (bigram Dice). Best first.
 */
export function scoreCandidates(ot: RecalledObjectType, keyword: string, rows: readonly Row[]): ScoredInstance[] {
  const key = comparable(keyword);
  const keyGrams = bigrams(key);
  const tokens = keywordTokens(keyword).map(comparable).filter((t) => t !== "");
  // A numeric keyword is also compared with numeric properties (found there by ==).
  const numeric = /^-?\d+(\.\d+)?$/.test(keyword.trim());
  const textProps = ot.data_properties.filter((p) => numeric || TEXT_TYPES.test(p.type)).map((p) => p.name);
  const canMatch = ot.data_properties.some((p) => p.condition_operations.includes("match"));
  const scored = rows.map((row): ScoredInstance => {
    let best: { type: MatchType; score: number; fields: string[] } = {
      type: canMatch ? "fulltext" : "vector",
      score: BASE[canMatch ? "fulltext" : "vector"] + 0.1 * Math.min(1, Number(row["_score"] ?? 0) / 10),
      fields: [],
    };
    for (const field of textProps) {
      const raw = textOf(row[field] as Json);
      if (raw === undefined || raw === "") continue;
      const value = comparable(raw);
      const type: MatchType | undefined =
        value === key ? "exact" : value.includes(key) ? "contains" : tokens.length >= 2 && tokens.every((t) => value.includes(t)) ? "tokens" : undefined;
      if (!type) continue;
      // Within a match type, the more of the value the keyword covers, the better.
      const closeness = type === "tokens" ? dice(keyGrams, bigrams(value)) : [...key].length / [...value].length;
      const score = Math.min(1, BASE[type] + 0.2 * closeness);
      if (BASE[type] > BASE[best.type] || (type === best.type && score > best.score)) best = { type, score, fields: [field] };
      else if (type === best.type && score === best.score) best.fields.push(field);
    }
    return { row, match_type: best.type, score: round3(best.score), matched_fields: best.fields };
  });
  return scored.sort(
    (a, b) =>
      b.score - a.score ||
      String(a.row._display ?? "").length - String(b.row._display ?? "").length ||
      (a.row._instance_id < b.row._instance_id ? -1 : 1),
  );
}

function dice(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const set = new Set(b);
  const shared = a.filter((g) => set.has(g)).length;
  return (2 * shared) / (a.length + b.length);
}
