import { idf as idfTable } from "@node-rs/jieba/dict.js";
import { normalizeText, STOP_WORDS, tokenize, tokenizer } from "../core/text";
import type { Glossary } from "./glossary";
import type { LexiconBridge } from "./lexicon-bridge";

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

/**
 * The search text a memory is stored with: its tokens, the character pairs of
 * the Chinese words jieba does not know, then the markers of the glossary
 * groups it names (glossary.ts), space-separated.
 *
 * jieba joins characters it does not know into new words by their context:
 * "封版" alone is one word, but "封版前的回归测试" gives "封版前", so the memory
 * would never hold "封版". Its pairs ("封版", "版前") are held too. A marker
 * is how a memory that says "code freeze" is found by "封版" and one that says
 * 只读从库 by "read replica", phrases and word boundaries included.
 */
export function searchTextOf(parts: readonly string[], glossary: Glossary): string {
  const text = parts.filter((p) => p !== "").join("\n");
  const tokens = searchTokens(text);
  const pairs = tokens.filter((t) => t.length >= 3 && /^\p{Script=Han}+$/u.test(t) && !knownWord(t)).flatMap(bigramsOf);
  return [...new Set([...tokens, ...pairs, ...glossary.markers(text)])].join(" ");
}

function bigramsOf(word: string): string[] {
  const chars = [...word];
  return chars.slice(1).map((c, i) => chars[i]! + c);
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
 * Everyday English words that carry little topic but are no stop words: they
 * weigh what jieba gives common Chinese verbs (使用 4.5, 看 3.8), not what an
 * unknown English word weighs, so "does the report use UTC" is about the
 * report and UTC, and a memory sharing only "use" scores little.
 */
const COMMON_ENGLISH_IDF = 4;
const COMMON_ENGLISH: ReadonlySet<string> = new Set(
  (
    "if would should could can will shall may might must also just only still even again ever never always often " +
    "very really quite much many more most less least few lot lots some any all each every both either neither other " +
    "another such same own new old good bad right wrong big small long short high low next first second third " +
    "here there now today then once up down out over under off away back around across after before since until " +
    "while during between within without through again yet already soon later " +
    "get gets got getting go goes went going gone make makes made making use uses used using need needs needed " +
    "want wants wanted like likes liked know knows knew think thinks thought see sees saw seen look looks looked " +
    "come comes came take takes took taken give gives gave given find finds found tell tells told ask asks asked " +
    "say says put puts keep keeps kept let lets seem seems try tries tried call calls called work works worked " +
    "thing things way ways time times day days week weeks month months year years part place case point " +
    "one two three four five ten hundred thousand people person someone something anything everything nothing " +
    "um ok okay yeah thanks thank hi hello dear sure yes"
  ).split(" "),
);

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
  if (COMMON_ENGLISH.has(token)) return COMMON_ENGLISH_IDF;
  return idfTableOf().get(token) ?? (/^[a-z0-9_.-]+$/.test(token) ? latinIdf(token) : UNKNOWN_IDF);
}

/** True when the word is in jieba's dictionary, not one its HMM made up from context. */
function knownWord(word: string): boolean {
  return idfTableOf().has(word) || tokenizer().cut(word, false).length === 1;
}

