import { describe, expect, it } from "vitest";
import { round3 } from "../../src/core/scores";
import {
  hybridRelevance,
  keywordRelevance,
  PRIOR,
  type SemanticScale,
  scaleFromSlope,
  semanticRelevance,
} from "../../src/memrecall/relevance";

/** A scale of the local embedder's kind (cosines of shared characters: low, the words again), as a logistic fit on the development sets put it. */
const LOCAL: SemanticScale = { floor: 0.0856, ceiling: 0.4336, weight: 0.26 };

describe("semanticRelevance: a cosine as the chance a memory is relevant, the prior at the floor, 0.9 at the ceiling", () => {
  it.each([
    { cosine: 0.05, expected: 0, why: "below the floor: no semantic match" },
    { cosine: 0.087, expected: PRIOR, why: "just above the floor, which says nothing: the prior" },
    { cosine: 0.2, expected: 0.086, why: "a third of the way up: still unlikely" },
    { cosine: 0.3, expected: 0.399, why: "log-odds linear in the cosine" },
    { cosine: 0.35, expected: 0.638, why: "half way in relevance two thirds of the way up" },
    { cosine: 0.4336, expected: 0.9, why: "the ceiling is 0.9: a paraphrase, not the same text" },
    { cosine: 0.6, expected: 0.996, why: "above the ceiling: nearer 1" },
    { cosine: 1, expected: 1, why: "the same text, the only 1" },
  ])("cosine $cosine → $expected ($why)", ({ cosine, expected }) => {
    expect(round3(semanticRelevance(cosine, LOCAL))).toBe(expected);
  });

  it("means the same for a model whose unrelated texts sit at 0.7 as for one whose sit at 0.15 (the same slope in its units)", () => {
    // One model's cosines mapped into two ranges: cos = base + (1 − base)·s. The probe's slope scales by 1/(1 − base).
    const at = (base: number) => scaleFromSlope(base + (1 - base) * 0.2, 40 / (1 - base), 1);
    for (const s of [0.1, 0.2, 0.25, 0.35, 0.6]) {
      expect(semanticRelevance(0.15 + 0.85 * s, at(0.15))).toBeCloseTo(semanticRelevance(0.7 + 0.3 * s, at(0.7)), 9);
    }
  });

  it("says nothing when the probe's kinds did not come apart (no slope): every cosine above the floor is the prior", () => {
    const flat = scaleFromSlope(0.3, 0, 0);
    expect(semanticRelevance(0.9, flat)).toBeCloseTo(PRIOR, 9);
    expect(semanticRelevance(0.31, flat)).toBeCloseTo(PRIOR, 9);
  });
});

describe("keywordRelevance: the square of the share of the query's word weight a memory holds", () => {
  it.each([
    { share: 1, expected: 1, why: "every word held: the only 1" },
    { share: 0.8, expected: 0.64, why: "every word held as its equivalent in another language" },
    { share: 0.7, expected: 0.49, why: "just under the default threshold" },
    { share: 0.5, expected: 0.25, why: "half the weight: often the query's common words" },
    { share: 0, expected: 0, why: "nothing held" },
  ])("share $share → $expected ($why)", ({ share, expected }) => {
    expect(round3(keywordRelevance(share))).toBe(expected);
  });
});

describe("hybridRelevance: keyword relevance as odds, times the cosine's likelihood ratio to the weight the probe gave it", () => {
  it.each([
    { share: 1, cosine: 0.2, weight: 0.26, expected: 1, why: "an exact hit the model does not speak against stays 1" },
    {
      share: 1,
      cosine: 0.0856,
      weight: 1,
      expected: 1,
      why: "an exact hit at the floor stays 1: the cosine says nothing",
    },
    {
      share: 1,
      cosine: 0,
      weight: 1,
      expected: 0.995,
      why: "an exact hit a model of meaning speaks against: below 1, so what the model knows is meant can rank above it",
    },
    { share: 1, cosine: 0, weight: 0.26, expected: 0.998, why: "the same with a cosine that mostly repeats the words" },
    { share: 0.8, cosine: 0.0856, weight: 0.26, expected: 0.64, why: "a cosine at the floor says nothing: keyword's" },
    {
      share: 0.5,
      cosine: 0.3,
      weight: 0,
      expected: 0.25,
      why: "weight 0 (the cosine only repeats the words): keyword's",
    },
    {
      share: 0.8,
      cosine: 0.4336,
      weight: 0.26,
      expected: 0.912,
      why: "a cosine that mostly repeats the words, agreeing, adds a little",
    },
    { share: 0.8, cosine: 0.4336, weight: 1, expected: 0.999, why: "a model of meaning agreeing adds it all" },
    { share: 0.5, cosine: 0.35, weight: 1, expected: 0.983, why: "two signals of 0.25 and 0.64 together" },
    { share: 0.8, cosine: 0, weight: 1, expected: 0.251, why: "a cosine under the floor speaks against" },
    { share: 0.8, cosine: -0.5, weight: 1, expected: 0.012, why: "at most 5 log-odds against: low, never wiped out" },
    { share: 0, cosine: 0.08, weight: 1, expected: 0, why: "no word and no cosine above the floor: no match at all" },
    {
      share: 0,
      cosine: 0.4336,
      weight: 1,
      expected: 0.471,
      why: "found by meaning only: sharing no word speaks against",
    },
    {
      share: 0,
      cosine: 0.4336,
      weight: 0.26,
      expected: 0.006,
      why: "found only by a cosine that mostly repeats words",
    },
  ])("share $share, cosine $cosine, weight $weight → $expected ($why)", ({ share, cosine, weight, expected }) => {
    expect(round3(hybridRelevance(share, cosine, { ...LOCAL, weight }))).toBe(expected);
  });
});
