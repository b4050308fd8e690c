import { normalizeText, STOP_WORDS, tokenize } from "../core/text";
import type { Embedder } from "../upstream/embeddings";
import { LOCAL_EMBEDDING_DIMENSIONS, normalizeInPlace } from "../upstream/local-embedder";
import { fnv1a, type Glossary } from "./glossary";

/** How MemRecall's local embedder is named in logs. */
const MEMORY_EMBEDDER_NAME = "local-lexical+glossary";

/** Feature weights: a glossary group says more than a word, a word more than a piece of one. */
const GROUP_WEIGHT = 2;
const WORD_WEIGHT = 1.5;
const GRAM_WEIGHT = 1;
const HAN_CHAR_WEIGHT = 0.5;
const LATIN_GRAM_WEIGHT = 0.5;

/**
 * How much of this embedder's semantic evidence hybrid search adds to the
 * keyword evidence (relevance.ts `hybridRelevance`): fitted on the
 * development sets' rankings (a conditional logit over each query's
 * candidates, 220 queries; `npm run bench -- memrecall` fits it again and
 * prints it). Not the probe's measure (0.26), which counts how much of the
 * cosine is not the query's words on the probe's pairs: with it, hybrid
 * ranked the first relevant memory lower than keyword alone on the held-out
 * set (MRR 0.533 against 0.555); with this weight, 0.558. The embedder's
 * cosine is mostly the words again, and its noise at low cosines is not.
 */
export const LEXICAL_FUSION_WEIGHT = 0.146;

/**
 * MemRecall's embedder when no endpoint is configured: not a neural model but
 * hashed lexical features, as the shared local embedder, with two changes
 * that make a cosine mean the same in both languages and let meaning cross
 * them:
 *
 * - Latin words give their 3- and 4-letter pieces within the word (" db",
 *   "conf", "fig "), not character 1- to 3-grams across the text: every
 *   English text shares letters and letter pairs, so unrelated English texts
 *   had cosines a Chinese pair only reaches when related (measured on the
 *   eval sets: the 90th percentile of unrelated pairs 0.45 in English, 0.12
 *   in Chinese; 0.08 and 0.08 now). Stop words give nothing.
 * - Every glossary group the text names is one feature, so "数据库配置" and
 *   "database config" share "database" and "config" (index and query alike).
 *
 * Chinese keeps its character 1- to 3-grams and jieba's words.
 */
export function memoryEmbedder(glossary: Glossary): Embedder {
  return {
    name: MEMORY_EMBEDDER_NAME,
    async embed(ctx, texts) {
      ctx.signal.throwIfAborted();
      return texts.map((t) => embedMemoryText(t, glossary));
    },
  };
}

export function embedMemoryText(text: string, glossary: Glossary): Float32Array {
  const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
  const add = (feature: string, weight: number) => {
    const h = fnv1a(feature);
    vector[h % LOCAL_EMBEDDING_DIMENSIONS]! += (h & 0x80000000) === 0 ? weight : -weight;
  };
  const normalized = normalizeText(text);
  for (const run of normalized.match(/\p{Script=Han}+/gu) ?? []) {
    const chars = [...run];
    for (let n = 1; n <= 3; n++) {
      for (let i = 0; i + n <= chars.length; i++)
        add(`c${n}:${chars.slice(i, i + n).join("")}`, n === 1 ? HAN_CHAR_WEIGHT : GRAM_WEIGHT);
    }
  }
  for (const word of normalized.match(/[\p{Script=Latin}\p{N}]+/gu) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    const bounded = ` ${word} `;
    for (const n of [3, 4])
      for (let i = 0; i + n <= bounded.length; i++) add(`l${n}:${bounded.slice(i, i + n)}`, LATIN_GRAM_WEIGHT);
  }
  for (const token of tokenize(normalized)) if (!STOP_WORDS.has(token)) add(`w:${token}`, WORD_WEIGHT);
  for (const marker of glossary.markers(normalized)) add(`g:${marker}`, GROUP_WEIGHT);
  return normalizeInPlace(vector);
}
