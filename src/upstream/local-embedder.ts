import { normalizeText, tokenize } from "../core/text";

/** Dimensions of the local lexical embedding. */
export const LOCAL_EMBEDDING_DIMENSIONS = 512;

/**
 * The local lexical embedder: not a neural model. It hashes the text's
 * character 1- to 3-grams and its jieba tokens into a fixed-size vector
 * (feature hashing with signs), L2-normalised, so cosine similarity measures
 * shared characters and words. It runs in-process with nothing installed and
 * is what "embeddings" means when no embeddings endpoint is configured; it is
 * always named "local-lexical" in answers and logs.
 */
export const LOCAL_EMBEDDER_NAME = "local-lexical";

export function embedLocally(text: string): Float32Array {
  const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
  const normalized = normalizeText(text);
  // The text's characters as code points, a run of anything but letters and digits as one space. A gram
  // of n characters counts when, spaces trimmed from its ends, it is n UTF-16 units long (as the first
  // implementation measured it), and is hashed as the text `c<n>:<gram>` would be, without building
  // that text: this runs over every memory stored (8000 characters at most).
  const points: number[] = [];
  for (const ch of normalized.replace(/[^\p{L}\p{N}]+/gu, " ")) points.push(ch.codePointAt(0)!);
  for (let n = 1; n <= 3; n++) {
    const weight = n === 1 ? 0.5 : 1;
    for (let i = 0; i + n <= points.length; i++) {
      let first = i;
      let last = i + n - 1;
      while (first <= last && points[first] === SPACE) first++;
      while (last >= first && points[last] === SPACE) last--;
      let units = 0;
      for (let k = first; k <= last; k++) units += points[k]! > 0xffff ? 2 : 1;
      if (units !== n) continue;
      let h = GRAM_PREFIX[n]!;
      for (let k = i; k < i + n; k++) {
        const p = points[k]!;
        if (p > 0xffff) {
          h = Math.imul(h ^ (0xd800 + ((p - 0x10000) >> 10)), FNV_PRIME);
          h = Math.imul(h ^ (0xdc00 + ((p - 0x10000) & 0x3ff)), FNV_PRIME);
        } else h = Math.imul(h ^ p, FNV_PRIME);
      }
      add(vector, h >>> 0, weight);
    }
  }
  for (const token of tokenize(normalized)) add(vector, fnv1a(token, WORD_PREFIX), 1.5);
  return normalizeInPlace(vector);
}

const SPACE = 0x20;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Adds a feature, by its hash, to the vector: its bucket, and a sign from its top bit. */
function add(vector: Float32Array, h: number, weight: number): void {
  vector[h % LOCAL_EMBEDDING_DIMENSIONS]! += (h & 0x80000000) === 0 ? weight : -weight;
}

/** FNV-1a over `text`'s UTF-16 units, from `state` (the offset basis by default, or a prefix's hash). */
function fnv1a(text: string, state = FNV_OFFSET): number {
  let h = state;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** The hash states after the feature prefixes, `c1:` to `c3:` (index by n) and `w:`. */
const GRAM_PREFIX = [0, fnv1a("c1:"), fnv1a("c2:"), fnv1a("c3:")];
const WORD_PREFIX = fnv1a("w:");

/** Scales `vector` to unit length (a zero vector stays zero) and returns it. */
export function normalizeInPlace(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i]! *= inv;
  }
  return vector;
}

/** Cosine similarity of two L2-normalised vectors. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}
