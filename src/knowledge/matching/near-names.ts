import type { Lexicon } from "../../core/lexicon";
import { soundDistance } from "../../core/pinyin";
import { words } from "../../core/text";
import type { Mention } from "./mention";
import { keyOf, MAX_EDITS, NAME_LIST } from "./score";

/**
 * Near names: a name a character or two from a mention (肝纤维化 and
 * 肺纤维化, 帕金深病 and 帕金森病), and whether the mention misspells it or
 * names something else. A typo puts a character that sounds like the name's
 * (people type by pinyin), or one that breaks a word of the name and leaves
 * no word in its place (胆襄炎 for 胆囊炎); another name puts another word
 * where the name has one (浅静脉 for 深静脉, 髋骨 for 膝骨, 鼻炎 for 鼻窦炎).
 * The matcher asks these questions of its candidates (matcher.ts, anotherName).
 */

/** How a mention aligns with the nearest of a value's names, when it is at most MAX_EDITS edits away. */
export interface Nearness {
  /** The cheapest alignment's cost (a same-sounding character costs less than one edit); Infinity past MAX_EDITS. */
  cost: number;
  /** The mention's characters substituted by an unlike character of the same kind (Han for Han, a letter for a letter, a digit for a digit). */
  subs: readonly string[];
  /** The name aligned with (comparable form), and the alignment; absent when none is near. */
  name?: string;
  alignment?: Alignment;
  /** swapsWords's and toldApartByDictionary's answers, once asked (a call asks again at each stage). */
  swaps?: boolean;
  told?: { lexicon: Lexicon; apart: boolean };
}

const FAR: Nearness = Object.freeze({ cost: Number.POSITIVE_INFINITY, subs: Object.freeze([]) });

/**
 * The characters of the mention that stand where the name has a different
 * character that does not sound like it (肝 for 肺 in 肝纤维化 → 肺纤维化, 三
 * for 二 in 三尖瓣狭窄 → 二尖瓣狭窄), in the cheapest alignment of the two;
 * for a value listing names, against the name closest to the mention; none
 * when more than two edits apart. Characters dropped or added are not substitutions, nor are same-sounding
 * ones (people type by pinyin).
 */
export function unlikeSubstitutions(m: Mention, value: string): readonly string[] {
  return nearness(m, value).subs;
}

/** How near the mention is to the value (to the nearest of the names it lists); FAR past MAX_EDITS, and for Latin mentions. */
export function nearness(m: Mention, value: string): Nearness {
  if (m.latin) return FAR;
  let known = nearnesses.get(m);
  if (!known) nearnesses.set(m, (known = new Map()));
  let near = known.get(value);
  if (near === undefined) {
    const mine = [...m.key];
    let best: Nearness | undefined;
    for (const part of [value, ...value.split(NAME_LIST).filter((p) => p !== "" && p !== value)]) {
      // On the comparable forms, fillers kept: 性 in 性腺 is no filler.
      const name = keyOf(part);
      const theirs = [...name];
      // Lengths further apart than the edits allowed need no alignment to be too far.
      if (Math.abs(mine.length - theirs.length) > MAX_EDITS) continue;
      const alignment = align(mine, theirs);
      if (!best || alignment.cost < best.cost) best = { cost: alignment.cost, subs: alignment.subs, name, alignment };
    }
    // Further apart, it is a related name at best (梗阻 in 肠梗阻 for 上气道梗阻), not a near one.
    near = best && best.cost <= MAX_EDITS ? best : FAR;
    known.set(value, near);
  }
  return near;
}

/** A call checks its mentions against the same names at each stage: the answer is kept with the mention. */
const nearnesses = new WeakMap<Mention, Map<string, Nearness>>();

/**
 * Whether a near name and the mention differ by whole words (jieba's
 * dictionary, as the mention's words are cut): where an unlike character
 * stands, the name's word there is replaced whole, and the mention has a
 * word of its own in its place, either itself replaced whole (浅 for 深 in
 * 深静脉血栓形成) or a word of two characters or more the name lacks (髋骨
 * for 膝 in 膝骨关节炎). A typo breaks one of the name's words instead
 * (胆襄炎 for 胆囊炎, 哮揣 for 哮喘), and a word of the name replaced only in
 * part may be the same word written otherwise (弥漫性 for 弥散性).
 */
