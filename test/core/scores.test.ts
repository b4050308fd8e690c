import { describe, expect, it } from "vitest";
import { clamp01, round3, topIndexes, weightedCoverage } from "../../src/core/scores";

// The arithmetic under every relevance score of the service. Each row says why its number is
// what it is; a change in how coverage weighs, how ties break or how scores round shows up here
// before it shows up as a different ranking.

const byLength = (t: string) => [...t].length;
const one = () => 1;

describe("weightedCoverage", () => {
  const rows: { name: string; query: string[]; found: string[]; weightOf: (t: string) => number; expected: number }[] =
    [
      // Every query word is in the text: all of the weight is held.
      {
        name: "every word found",
        query: ["drug", "dosage"],
        found: ["drug", "dosage"],
        weightOf: byLength,
        expected: 1,
      },
      // Nothing found: none of the weight is held.
      { name: "no word found", query: ["drug", "dosage"], found: [], weightOf: byLength, expected: 0 },
      // Weighted, not counted: 注射剂 weighs 3 of 3 + 1 = 4, so 3/4; an unweighted share would say 1/2.
      {
        name: "a long word outweighs a short one",
        query: ["注射剂", "药"],
        found: ["注射剂"],
        weightOf: byLength,
        expected: 0.75,
      },
      // The other half of the same query: 药 holds 1 of 4.
      { name: "a short word holds little", query: ["注射剂", "药"], found: ["药"], weightOf: byLength, expected: 0.25 },
      // Length counts characters, not UTF-16 units or bytes: 😀 (two code units) weighs 1 like "a", so 1/2, not 2/3.
      { name: "length in code points", query: ["😀", "a"], found: ["😀"], weightOf: byLength, expected: 0.5 },
      // The query is not deduplicated here (callers pass distinct tokens): "a" listed twice weighs twice, 2/3.
      {
        name: "a repeated query word weighs each time",
        query: ["a", "a", "b"],
        found: ["a"],
        weightOf: one,
        expected: 2 / 3,
      },
      // An empty query has no weight: 0, not NaN from 0/0.
      { name: "empty query", query: [], found: [], weightOf: one, expected: 0 },
      // Words that all weigh nothing: 0, not NaN, even though one is found.
      { name: "query of weightless words", query: ["a", "b"], found: ["a"], weightOf: () => 0, expected: 0 },
      // A weightless word found adds nothing: 0/(0 + 2) held.
      {
        name: "a weightless word found adds nothing",
        query: ["the", "dosage"],
        found: ["the"],
        weightOf: (t) => (t === "the" ? 0 : 2),
        expected: 0,
      },
    ];
  it.each(rows)("$name", ({ query, found, weightOf, expected }) => {
    expect(weightedCoverage(query, (t) => found.includes(t), weightOf)).toBeCloseTo(expected, 12);
  });
});

describe("topIndexes", () => {
  const rows: { name: string; scores: number[]; k: number; expected: number[] }[] = [
    // Best first: 0.9 (index 1), then 0.5 (index 2); 0.1 does not make k = 2.
    { name: "best k, best first", scores: [0.1, 0.9, 0.5], k: 2, expected: [1, 2] },
    // Ties keep input order: the two 0.9s come as 1 then 3, the two 0.5s as 0 then 2; an unstable or
    // index-descending tie-break would give [3, 1, ...].
    { name: "ties keep their original order", scores: [0.5, 0.9, 0.5, 0.9], k: 4, expected: [1, 3, 0, 2] },
    // A tie at the cut: of the three equal scores the first two in input order are kept.
    { name: "a tie at the cut keeps the earliest", scores: [0.2, 0.2, 0.7, 0.2], k: 3, expected: [2, 0, 1] },
    // k past the end returns every index, no padding.
    { name: "k larger than the list", scores: [0.3, 0.6], k: 5, expected: [1, 0] },
    // k = 0 asks for nothing.
    { name: "k = 0", scores: [0.3, 0.6], k: 0, expected: [] },
    // Descending by value, not by magnitude: -0.5 ranks above -1.
    { name: "negative scores", scores: [-1, 0, -0.5], k: 3, expected: [1, 2, 0] },
    // Numeric, not string, order: 10 > 9 (a string sort would put "9" first).
    { name: "numeric comparison", scores: [9, 10, 2], k: 3, expected: [1, 0, 2] },
    { name: "empty list", scores: [], k: 3, expected: [] },
  ];
  it.each(rows)("$name", ({ scores, k, expected }) => {
    expect(topIndexes(scores, k)).toEqual(expected);
  });
});

describe("round3", () => {
  const rows: { name: string; x: number; expected: number }[] = [
    // Three decimals: 0.12345 → 123.45 → 123 → 0.123.
    { name: "drops the fourth decimal", x: 0.12345, expected: 0.123 },
    // Rounds, does not truncate: 2/3 = 0.6666… → 0.667 (truncation would give 0.666).
    { name: "rounds up from ...6", x: 2 / 3, expected: 0.667 },
    { name: "rounds down from ...3", x: 1 / 3, expected: 0.333 },
    // Half goes up: 0.0005 × 1000 = 0.5 → 1 → 0.001.
    { name: "half rounds up", x: 0.0005, expected: 0.001 },
    // Rounding can reach the next unit: 0.9995 → 1.
    { name: "rounds up to 1", x: 0.9995, expected: 1 },
    { name: "whole numbers stay", x: 1, expected: 1 },
    { name: "zero stays", x: 0, expected: 0 },
  ];
  it.each(rows)("$name", ({ x, expected }) => {
    expect(round3(x)).toBe(expected);
  });
});

describe("clamp01", () => {
  const rows: { name: string; x: number; expected: number }[] = [
    { name: "inside stays", x: 0.42, expected: 0.42 },
    // A negative cosine means "unrelated", not "less than unrelated": 0.
    { name: "below 0 is 0", x: -0.2, expected: 0 },
    { name: "above 1 is 1", x: 1.5, expected: 1 },
    { name: "the bounds stay", x: 1, expected: 1 },
    // NaN (0/0 somewhere upstream) must not poison a sum: 0.
    { name: "NaN is 0", x: Number.NaN, expected: 0 },
    // Any non-finite value counts as no signal, so +Infinity is 0, not 1: a plausible
    // Math.min/Math.max clamp alone would give 1.
    { name: "+Infinity is 0, not 1", x: Number.POSITIVE_INFINITY, expected: 0 },
    { name: "-Infinity is 0", x: Number.NEGATIVE_INFINITY, expected: 0 },
  ];
  it.each(rows)("$name", ({ x, expected }) => {
    expect(clamp01(x)).toBe(expected);
  });
});
