/**
 * Relevance, in every search mode: the chance that a memory is relevant, on
 * one scale, so that min_relevance_score cuts the same way in each and a
 * relevance of 0.5 means about half of such results are relevant. The keyword
 * side is measured once (search-text.ts). The semantic side comes two ways:
 *
 * - an embedder the start-up probe measured (calibration.ts: an endpoint's
 *   model, or MemRecall's local embedder): its cosines as evidence on its own
 *   scale, fused with the keyword side in log-odds (`semanticRelevance`,
 *   `hybridRelevance`), so the same for every model, and a noisy model adds
 *   little;
 * - no measurement (the probe failed or is off): the fixed range, linear,
 *   and hybrid the better of the two raised when both agree
 *   (`fixedSemanticRelevance`, `fixedHybridRelevance`), as before the probe.
 */

/** A model's semantic scale: what its cosines mean (calibration.ts learns it from the probe set). */
export interface SemanticScale {
  /** The cosine that says nothing: as likely between a memory and a query about something else as between paraphrases. */
  floor: number;
  /** The cosine of semantic relevance 0.9: a paraphrase this model recognises. */
  ceiling: number;
  /** How much of the semantic evidence hybrid search adds to the keyword evidence, 0..1. */
  weight: number;
}

/**
 * The relevance of a memory nothing is known about: about one memory in a
 * hundred answers a query (the labelled sets: 0.8 to 1.6 %). A semantic
 * result's relevance starts from it: on the development sets, semantic
 * results scoring 0.5 to 0.7 were relevant 42 % (the stand-in model at noise
 * 2) to 62 % (the local embedder) of the time; 0.02 made it 34 %.
 */
export const PRIOR = 0.01;
/**
 * The keyword side of a memory holding none of the query's words, as a
 * relevance: sharing no word speaks against a memory (on the labelled sets,
 * 2 to 4 log-odds), so meaning alone must be strong to lift it.
 */
const NO_WORD = 0.001;
/** Relevance at the ceiling, on either scale: a paraphrase, not the same text. */
const AT_CEILING = 0.9;
/** The highest relevance of anything but an exact hit (which alone is 1). */
const AT_MOST = 0.999;

const logit = (p: number) => Math.log(p / (1 - p));
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Keyword relevance, 0..1: the square of the share of the query's word
 * weight a memory holds. The share alone overstates: half a query's weight
 * is often its common words, which many memories hold (measured: of memories
 * holding 50 to 70 % of it, a third were relevant, against two thirds of
 * those with a semantic relevance of 0.5 to 0.7). Squared, a keyword score
 * is relevant about as often as a semantic score of the same value. 1 for an
 * exact hit; a memory holding the query only in another language, 0.64.
 */
export function keywordRelevance(share: number): number {
  return share * share;
}

/** The log-odds from PRIOR at the floor to AT_CEILING at the ceiling. */
const SPAN = logit(AT_CEILING) - logit(PRIOR);
/**
 * The most a cosine can speak against a memory, in log-odds: about what 150
 * pairs of a kind can show (no paraphrase of the probe that low: at most 1 in
 * 150). Beyond it a sharp model's straight line would wipe out a memory that
 * holds every word of the query because of one low cosine.
 */
const MOST_AGAINST = -5;

/** The scale whose log-odds rise by `slope` per unit of cosine from 0 at `floor`. */
export function scaleFromSlope(floor: number, slope: number, weight: number): SemanticScale {
  return { floor, ceiling: slope > 0 ? floor + SPAN / slope : Number.POSITIVE_INFINITY, weight };
}

/** The semantic evidence of a cosine: the log-odds it adds to the prior (0 at the floor). */
export function semanticEvidence(cosine: number, scale: SemanticScale): number {
  return Math.max(MOST_AGAINST, (SPAN * (cosine - scale.floor)) / (scale.ceiling - scale.floor));
}

/**
 * Semantic relevance, 0..1: 0 at or below the floor (no semantic match: a
 * search does not return it), then PRIOR, 0.9 at the ceiling, 1 only for the
 * same text.
 */
export function semanticRelevance(cosine: number, scale: SemanticScale): number {
  if (cosine >= 1 - 1e-6) return 1;
  if (cosine <= scale.floor) return 0;
  return Math.min(AT_MOST, sigmoid(logit(PRIOR) + semanticEvidence(cosine, scale)));
}

/**
 * Hybrid relevance: the keyword relevance as odds, times the cosine's
 * likelihood ratio raised to the scale's weight (log-odds added). A fixed
 * formula cannot know whether the model is any good; this one does not need
 * to: the probe turned the model's cosines into evidence, so a noisy model's
 * cosines sit near the floor, add almost nothing and leave keyword's order
 * (measured: hybrid within 0.02 of keyword where the model finds little), a
 * sharp model's decide, and two signals that agree count more than either
 * (0.64 and a cosine at a model's ceiling: 0.999). The weight keeps the same
 * words from counting twice: the local embedder's cosine is mostly the
 * words again (its weight 0.146, fitted on rankings), a model of meaning's
 * is not (near 1).
 * An exact hit (every word) stays 1 unless its cosine is below the floor,
 * where the model speaks against it and it is fused like any other match (a
 * sharp model's unrelated memory: about 0.87); a memory with neither a word
 * nor a cosine above the floor is no match (0).
 */
export function hybridRelevance(share: number, cosine: number, scale: SemanticScale): number {
  const keyword = keywordRelevance(share);
  if (cosine >= 1 - 1e-6) return 1;
  const semantic = scale.weight * semanticEvidence(cosine, scale);
  // Every word held, and the model does not speak against it. Below the floor it does: a short query's words
  // ("数据") are all in many memories, and 1 would put each above the one a sharp model knows is meant.
  if (keyword >= 1 && semantic >= 0) return 1;
  // Neither a word nor a cosine above the floor: no match at all.
  if (keyword === 0 && cosine <= scale.floor) return 0;
  return Math.min(AT_MOST, sigmoid(keywordEvidence(share) + semantic));
}

/** The keyword side of hybrid relevance, in log-odds: a memory holding no word of the query at NO_WORD. */
export function keywordEvidence(share: number): number {
  return logit(Math.max(NO_WORD, Math.min(AT_MOST, keywordRelevance(share))));
}

/** How much fixed-range hybrid search adds when the words and the meaning agree. */
const AGREEMENT = 0.5;

/**
 * Semantic relevance on the fixed range, 0..1: 0 up to the floor (what
 * unrelated texts share), rising linearly to 0.9 at the ceiling (a
 * paraphrase), then to 1 at a cosine of 1 (the same text).
 */
export function fixedSemanticRelevance(cosine: number, floor: number, ceiling: number): number {
  if (cosine <= floor) return 0;
  if (cosine < ceiling) return (AT_CEILING * (cosine - floor)) / (ceiling - floor);
  return Math.min(1, AT_CEILING + ((1 - AT_CEILING) * (cosine - ceiling)) / (1 - ceiling));
}

/**
 * Hybrid relevance on the fixed range: the better of the keyword and the
 * semantic relevance, raised towards 1 by half the weaker one's share of what
 * is left, so two agreeing signals count more than either (0.6 and 0.6 give
 * 0.72) and a memory one side misses keeps what the other gives. 1 only when
 * one of them is 1.
 */
export function fixedHybridRelevance(keyword: number, semantic: number): number {
  const better = Math.max(keyword, semantic);
  return better + AGREEMENT * Math.min(keyword, semantic) * (1 - better);
}