export function swapsWords(m: Mention, value: string): boolean {
  const near = nearness(m, value);
  if (!near.alignment || near.name === undefined || near.alignment.unlike.length === 0) return false;
  near.swaps ??= wordsSwapped(m.key, near.name, near.alignment);
  return near.swaps;
}

function wordsSwapped(key: string, name: string, a: Alignment): boolean {
  const mine = wordsOf(key);
  const theirs = wordsOf(name);
  if (!mine || !theirs) return false;
  for (const [i, j] of a.unlike) {
    if (!replacedWhole(theirs, theirs.at[j]!, a.editedB)) continue;
    const w = mine.words[mine.at[i]!]!;
    if (replacedWhole(mine, mine.at[i]!, a.editedA) || ([...w].length >= 2 && !name.includes(w))) return true;
  }
  return false;
}

/**
 * Whether the dictionary (CC-CEDICT) tells the mention from a near name:
 * both are headwords, and no sense of one is a sense of the other (戊型肝炎,
 * hepatitis E, beside 乙型肝炎, hepatitis B); or the name spells a word of
 * the mention with characters more, and the two words are headwords with no
 * sense in common (鼻炎, rhinitis, in 慢性鼻炎 beside 鼻窦炎, sinusitis, in
 * 慢性鼻窦炎). Only for a name that differs by more than same-sounding
 * characters: typed by pinyin, a typo is often a word (通风 for 痛风). A word the
 * dictionary lacks, on either side, tells nothing.
 */
export function toldApartByDictionary(m: Mention, value: string, lexicon: Lexicon): boolean {
  const near = nearness(m, value);
  if (!near.alignment || near.name === undefined || near.cost < 1) return false;
  if (near.told?.lexicon !== lexicon) near.told = { lexicon, apart: apart(m.key, near.name, near.alignment, lexicon) };
  return near.told.apart;
}

function apart(key: string, name: string, a: Alignment, lexicon: Lexicon): boolean {
  if (differentWords(lexicon, key, name)) return true;
  if (a.dropped.length === 0) return false;
  const mine = wordsOf(key);
  if (!mine) return false;
  const chars = [...name];
  for (const k of a.dropped) {
    // A character dropped inside a word of the mention (before index k, so between k - 1 and k).
    if (k === 0 || k >= mine.at.length || mine.at[k - 1] !== mine.at[k]) continue;
    const wi = mine.at[k]!;
    const word = mine.words[wi]!;
    if (name.includes(word)) continue;
    // The name's characters from the first aligned with the word's to the last: the word as the name spells it.
    const aligned = mine.at.flatMap((w, c) => (w === wi && a.map[c]! >= 0 ? [a.map[c]!] : []));
    if (aligned.length === 0) continue;
    const spelt = chars.slice(aligned[0]!, aligned.at(-1)! + 1).join("");
    if (differentWords(lexicon, word, spelt)) return true;
  }
  return false;
}

/** Both are headwords of the dictionary, and no sense of one is a sense of the other. */
function differentWords(lexicon: Lexicon, a: string, b: string): boolean {
  const senses = sensesOf(lexicon, a);
  if (senses.length === 0) return false;
  const others = sensesOf(lexicon, b);
  return others.length > 0 && !others.some((s) => senses.includes(s));
}

/** A word's senses, kept: the same mentions and names are asked about call after call. */
function sensesOf(lexicon: Lexicon, word: string): readonly string[] {
  let known = sensesKnown.get(lexicon);
  if (!known) sensesKnown.set(lexicon, (known = new Map()));
  let senses = known.get(word);
  if (senses === undefined) {
    senses = lexicon.englishFor(word);
    if (known.size >= CUT_CACHED) known.clear();
    known.set(word, senses);
  }
  return senses;
}

const sensesKnown = new WeakMap<Lexicon, Map<string, readonly string[]>>();

interface Words {
  words: readonly string[];
  /** Per character, the index of the word it is in. */
  at: readonly number[];
}

/** Whether every character of word `wi` is among the edited ones. */
function replacedWhole(side: Words, wi: number, edited: ReadonlySet<number>): boolean {
  for (let k = 0; k < side.at.length; k++) if (side.at[k] === wi && !edited.has(k)) return false;
  return true;
}

