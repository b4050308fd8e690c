import { describe, expect, it } from "vitest";
import { round3 } from "../../src/core/scores";
import {
  fixedHybridRelevance as hybridRelevance,
  fixedSemanticRelevance as semanticRelevance,
} from "../../src/memrecall/relevance";

describe("the fixed range's semanticRelevance: a cosine as relevance, 0 at the floor, 0.9 at the ceiling, 1 only for the same text", () => {
  it.each([
    { cosine: 0.05, floor: 0.1, ceiling: 0.5, expected: 0, why: "below the floor: what unrelated texts share" },
    { cosine: 0.1, floor: 0.1, ceiling: 0.5, expected: 0, why: "the floor is 0" },
    { cosine: 0.3, floor: 0.1, ceiling: 0.5, expected: 0.45, why: "0.9 × (0.3 - 0.1) / (0.5 - 0.1)" },
    {
      cosine: 0.5,
      floor: 0.1,
      ceiling: 0.5,
      expected: 0.9,
      why: "the ceiling is 0.9: a paraphrase, not the same text",
    },
    { cosine: 0.75, floor: 0.1, ceiling: 0.5, expected: 0.95, why: "0.9 + 0.1 × (0.75 - 0.5) / (1 - 0.5)" },
    { cosine: 1, floor: 0.1, ceiling: 0.5, expected: 1, why: "the same text" },
    { cosine: 0.4, floor: 0.25, ceiling: 0.7, expected: 0.3, why: "0.9 × 0.15 / 0.45" },
    { cosine: 0.6, floor: 0.25, ceiling: 0.7, expected: 0.7, why: "0.9 × 0.35 / 0.45" },
  ])("cosine $cosine in [$floor, $ceiling] → $expected ($why)", ({ cosine, floor, ceiling, expected }) => {
    expect(round3(semanticRelevance(cosine, floor, ceiling))).toBe(expected);
  });
});

describe("the fixed range's hybridRelevance: the better of the two, raised by half the weaker one's share of what is left", () => {
  it.each([
    { keyword: 1, semantic: 0.2, expected: 1, why: "an exact hit stays 1" },
    { keyword: 0, semantic: 0.7, expected: 0.7, why: "found by meaning only: what semantic search gives" },
    { keyword: 0.64, semantic: 0, expected: 0.64, why: "found by words only: what keyword search gives" },
    { keyword: 0.6, semantic: 0.6, expected: 0.72, why: "agreement: 0.6 + 0.5 × 0.6 × 0.4" },
    { keyword: 0.4, semantic: 0.3, expected: 0.49, why: "0.4 + 0.5 × 0.3 × 0.6: two weak signals stay under 0.5" },
    { keyword: 0.9, semantic: 0.9, expected: 0.945, why: "below 1 unless one side is 1" },
  ])("keyword $keyword, semantic $semantic → $expected ($why)", ({ keyword, semantic, expected }) => {
    expect(round3(hybridRelevance(keyword, semantic))).toBe(expected);
  });
});
