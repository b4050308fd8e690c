import { weightedCoverage } from "../../core/scores";
import { contentTokens, normalizeText } from "../../core/text";

/**
 * How relevant short descriptions (of properties, types, relations) are to a
 * question: the share of the question's meaningful words (weighted by length,
 * so "注射剂" outweighs "药") that a description contains. Cheap enough for
 * thousands of candidates; 0 when the question has no meaningful word.
 */
export function lexicalRelevance(question: string, descriptions: readonly string[]): number[] {
  const tokens = contentTokens(question);
  return descriptions.map((d) => {
    const text = normalizeText(d);
    return weightedCoverage(
      tokens,
      (t) => text.includes(t),
      (t) => [...t].length,
    );
  });
}