/** A comparable key's jieba words (precise mode: words of the dictionary, or single characters); undefined when they do not spell it. */
function wordsOf(key: string): Words | undefined {
  let w = cut.get(key);
  if (w === undefined) {
    const ws = words(key);
    const at: number[] = [];
    ws.forEach((word, i) => {
      for (const _ of word) at.push(i);
    });
    w = ws.join("") === key ? { words: ws, at } : null;
    if (cut.size >= CUT_CACHED) cut.clear();
    cut.set(key, w);
  }
  return w ?? undefined;
}

/** Near names recur across calls: their words are kept, up to this many. */
const CUT_CACHED = 20_000;
const cut = new Map<string, Words | null>();

/** The cheapest alignment of a mention (a) with a name (b), and where its edits are. */
interface Alignment {
  cost: number;
  subs: string[];
  /** Chinese characters substituted by an unlike one: [index in a, index in b]. */
  unlike: [number, number][];
  /** Characters of a substituted by an unlike one, or added. */
  editedA: Set<number>;
  /** Characters of b substituted by an unlike one, or dropped. */
  editedB: Set<number>;
  /** Where characters of b were dropped: before this index of a. */
  dropped: number[];
  /** Per character of a, the character of b it is aligned with; -1 for one added. */
  map: number[];
}

/**
 * Edit distance with same-sounding substitutions cheap and adjacent swaps one
 * edit (高血脂症 for 高脂血症), and the characters of `a` substituted on one
 * cheapest path by a character of the same kind (Han for Han, a Latin letter
 * for a letter, a digit for a digit: "a" for "α", "h" for "小时" are the same
 * thing written otherwise).
 */
function align(a: readonly string[], b: readonly string[]): Alignment {
  const cols = b.length + 1;
  const d = new Float64Array((a.length + 1) * cols);
  const sub = (i: number, j: number) => (a[i - 1] === b[j - 1] ? 0 : soundDistance(a[i - 1]!, b[j - 1]!));
  const swap = (i: number, j: number) => i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1];
  for (let i = 0; i <= a.length; i++) d[i * cols] = i;
  for (let j = 0; j <= b.length; j++) d[j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(d[(i - 1) * cols + j]! + 1, d[i * cols + j - 1]! + 1, d[(i - 1) * cols + j - 1]! + sub(i, j));
      if (swap(i, j)) best = Math.min(best, d[(i - 2) * cols + j - 2]! + 1);
      d[i * cols + j] = best;
    }
  }
  const out: Alignment = {
    cost: d[a.length * cols + b.length]!,
    subs: [],
    unlike: [],
    editedA: new Set(),
    editedB: new Set(),
    dropped: [],
    map: new Array<number>(a.length).fill(-1),
  };
  const drop = (i: number, j: number) => {
    out.editedB.add(j);
    out.dropped.push(i);
  };
  let i = a.length;
  let j = b.length;
  while (i > 0 && j > 0) {
    const here = d[i * cols + j]!;
    if (swap(i, j) && here === d[(i - 2) * cols + j - 2]! + 1) {
      out.map[i - 1] = j - 2;
      out.map[i - 2] = j - 1;
      i -= 2;
      j -= 2;
    } else if (here === d[(i - 1) * cols + j - 1]! + sub(i, j)) {
      out.map[i - 1] = j - 1;
      if (sub(i, j) === 1) {
        const x = a[i - 1]!;
        const y = b[j - 1]!;
        if (kindOf(x) === kindOf(y)) {
          out.subs.push(x);
          if (kindOf(x) === "han") out.unlike.push([i - 1, j - 1]);
        }
        out.editedA.add(i - 1);
        out.editedB.add(j - 1);
      }
      i--;
      j--;
    } else if (here === d[(i - 1) * cols + j]! + 1) out.editedA.add(--i);
    else drop(i, --j);
  }
  while (i > 0) out.editedA.add(--i);
  while (j > 0) drop(0, --j);
  return out;
}

type Kind = "han" | "latin" | "digit" | "other";

function kindOf(c: string): Kind {
  let k = kinds.get(c);
  if (k === undefined) {
    k = /\p{Script=Han}/u.test(c) ? "han" : /[a-z]/.test(c) ? "latin" : /\d/.test(c) ? "digit" : "other";
    kinds.set(c, k);
  }
  return k;
}

/** Characters' kinds, looked up once each (a few thousand characters in all). */
const kinds = new Map<string, Kind>();
