import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import type { Logger } from "pino";
import { packagePath } from "./package-root";

/**
 * CC-CEDICT's English senses of Chinese words and WordNet's synonyms, for
 * bridging a query or a mention to the other language or to other words
 * (docs/lexicon.md). The files are built by `npm run gen:lexicon`
 * (data/lexicon/generate.ts), which already cleaned, ranked and sorted them:
 * loading only indexes lines.
 */
export interface Lexicon {
  /** Chinese words (simplified) one of whose CC-CEDICT senses is this English word or phrase (normalised: NFKC, lower case, single spaces), commonest first. */
  chineseFor(english: string): readonly string[];
  /** The English senses of a Chinese word (simplified or traditional form), as the dictionary orders them. */
  englishFor(chinese: string): readonly string[];
  /** WordNet synonyms of an English word or phrase (every synset it is a lemma of, the word itself excluded), nouns first. */
  synonymsOf(english: string): readonly string[];
  /** What was loaded and what it cost. */
  readonly summary: LexiconSummary;
}

export interface LexiconSummary {
  /** CC-CEDICT headwords (simplified forms of two or more Chinese characters). */
  entries: number;
  /** English senses over all headwords. */
  senses: number;
  /** WordNet synsets of two or more lemmas. */
  synsets: number;
  /** From the first read to the last index built, ms (the event loop kept running in between). */
  loadMs: number;
  /** JavaScript heap grown over the load: approximate, as it counts whatever else ran meanwhile and garbage not yet collected. */
  heapBytes: number;
  /** The unzipped files and their indexes, held outside the JavaScript heap (exact). */
  bufferBytes: number;
  /** The turns of the event loop the parse was spread over: it yields every few milliseconds. */
  slices: number;
}

const DEFAULT_DIR = packagePath("data/lexicon");
const CEDICT_FILE = "cedict.tsv.gz";
const WORDNET_FILE = "wordnet.tsv.gz";
/** Indexing yields to the event loop after this long, so that requests served while the lexicon loads wait at most about this. */
const SLICE_MS = 5;
const NONE: readonly string[] = Object.freeze([]);

const TAB = 0x09;
const NL = 0x0a;
const HASH = 0x23;
const PIPE = 0x7c;
/** WordNet's parts of speech as the first byte of a line, in the order synonymsOf answers. */
const POS_ORDER = new Map([..."nvar"].map((pos, i) => [pos.charCodeAt(0), i]));

const gunzipAsync = promisify(gunzip);

/**
 * The lexicon `load` gives, or undefined when there is none or it cannot be
 * loaded: the caller goes on without translations and synonyms, and the log
 * says what went without them.
 */
export async function lexiconOrNone(
  load: (() => Promise<Lexicon>) | undefined,
  log: Logger,
  without: string,
): Promise<Lexicon | undefined> {
  if (!load) return undefined;
  try {
    return await load();
  } catch (err) {
    log.warn({ err }, `lexicon not loaded: ${without}`);
    return undefined;
  }
}

/** One load per directory per process; a failed load is forgotten so that a later call tries again. */
const loads = new Map<string, Promise<Lexicon>>();

/**
 * The lexicon in `dir` (data/lexicon by default). Files are read and
 * unzipped off the main thread and indexed in slices of a few milliseconds;
 * concurrent and later calls share one load.
 */
export function loadLexicon(dir: string = DEFAULT_DIR): Promise<Lexicon> {
  let load = loads.get(dir);
  if (!load) {
    load = readLexicon(dir).catch((err: unknown) => {
      loads.delete(dir);
      throw err;
    });
    loads.set(dir, load);
  }
  return load;
}

