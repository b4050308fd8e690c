/**
 * The share of a query's word weight that a text holds, 0..1: every query
 * token weighs `weightOf(token)` (rarity, length, ...), and counts when
 * `found(token)`. 0 when the query has no weight at all. This is the one
 * lexical relevance of the service: schema ranking, instance search and
 * memory search differ only in how they weigh a word and what "found" means.
 */
export function weightedCoverage(
  queryTokens: readonly string[],
  found: (token: string) => boolean,
  weightOf: (token: string) => number,
): number {
  let total = 0;
  let held = 0;
  for (const t of queryTokens) {
    const w = weightOf(t);
    total += w;
    if (found(t)) held += w;
  }
  return total === 0 ? 0 : held / total;
}

/** Indexes of the `k` best scores, best first; ties keep their original order. */
export function topIndexes(scores: readonly number[], k: number): number[] {
  return scores
    .map((s, i) => [s, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, k)
    .map(([, i]) => i);
}

/** A score as answers show it: three decimals. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** x within 0..1 (NaN is 0). */
export function clamp01(x: number): number {
  return Math.min(1, Math.max(0, Number.isFinite(x) ? x : 0));
}
