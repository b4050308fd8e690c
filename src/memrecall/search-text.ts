import { idf as idfTable } from "@node-rs/jieba/dict";
import { weightedCoverage } from "../core/scores";
import { STOP_WORDS, tokenize } from "../core/text";

/**
 * How memories are found by words: both the stored text and the query are cut
 * by jieba's search mode (overlapping sub-words, so "数据库配置" also yields
 * "数据", "数据库", "配置"), after NFKC and lower-casing; English words are
 * kept whole and lower-cased (no stemming: "configs" does not find "config",
 * which the tests pin down).
 */
export function searchTokens(text: string): string[] {
  return [...new Set(tokenize(text))];
}

/** The search text a memory is stored with: its tokens, space-separated. */
export function searchTextOf(parts: readonly string[]): string {
  return searchTokens(parts.filter((p) => p !== "").join("\n")).join(" ");
}

/**
 * jieba's inverse document frequencies; a word it does not know counts as rare,
 * a stop word (core/text.ts) as the commonest: jieba knows no English and would
 * weigh "the" like "database", and in a short query one 之前 among three words
 * would reach the top.
 */
let idfs: Map<string, number> | undefined;
const UNKNOWN_IDF = 11.74;
const STOP_WORD_IDF = 0.5;

/**
 * jieba's table knows no English: an unknown Latin word is weighed by its
 * length (6.8 for "pg", 10 for "postgresql" and longer), so "host" counts less
 * than "analytics" and neither outweighs a rare Chinese word by default.
 */
function latinIdf(token: string): number {
  return 6 + 0.4 * Math.min(token.length, 10);
}

export function idfOf(token: string): number {
  if (STOP_WORDS.has(token)) return STOP_WORD_IDF;
  if (!idfs) {
    idfs = new Map();
    for (const line of Buffer.from(idfTable).toString("utf8").split("\n")) {
      const space = line.lastIndexOf(" ");
      if (space > 0) idfs.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
  }
  return idfs.get(token) ?? (/^[a-z0-9_.-]+$/.test(token) ? latinIdf(token) : UNKNOWN_IDF);
}

/**
 * The share of the query's word weight a memory's search text contains, 0..1:
 * each query token weighs its inverse document frequency, so "数据库" counts far
 * more than "的" or "之前". This is the keyword relevance score.
 */
export function coverage(queryTokens: readonly string[], searchText: string): number {
  const have = new Set(searchText.split(" "));
  return weightedCoverage(queryTokens, (t) => have.has(t), idfOf);
}

/** Below this IDF a word is in most texts: looking it up costs much and finds nothing particular. */
const MIN_LOOKUP_IDF = 2;
const MAX_LOOKUP_TOKENS = 16;

/**
 * The tokens worth looking up in the full-text index: the query's own before
 * those of its expansion, each the rarest first, common words left out
 * (unless nothing else is left), at most 16. A memory that holds only common
 * words of the query would score near zero anyway.
 */
export function lookupTokens(queryTokens: readonly string[], extraTokens: readonly string[]): string[] {
  const rarestFirst = (tokens: readonly string[]) => [...new Set(tokens)].sort((a, b) => idfOf(b) - idfOf(a));
  const all = [...new Set([...rarestFirst(queryTokens), ...rarestFirst(extraTokens)])];
  const useful = all.filter((t) => idfOf(t) >= MIN_LOOKUP_IDF);
  return (useful.length > 0 ? useful : all).slice(0, MAX_LOOKUP_TOKENS);
}