async function readLexicon(dir: string): Promise<Lexicon> {
  const started = performance.now();
  const heapBefore = process.memoryUsage().heapUsed;
  const [cedict, wordnet] = await Promise.all([readBytes(join(dir, CEDICT_FILE)), readBytes(join(dir, WORDNET_FILE))]);

  // "simplified \t traditional|traditional \t sense \t sense…", commonest first (the generator ranked the lines).
  const bySense = new SpanIndex(cedict);
  const bySimplified = new SpanIndex(cedict);
  const byTraditional = new SpanIndex(cedict);
  let slices = await eachLine(cedict, CEDICT_FILE, (line, end) => {
    const simplified = fieldEnd(cedict, line, end, TAB);
    const traditional = fieldEnd(cedict, simplified + 1, end, TAB);
    if (simplified === line || traditional >= end) return false;
    bySimplified.add(line, simplified, line);
    for (let at = simplified + 1; at < traditional; ) {
      const form = fieldEnd(cedict, at, traditional, PIPE);
      byTraditional.add(at, form, line);
      at = form + 1;
    }
    for (let at = traditional + 1; at < end; ) {
      const sense = fieldEnd(cedict, at, end, TAB);
      bySense.add(at, sense, line);
      at = sense + 1;
    }
    return true;
  });

  // "pos \t lemma \t lemma#N…", N being the synset's sense number for that lemma when it is not 1.
  const byLemma = new SpanIndex(wordnet);
  let synsets = 0;
  slices += await eachLine(wordnet, WORDNET_FILE, (line, end) => {
    if (!POS_ORDER.has(wordnet[line]!) || wordnet[line + 1] !== TAB) return false;
    synsets++;
    for (let at = line + 2; at < end; ) {
      const field = fieldEnd(wordnet, at, end, TAB);
      byLemma.add(at, fieldEnd(wordnet, at, field, HASH), line);
      at = field + 1;
    }
    return true;
  });

  const indexes = [bySense, bySimplified, byTraditional, byLemma];
  for (const index of indexes) index.seal();
  const summary: LexiconSummary = {
    entries: bySimplified.size,
    senses: bySense.size,
    synsets,
    loadMs: Math.round(performance.now() - started),
    heapBytes: Math.max(0, process.memoryUsage().heapUsed - heapBefore),
    bufferBytes: cedict.byteLength + wordnet.byteLength + indexes.reduce((n, index) => n + index.byteLength, 0),
    slices,
  };

  return {
    summary,
    chineseFor(english) {
      const found = firstKnown(normalizeEnglish(english), bySense);
      if (!found) return NONE;
      const out: string[] = [];
      for (let e = found.entry; e !== -1; e = bySense.next(e)) {
        const line = bySense.line(e);
        out.push(cedict.toString("utf8", line, fieldEnd(cedict, line, cedict.length, TAB)));
      }
      return out;
    },
    englishFor(chinese) {
      const key = Buffer.from(chinese.normalize("NFKC").trim());
      const simplified = bySimplified.find(key);
      const line = simplified !== -1 ? bySimplified.line(simplified) : byTraditional.line(byTraditional.find(key));
      if (line === -1) return NONE;
      return cedict
        .toString("utf8", line, fieldEnd(cedict, line, cedict.length, NL))
        .split("\t")
        .slice(2);
    },
    synonymsOf(english) {
      const phrase = normalizeEnglish(english);
      const found = firstKnown(phrase, byLemma);
      if (!found) return NONE;
      const synsetsOf: { line: number; pos: number; sense: number }[] = [];
      for (let e = found.entry; e !== -1; e = byLemma.next(e)) {
        const line = byLemma.line(e);
        synsetsOf.push({ line, pos: POS_ORDER.get(wordnet[line]!)!, sense: senseNumber(wordnet, byLemma.keyEnd(e)) });
      }
      synsetsOf.sort((a, b) => a.pos - b.pos || a.sense - b.sense || a.line - b.line);
      const out = new Set<string>();
      for (const { line } of synsetsOf) {
        const fields = wordnet.toString("utf8", line + 2, fieldEnd(wordnet, line, wordnet.length, NL)).split("\t");
        for (const field of fields) out.add(field.replace(/#\d+$/, ""));
      }
      out.delete(found.key);
      out.delete(phrase);
      return [...out];
    },
  };
}

async function readBytes(path: string): Promise<Buffer> {
  return gunzipAsync(await readFile(path));
}

/** The form English is looked up in: NFKC, lower case, single spaces, and no "to " of an infinitive (the senses have none). */
function normalizeEnglish(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^to (?=\S)/, "");
}

/** The phrase's first entry in `index`, or else that of its first base form that is there (see baseForms). */
function firstKnown(phrase: string, index: SpanIndex): { entry: number; key: string } | undefined {
  for (const key of [phrase, ...baseForms(phrase)]) {
    const entry = index.find(Buffer.from(key));
    if (entry !== -1) return { entry, key };
  }
  return undefined;
}

/**
 * What the last word of `phrase` may be before a regular English inflection,
 * likeliest first: plurals ("glaucomas", "databases", "boxes", "allergies")
 * and past or -ing forms ("configured", "deployed", "stopped", "configuring").
 * Tried only when the phrase itself is unknown, so a word the dictionary has
 * ("glasses", "bedding") keeps its own meaning; irregular forms ("mice",
 * "ran") are not undone.
 */
function baseForms(phrase: string): string[] {
  const at = phrase.lastIndexOf(" ") + 1;
  const head = phrase.slice(0, at);
  const word = phrase.slice(at);
  const out: string[] = [];
  const stem = (drop: number, add = "") => {
    const base = word.slice(0, word.length - drop) + add;
    if (base.length >= 3) out.push(head + base);
  };
  const undoubled = (drop: number) => {
    const base = word.slice(0, word.length - drop);
    if (base.length >= 4 && base.at(-1) === base.at(-2)) out.push(head + base.slice(0, -1));
  };
  if (word.endsWith("ies")) stem(3, "y");
  if (word.endsWith("es")) {
    stem(1);
    stem(2);
  } else if (word.endsWith("s") && !word.endsWith("ss")) stem(1);
  if (word.endsWith("ed")) {
    stem(1);
    stem(2);
    undoubled(2);
  }
  if (word.endsWith("ing")) {
    stem(3);
    stem(3, "e");
    undoubled(3);
  }
  return out;
}

/** The sense number written after a WordNet lemma ("car#5"), 1 when there is none. */
function senseNumber(bytes: Uint8Array, at: number): number {
  if (bytes[at] !== HASH) return 1;
  let n = 0;
  for (let i = at + 1; bytes[i]! >= 0x30 && bytes[i]! <= 0x39; i++) n = n * 10 + bytes[i]! - 0x30;
  return n;
}

/** Where the field starting at `at` ends: the next `separator` before `end`, or `end`. */
function fieldEnd(bytes: Uint8Array, at: number, end: number, separator: number): number {
  while (at < end && bytes[at] !== separator) at++;
  return at;
}

/**
 * Calls `take` with each line's start and end (lines starting with "#" are
 * comments), yielding to the event loop every SLICE_MS. The files are the
 * generator's, so a line is only checked for its shape: `take` returns false
 * for a malformed one, which fails the load with where it is.
 */
async function eachLine(
  bytes: Uint8Array,
  file: string,
  take: (start: number, end: number) => boolean,
): Promise<number> {
  let deadline = performance.now() + SLICE_MS;
  let lineNo = 0;
  let slices = 1;
  for (let start = 0; start < bytes.length; ) {
    const end = fieldEnd(bytes, start, bytes.length, NL);
    lineNo++;
    if (end > start && bytes[start] !== HASH && !take(start, end))
      throw new Error(`${file}:${lineNo}: not a lexicon line; regenerate it with npm run gen:lexicon`);
    start = end + 1;
    if ((lineNo & 127) === 0 && performance.now() > deadline) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      deadline = performance.now() + SLICE_MS;
      slices++;
    }
  }
  return slices;
}

