import type { CallContext } from "../../../core/call-context";
import { localEmbedder } from "../../../upstream/embeddings";
import { DescriptionCache } from "../../relevance/descriptions";
import { type Candidate, rankWithoutLlm } from "../../relevance/rank";

/**
 * The least relevance to a question that counts as fitting it, on the scale
 * of relevanceScores. Vector recall always has nearest neighbours, however
 * far: below this, what search_schema returns is flagged and what find_skills
 * found is dropped. Chosen on bench/relevance-floor.json (questions and skill
 * queries that fit the sample network and that do not):
 * test/knowledge/kn-tools/relevance-floor.test.ts measures them, and
 * docs/knowledge-tools.md records the numbers. Questions about another domain
 * score at most 0.046 there except four (0.070 to 0.188) that share a word
 * with the medical schema, fitting ones at least 0.071 except one; skill
 * queries that fit nothing at most 0.041 except one (0.169), fitting ones at
 * least 0.069 except one: 0.055 sits in both gaps.
 */
export const RELEVANCE_FLOOR = 0.055;

/**
 * Each candidate's relevance to the question, 0..1: embeddings cosine with
 * the share of the question's words found and a bonus for names it contains
 * (rankWithoutLlm without a reranker). Always with the local-lexical
 * embedder, in a cache of its own: RELEVANCE_FLOOR holds on the scale it was
 * measured on, whatever embeddings or reranker rank the answer.
 */
export async function relevanceScores(
  ctx: CallContext,
  question: string,
  candidates: readonly Candidate[],
): Promise<number[]> {
  if (candidates.length === 0) return [];
  const descriptions = new DescriptionCache(localEmbedder, candidates.length + 1);
  return (await rankWithoutLlm(ctx, question, candidates, { reranker: undefined, descriptions })).scores;
}
