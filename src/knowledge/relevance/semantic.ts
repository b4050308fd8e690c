import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import { round3 } from "../../core/scores";
import type { Embedder } from "../../upstream/embeddings";
import { cosine } from "../../upstream/local-embedder";
import { lexicalRelevance } from "./lexical";

/** Embedding requests in flight at once. */
const EMBED_CONCURRENCY = 4;

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
  return descriptions.map((_, i) => round3(0.6 * lexical[i]! + 0.4 * Math.max(0, cosine(q!, vectors[i]!))));
}
