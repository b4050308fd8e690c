import type { Lexicon } from "../core/lexicon";
import { normalizeText, STOP_WORDS } from "../core/text";

/**
 * What a query's words may be written as in a memory that the user's words
 * do not reach: the other language (CC-CEDICT: 堡垒机 ↔ "bastion host",
 * "migraine" ↔ 偏头痛), a synonym (WordNet: "car" ↔ "automobile"), and a
 * Chinese word's Chinese synonyms through its English sense (健身房 → "gym"
 * → 体育馆). Each is a phrase: a memory holds it when it holds all of its
 * search tokens. They count below the glossary's equivalents (search-text.ts):
 * a dictionary knows the words, not the user's meaning.
 */
export interface LexiconBridge {
  /**
   * For each of `tokens`, the phrases (search tokens, all needed) that stand
   * for it; and the dictionary's words behind them, as the query's expansion
   * shows them (search_query_expanded), the first MAX_SHOWN.
   */
  phrasesFor(query: string, tokens: readonly string[]): { phrases: string[][][]; terms: string[] };
}

interface Phrase {
  text: string;
  tokens: string[];
}

/** Dictionary words listed in search_query_expanded, at most: the rest are searched all the same. */
const MAX_SHOWN = 10;

/** Senses of a Chinese word taken, at most: the dictionary lists the commonest first. */
const MAX_SENSES = 3;
/** Chinese words per English sense or phrase, at most. */
const MAX_CHINESE = 3;
/** Synonyms per English word, at most. */
const MAX_SYNONYMS = 6;
/** Phrases per query token, at most: a common word has dozens of senses and synonyms. */
const MAX_PHRASES = 24;
/** English spans of the query looked up whole, in words: "bastion host", "high blood pressure". */
const MAX_SPAN = 3;
/**
 * Distinct spans looked up per query, at most: a query of 2000 characters
 * (the limit) holds ~900, a question a dozen; the cap keeps a hostile query's
 * lookups to a few milliseconds.
 */
const MAX_SPANS = 96;

export function lexiconBridge(lexicon: Lexicon, tokensOf: (text: string) => string[]): LexiconBridge {
  /** A dictionary word or phrase as written, and its search tokens (all needed). */
  const phrase = (text: string): Phrase => ({ text, tokens: tokensOf(text).filter((t) => !STOP_WORDS.has(t)) });

  function fromChinese(word: string): Phrase[] {
    const out: Phrase[] = [];
    for (const sense of lexicon.englishFor(word).slice(0, MAX_SENSES)) {
      out.push(phrase(sense));
      for (const other of lexicon.chineseFor(sense).slice(0, MAX_CHINESE)) if (other !== word) out.push(phrase(other));
    }
    return out;
  }

  function fromEnglish(span: string, single: boolean): Phrase[] {
    const out = lexicon
      .chineseFor(span)
      .slice(0, MAX_CHINESE)
      .map((w) => phrase(w));
    if (single) for (const s of lexicon.synonymsOf(span).slice(0, MAX_SYNONYMS)) out.push(phrase(s));
    return out;
  }

  return {
    phrasesFor(query, tokens) {
      const at = new Map(tokens.map((t, i) => [t, i]));
      const found = tokens.map(() => new Map<string, string[]>());
      const terms = new Set<string>();
      const add = (i: number, phrases: Phrase[]) => {
        for (const p of phrases) if (p.tokens.length > 0 && !p.tokens.every((t) => at.has(t))) terms.add(p.text);
        for (const p of phrases.flatMap((x) => withInflections(x.tokens))) {
          if (p.length === 0 || p.every((t) => at.has(t))) continue;
          if (found[i]!.size < MAX_PHRASES) found[i]!.set(p.join(" "), p);
        }
      };
      tokens.forEach((t, i) => {
        if (/^\p{Script=Han}{2,}$/u.test(t) && !STOP_WORDS.has(t)) add(i, fromChinese(t));
      });
      // English words, and runs of up to three of them, as the query writes them.
      const words = normalizeText(query).match(/[a-z][a-z0-9-]*/g) ?? [];
      // A span repeated in the query maps to the same tokens: looked up once.
      const looked = new Set<string>();
      for (let start = 0; start < words.length; start++) {
        for (let len = Math.min(MAX_SPAN, words.length - start); len >= 1; len--) {
          const span = words.slice(start, start + len);
          const key = span.join(" ");
          if (looked.has(key) || looked.size >= MAX_SPANS) continue;
          looked.add(key);
          const covered = span.map((w) => at.get(w)).filter((i): i is number => i !== undefined);
          if (covered.length === 0 || (len === 1 && STOP_WORDS.has(span[0]!))) continue;
          const phrases = fromEnglish(key, len === 1);
          for (const i of covered) add(i, phrases);
        }
      }
      return { phrases: found.map((m) => [...m.values()]), terms: [...terms].slice(0, MAX_SHOWN) };
    },
  };
}

/**
 * A one-word English phrase and the forms a memory may write it in (the
 * dictionary gives "prefix", the memory says "prefixed"): -s, -es, -ed, -d,
 * -ing, a final e dropped before -ing. Regular forms only.
 */
function withInflections(p: string[]): string[][] {
  const w = p[0]!;
  if (p.length !== 1 || !/^[a-z]{3,}$/.test(w)) return [p];
  const stem = w.endsWith("e") ? w.slice(0, -1) : w;
  return [...new Set([w, `${w}s`, `${w}es`, `${stem}ed`, `${stem}ing`])].map((f) => [f]);
}