/**
 * A hash table from spans of one buffer (a field of a line) to the lines that
 * hold them, several per key in the order added. Typed arrays instead of a Map
 * of strings: the lexicon's 440 k keys as strings and arrays took 80 MiB of
 * heap, and building them caused young-generation collections of 30–40 ms
 * (everything survives), beyond what the event loop may be blocked for.
 */
class SpanIndex {
  size = 0;
  private keys = 0;
  /** Per slot, the first entry of its key + 1; 0 for an empty slot. Open addressing, linear probing, at most half full. */
  private slots = new Int32Array(1024);
  private starts = new Int32Array(512);
  private ends = new Int32Array(512);
  private lines = new Int32Array(512);
  private hashes = new Int32Array(512);
  /** The next entry of the same key, -1 after the last. */
  private nexts = new Int32Array(512);
  /** For a key's first entry, its last one (where the next is appended). */
  private lasts = new Int32Array(512);

  constructor(private readonly bytes: Uint8Array) {}

  get byteLength(): number {
    return [this.slots, this.starts, this.ends, this.lines, this.hashes, this.nexts, this.lasts].reduce(
      (n, a) => n + a.byteLength,
      0,
    );
  }

  /** Once every entry is in: gives back the spare capacity, and what only `add` needed. */
  seal(): void {
    this.starts = this.starts.slice(0, this.size);
    this.ends = this.ends.slice(0, this.size);
    this.lines = this.lines.slice(0, this.size);
    this.hashes = this.hashes.slice(0, this.size);
    this.nexts = this.nexts.slice(0, this.size);
    this.lasts = new Int32Array(0);
  }

