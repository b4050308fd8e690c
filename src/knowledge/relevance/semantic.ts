import type { CallContext } from "../../core/call-context";
import { round3 } from "../../core/scores";
import { cosine } from "../../upstream/local-embedder";
import type { DescriptionCache } from "./descriptions";
import { lexicalRelevance } from "./lexical";

/**
 * Lexical relevance combined with embeddings cosine (0.6 / 0.4), each 0..1.
 * The descriptions' embeddings come from `descriptions`; those it does not
 * know yet are embedded `batchSize` per request, a few requests at a time.
 */
export async function semanticRelevance(
  ctx: CallContext,
  descriptions: DescriptionCache,
  question: string,
  texts: readonly string[],
  batchSize: number,
): Promise<number[]> {
  if (texts.length === 0) return [];
  const lexical = lexicalRelevance(question, texts, descriptions);
  // The question in a request of its own: batchSize counts descriptions.
  const [[q], vectors] = await Promise.all([
    descriptions.embeddings(ctx, [question]),
    descriptions.embeddings(ctx, texts, batchSize),
  ]);
  return texts.map((_, i) => round3(0.6 * lexical[i]! + 0.4 * Math.max(0, cosine(q!, vectors[i]!))));
}
