import { weightedCoverage } from "../../core/scores";
import type { DescriptionCache } from "./descriptions";

/**
 * How relevant short descriptions (of properties, types, relations) are to a
 * question: the share of the question's meaningful words (weighted by length,
 * so "注射剂" outweighs "药") that a description contains. Cheap enough for
 * thousands of candidates; 0 when the question has no meaningful word. The
 * descriptions' normalised texts come from `cache`.
 */
export function lexicalRelevance(question: string, descriptions: readonly string[], cache: DescriptionCache): number[] {
  const tokens = [...cache.words(question).tokens];
  return descriptions.map((d) => {
    const text = cache.words(d).normalized;
    return weightedCoverage(
      tokens,
      (t) => text.includes(t),
      (t) => [...t].length,
    );
  });
}