  add(start: number, end: number, line: number): void {
    if (this.size === this.starts.length) this.growEntries();
    const e = this.size++;
    const h = hash(this.bytes, start, end);
    this.starts[e] = start;
    this.ends[e] = end;
    this.lines[e] = line;
    this.hashes[e] = h;
    this.nexts[e] = -1;
    const mask = this.slots.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const first = this.slots[slot]! - 1;
      if (first === -1) {
        this.slots[slot] = e + 1;
        this.lasts[e] = e;
        if (++this.keys * 2 > this.slots.length) this.growSlots();
        return;
      }
      if (this.hashes[first] === h && this.equals(first, this.bytes, start, end)) {
        this.nexts[this.lasts[first]!] = e;
        this.lasts[first] = e;
        return;
      }
    }
  }

  /** The first entry whose key is `key`, or -1. */
  find(key: Uint8Array): number {
    const h = hash(key, 0, key.length);
    const mask = this.slots.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const first = this.slots[slot]! - 1;
      if (first === -1 || (this.hashes[first] === h && this.equals(first, key, 0, key.length))) return first;
    }
  }

  /** The entry after `entry` with the same key, or -1. */
  next(entry: number): number {
    return this.nexts[entry]!;
  }

  /** Where the line holding `entry` starts; -1 for no entry. */
  line(entry: number): number {
    return entry === -1 ? -1 : this.lines[entry]!;
  }

  /** Where `entry`'s key ends in the buffer. */
  keyEnd(entry: number): number {
    return this.ends[entry]!;
  }

  private equals(entry: number, other: Uint8Array, start: number, end: number): boolean {
    const from = this.starts[entry]!;
    if (this.ends[entry]! - from !== end - start) return false;
    for (let i = 0; i < end - start; i++) if (this.bytes[from + i] !== other[start + i]) return false;
    return true;
  }

  private growEntries(): void {
    const grown = (a: Int32Array) => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.starts = grown(this.starts);
    this.ends = grown(this.ends);
    this.lines = grown(this.lines);
    this.hashes = grown(this.hashes);
    this.nexts = grown(this.nexts);
    this.lasts = grown(this.lasts);
  }

  private growSlots(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    const mask = this.slots.length - 1;
    // An indexed loop: for…of over a typed array stays slow until optimised, 15 ms here for 32 k slots.
    for (let i = 0; i < old.length; i++) {
      const held = old[i]!;
      if (held === 0) continue;
      let slot = this.hashes[held - 1]! & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = held;
    }
  }
}

/** FNV-1a over a span of bytes, as a signed 32-bit integer (what an Int32Array holds). */
function hash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h | 0;
}
