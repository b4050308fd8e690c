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
  const chars = [...normalized.replace(/[^\p{L}\p{N}]+/gu, " ")];
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    const index = h % LOCAL_EMBEDDING_DIMENSIONS;
    vector[index]! += (h & 0x80000000) === 0 ? weight : -weight;
  };
  for (let n = 1; n <= 3; n++) {
    for (let i = 0; i + n <= chars.length; i++) {
      const gram = chars.slice(i, i + n).join("");
      if (gram.trim().length === n) add(`c${n}:${gram}`, n === 1 ? 0.5 : 1);
    }
  }
  for (const token of tokenize(normalized)) add(`w:${token}`, 1.5);
  return normalizeInPlace(vector);
}

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

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
