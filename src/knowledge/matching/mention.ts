import { bigrams, comparable, contentTokens, words } from "../../core/text";

/**
 * A mention: what a user or an agent wrote to name an instance ("上气道梗阻",
 * "甲亢", "Parkinson disease"), in every form the matcher compares or asks for.
 */
export interface Mention {
  /** As given, trimmed. */
  text: string;
  /** comparable(text): NFKC, lower case, no punctuation, symbols or spaces. */
  key: string;
  /** `key` without filler characters (氏, 性, 的, 之), which people drop and add freely. */
  loose: string;
  /** The characters of `loose` (code points). */
  chars: string[];
  /** Character bigrams of `loose`. */
  grams: ReadonlySet<string>;
  /** Its meaningful words (stop words out; single characters only when nothing longer), comparable. */
  tokens: string[];
  /** Written mostly in Latin letters (an English name or abbreviation). */
  latin: boolean;
  /** The written forms a stored value may equal: as typed, NFKC, full-width, and the usual cases of Latin text. */
  variants: string[];
  /** What else it may stand for, from the vocabulary (vocabulary.ts): looked up and scored beside it. */
  alternates: readonly Alternate[];
}

/** Something else a mention may stand for (vocabulary.ts), and how much a match through it counts. */
export interface Alternate {
  mention: Mention;
  /** "dictionary": an instance's other name (its matches count as alias); "equivalent": the same words written formally. */
  via: "dictionary" | "equivalent";
  weight: number;
}

/** The mention and its alternates: every form looked up for it. */
export function formsOf(m: Mention): Mention[] {
  return [m, ...m.alternates.map((a) => a.mention)];
}

/**
 * Characters that carry no identity in a name: "帕金森氏病" is "帕金森病",
 * "缺铁性贫血" is "缺铁贫血" as people say it. Both sides are compared without them.
 */
const FILLERS = /[氏性的之]/gu;

/**
 * A number counting a type, stage or grade is written in Arabic, Roman or
 * Chinese numerals alike (2型, Ⅱ型 and 二型 糖尿病; III期, 三期): compared as digits.
 */
const ORDINAL = /(iv|ix|v?i{1,3}|x|[一二三四五六七八九十])(?=[型期级度类代价相阶])/gu;
const ORDINALS: Record<string, string> = {
  i: "1",
  ii: "2",
  iii: "3",
  iv: "4",
  v: "5",
  vi: "6",
  vii: "7",
  viii: "8",
  ix: "9",
  x: "10",
  一: "1",
  二: "2",
  三: "3",
  四: "4",
  五: "5",
  六: "6",
  七: "7",
  八: "8",
  九: "9",
  十: "10",
};

/** The comparable form without fillers, ordinals as digits (the comparable form itself when that would leave nothing). */
export function looseKey(text: string): string {
  const key = comparable(text);
  const loose = key.replace(FILLERS, "").replace(ORDINAL, (n: string) => ORDINALS[n] ?? n);
  return loose === "" ? key : loose;
}

export function mentionOf(text: string): Mention {
  const trimmed = text.trim();
  const key = comparable(trimmed);
  const loose = looseKey(trimmed);
  const latinLetters = (key.match(/[a-z]/g) ?? []).length;
  const all = [
    ...new Set(
      words(trimmed)
        .filter((w) => contentTokens(w).length > 0)
        .map(comparable)
        .filter((w) => w !== ""),
    ),
  ];
  const long = all.filter((w) => [...w].length >= 2);
  return {
    text: trimmed,
    key,
    loose,
    chars: [...loose],
    grams: new Set(bigrams(loose)),
    tokens: long.length > 0 ? long : all,
    latin: latinLetters > 0 && latinLetters >= [...key].length / 2,
    variants: writtenForms(trimmed),
    alternates: [],
  };
}

/**
 * The forms a mention may be stored in. The platform compares raw strings
 * (`==` exactly; `like` as SQL LIKE), so each form is asked for: as typed,
 * NFKC (full-width letters, digits and brackets made half-width), full-width,
 * with its spaces collapsed, and for Latin text lower case, upper case and
 * each word capitalised.
 */
export function writtenForms(text: string): string[] {
  const nfkc = text.normalize("NFKC").replace(/\s+/g, " ").trim();
  const full = nfkc.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
  const forms = [text, nfkc, full];
  if (/[A-Za-z]/.test(nfkc)) {
    forms.push(
      nfkc.toLowerCase(),
      nfkc.toUpperCase(),
      nfkc.toLowerCase().replace(/(^|[\s\-(/])([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase()),
    );
  }
  return [...new Set(forms.filter((f) => f !== ""))];
}
