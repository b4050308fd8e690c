import type { CallContext } from "../../upstream/call-context";
import { settleWithLimit } from "../../upstream/concurrency";
import type { Embedder } from "../../upstream/embeddings";
import { cosine } from "../../upstream/local-embedder";
import { normalizeText } from "../../upstream/text";
import { contentTokens } from "../ranking";

/**
 * How relevant short descriptions (of properties, types, relations) are to a
 * question: the share of the question's meaningful words (weighted by length,
 * so "注射剂" outweighs "药") that a description contains. Cheap enough for
 * thousands of candidates; 0 when the question has no meaningful word.
 */
export function lexicalRelevance(question: string, descriptions: readonly string[]): number[] {
  const tokens = contentTokens(question);
  const total = tokens.reduce((s, t) => s + [...t].length, 0);
  if (total === 0) return descriptions.map(() => 0);
  return descriptions.map((d) => {
    const text = normalizeText(d);
    return tokens.reduce((s, t) => (text.includes(t) ? s + [...t].length : s), 0) / total;
  });
}

/**
 * Lexical relevance combined with embeddings cosine (0.6 / 0.4), each 0..1.
 * Descriptions are embedded `batchSize` per request, at most 4 requests in
 * flight (a batch size of 1 on a large network must not open one request per
 * property at once).
 */
export async function semanticRelevance(
  ctx: CallContext,
  embedder: Embedder,
  question: string,
  descriptions: readonly string[],
  batchSize: number,
): Promise<number[]> {
  if (descriptions.length === 0) return [];
  const lexical = lexicalRelevance(question, descriptions);
  const batches: string[][] = [];
  for (let i = 0; i < descriptions.length; i += batchSize) batches.push(descriptions.slice(i, i + batchSize));
  const [[q], settled] = await Promise.all([
    embedder.embed(ctx, [question]),
    settleWithLimit(batches, EMBED_CONCURRENCY, ctx.signal, (b) => embedder.embed(ctx, b)),
  ]);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  const vectors = settled.flatMap((r) => (r as PromiseFulfilledResult<Float32Array[]>).value);
  return descriptions.map((_, i) => round(0.6 * lexical[i]! + 0.4 * Math.max(0, cosine(q!, vectors[i]!))));
}

const EMBED_CONCURRENCY = 4;

export function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
