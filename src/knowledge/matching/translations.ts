import type { Lexicon } from "../../core/lexicon";
import { type Mention, mentionOf } from "./mention";

/** A name reached through the dictionary counts a little less than one from the deployment's vocabulary (0.93). */
export const TRANSLATION_WEIGHT = 0.9;
/** Translations looked up per mention, at most: the dictionary lists the commonest first. */
const MAX_TRANSLATIONS = 3;
/** Longer than this, a mention is a question, not a name: it is not translated whole. */
const MAX_WORDS = 5;
/** An English sense of fewer letters is not looked up. */
const MIN_SENSE_LETTERS = 4;

/**
 * The mention's CC-CEDICT translations (core/lexicon.ts), as mentions to look
 * up: an English name or abbreviation gives the Chinese words one of whose
 * senses it is ("migraine" → 偏头痛, "COPD" → 慢性阻塞性肺病), a Chinese name
 * its English senses, for a network that names its instances in English.
 * They are looked up and scored like any name, never taken on trust: a
 * translation no instance is named finds nothing.
 */
export function translationsOf(m: Mention, lexicon: Lexicon | undefined): Mention[] {
  if (!lexicon || m.key === "" || m.text.split(/\s+/).length > MAX_WORDS) return [];
  const words = m.latin
    ? lexicon.chineseFor(m.text)
    : /^\p{Script=Han}{2,}$/u.test(m.key)
      ? // A short sense is a greeting or an abbreviation of many things ("hi" for 你好 is not HIV).
        lexicon.englishFor(m.text).filter((s) => s.replace(/[^a-z]/g, "").length >= MIN_SENSE_LETTERS)
      : [];
  const known = new Set([m.key, ...m.alternates.map((a) => a.mention.key)]);
  const out: Mention[] = [];
  for (const w of words.slice(0, MAX_TRANSLATIONS)) {
    const t = mentionOf(w);
    if (t.key === "" || known.has(t.key)) continue;
    known.add(t.key);
    out.push(t);
  }
  return out;
}