function idfTableOf(): Map<string, number> {
  if (!idfs) {
    idfs = new Map();
    for (const line of Buffer.from(idfTable).toString("utf8").split("\n")) {
      const space = line.lastIndexOf(" ");
      if (space > 0) idfs.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
  }
  return idfs;
}

/** What an equivalent counts for, against the word typed: a translation or a synonym is not the same word. */
export const EQUIVALENT_CREDIT = 0.8;
/**
 * What a dictionary's phrase counts for (lexicon-bridge.ts): less than the
 * glossary's equivalents, which a deployment wrote for its users' words; a
 * dictionary knows every sense of a word, not the one meant.
 */
export const LEXICON_CREDIT = 0.75;

/**
 * A query as keyword search weighs it: every search token of the query with
 * what else may stand for it.
 */
export interface KeywordQuery {
  /** The query's search tokens; each weighs its IDF. */
  tokens: string[];
  /**
   * For each of `tokens`, what counts for it at EQUIVALENT_CREDIT when the
   * memory lacks it: the markers of the glossary groups of the term it is
   * part of, and those groups' terms that are search tokens themselves (so
   * memories stored before a group existed are found through it too); for an
   * English word, its singular or plural.
   */
  equivalents: string[][];
  /**
   * For each of `tokens`, the dictionary's phrases for it (lexicon-bridge.ts):
   * a memory holding every token of one, and neither the word nor an
   * equivalent, is credited LEXICON_CREDIT of it.
   */
  phrases: string[][][];
  /** The agent's keywords and the LLM's terms beyond the query: their coverage counts at EQUIVALENT_CREDIT. */
  extra: string[];
}

/**
 * The keyword query of `query` (plus `extra`, the agent's keywords and the
 * LLM's terms), and the glossary terms it brought that the query does not
 * already hold (for search_query_expanded).
 */
export function keywordQueryOf(
  query: string,
  extra: string,
  glossary: Glossary,
  bridge?: LexiconBridge,
): { query: KeywordQuery; expansion: string[] } {
  const tokens = searchTokens(query);
  const at = new Map(tokens.map((t, i) => [t, i]));
  const equivalents = tokens.map((t) => new Set<string>(numberForms(t)));
  const typed = normalizeText(query);
  const expansion = new Set<string>();
  for (const occurrence of glossary.occurrences(query)) {
    const covered = searchTokens(occurrence.term).filter((t) => at.has(t));
    const alternatives = new Set<string>();
    for (const group of occurrence.groups) {
      alternatives.add(group.marker);
      for (const term of group.terms) {
        if (term === occurrence.term) continue;
        if (!typed.includes(term)) expansion.add(term);
        if (searchTokens(term).includes(term) && idfOf(term) >= MIN_LOOKUP_IDF) alternatives.add(term);
      }
    }
    for (const t of covered) for (const a of alternatives) if (a !== t) equivalents[at.get(t)!]!.add(a);
  }
  const bridged = bridge?.phrasesFor(query, tokens);
  for (const term of bridged?.terms ?? []) if (!typed.includes(term)) expansion.add(term);
  return {
    query: {
      tokens,
      equivalents: equivalents.map((s) => [...s]),
      phrases: bridged?.phrases ?? tokens.map(() => []),
      extra: searchTokens(extra).filter((t) => !at.has(t)),
    },
    expansion: [...expansion],
  };
}

/**
 * The other number of an English noun (brokers → broker, query → queries),
 * as it may be written: no stemming beyond that, and nothing for short or
 * common words.
 */
function numberForms(token: string): string[] {
  if (!/^[a-z]{4,}$/.test(token) || STOP_WORDS.has(token) || COMMON_ENGLISH.has(token)) return [];
  if (token.endsWith("ies")) return [`${token.slice(0, -3)}y`];
  if (/(?:ss|us|is)$/.test(token)) return [`${token}es`];
  if (token.endsWith("es")) return [token.slice(0, -1), token.slice(0, -2)];
  if (token.endsWith("s")) return [token.slice(0, -1)];
  if (/[^aeiou]y$/.test(token)) return [`${token.slice(0, -1)}ies`];
  if (/(?:s|x|z|ch|sh)$/.test(token)) return [`${token}es`];
  return [`${token}s`];
}

/**
 * The share of the query's word weight (IDF) a memory holds, 0..1, each word
 * counting 1 when the memory holds it and EQUIVALENT_CREDIT when it holds one
 * of its equivalents only; or the coverage of the extra terms at
 * EQUIVALENT_CREDIT, when that is more. 1 only when the memory holds every
 * word of the query. `has` says whether the memory holds a token.
 */
export function keywordShare(q: KeywordQuery, has: (token: string) => boolean): number {
  let total = 0;
  let held = 0;
  q.tokens.forEach((t, i) => {
    const w = idfOf(t);
    total += w;
    if (has(t)) held += w;
    else if (q.equivalents[i]!.some(has)) held += EQUIVALENT_CREDIT * w;
    else if (q.phrases[i]!.some((p) => p.every(has))) held += LEXICON_CREDIT * w;
  });
  let extraTotal = 0;
  let extraHeld = 0;
  for (const t of q.extra) {
    const w = idfOf(t);
    extraTotal += w;
    if (has(t)) extraHeld += w;
  }
  const own = total === 0 ? 0 : held / total;
  const extra = extraTotal === 0 ? 0 : (EQUIVALENT_CREDIT * extraHeld) / extraTotal;
  return Math.max(own, extra);
}

/** Below this IDF a word is in most texts: looking it up costs much and finds nothing particular. */
const MIN_LOOKUP_IDF = 2;
const MAX_LOOKUP_TOKENS = 48;

/**
 * The tokens worth looking up in the full-text index: the query's own before
 * its equivalents and extra terms, each the rarest first, common words left
 * out (unless nothing else is left), at most 32. A memory that holds only
 * common words of the query would score near zero anyway.
 */
export function lookupTokens(q: KeywordQuery): string[] {
  const rarestFirst = (tokens: readonly string[]) => [...new Set(tokens)].sort((a, b) => idfOf(b) - idfOf(a));
  // A phrase is looked up by its rarest token: a memory holding the phrase holds that one.
  const phrases = q.phrases.flat().map((p) => rarestFirst(p)[0]!);
  const all = [
    ...new Set([
      ...rarestFirst(q.tokens),
      ...rarestFirst([...q.equivalents.flat(), ...q.extra]),
      ...rarestFirst(phrases),
    ]),
  ];
  const useful = all.filter((t) => idfOf(t) >= MIN_LOOKUP_IDF);
  return (useful.length > 0 ? useful : all).slice(0, MAX_LOOKUP_TOKENS);
}
