import { describe, expect, it } from "vitest";
import { calibrate, type Ranked, rrf } from "../../src/memrecall/search";

const r = (memory_key: string, relevance: number): Ranked => ({ memory_key, relevance });

describe("rrf: hybrid search's reciprocal rank fusion (k = 60), relevance the best a memory got", () => {
  // Fused score: the sum of 1 / (60 + rank) over the lists holding the memory, rank from 1.
  it.each([
    {
      why: "one list is returned as it is, in its own order",
      lists: [[r("b", 0.3), r("a", 0.9)]],
      expected: [r("b", 0.3), r("a", 0.9)],
    },
    {
      why: "a memory in both lists comes first: b 1/62 + 1/61 = 0.03252 > a 1/61 = 0.01639 > c 1/62 = 0.01613",
      lists: [
        [r("a", 0.9), r("b", 0.5)],
        [r("b", 0.8), r("c", 0.7)],
      ],
      expected: [r("b", 0.8), r("a", 0.9), r("c", 0.7)],
    },
    {
      why: "rank outweighs relevance: a 1/61 + 1/62, then c 1/61, then b 1/62 despite its 0.9",
      lists: [
        [r("a", 0.2), r("b", 0.9)],
        [r("c", 0.1), r("a", 0.3)],
      ],
      expected: [r("a", 0.3), r("c", 0.1), r("b", 0.9)],
    },
    {
      why: "equal fused scores (1/61 each): the higher relevance first",
      lists: [[r("a", 0.4)], [r("c", 0.7)]],
      expected: [r("c", 0.7), r("a", 0.4)],
    },
    {
      why: "equal fused scores and relevance: the order first seen",
      lists: [[r("a", 0.5)], [r("b", 0.5)]],
      expected: [r("a", 0.5), r("b", 0.5)],
    },
    { why: "no candidates in either list", lists: [[], []], expected: [] },
  ])("$why", ({ lists, expected }) => {
    expect(rrf(lists)).toEqual(expected);
  });
});

describe("rrf: k = 60 decides how much being in both lists is worth", () => {
  // x is 1st in the first list only: 1/61 = 0.016393. y is at `rank` in both lists: 2 / (60 + rank).
  // Relevance is set so that a tie (another k) would put the other memory first.
  const fused = (rank: number, x: number, y: number) => {
    const fillers = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => r(`${prefix}${i}`, 0.5));
    const lists = [
      [r("x", x), ...fillers("a", rank - 2), r("y", y)],
      [...fillers("b", rank - 1), r("y", y)],
    ];
    return rrf(lists)
      .map((m) => m.memory_key)
      .filter((k) => k === "x" || k === "y");
  };
  it.each([
    { rank: 61, x: 0.9, y: 0.1, expected: ["y", "x"], why: "2/121 = 0.016529 > 1/61" },
    { rank: 63, x: 0.1, y: 0.9, expected: ["x", "y"], why: "2/123 = 0.016260 < 1/61" },
  ])("y ranked $rank in both lists → $expected ($why)", ({ rank, x, y, expected }) => {
    expect(fused(rank, x, y)).toEqual(expected);
  });
});

describe("calibrate: a cosine mapped from [floor, ceiling] to a relevance in [0, 1], three decimals", () => {
  it.each([
    { cosine: 0.3, floor: 0.1, ceiling: 0.5, expected: 0.5, why: "(0.3 - 0.1) / (0.5 - 0.1)" },
    { cosine: 0.2, floor: 0.1, ceiling: 0.5, expected: 0.25, why: "0.1 / 0.4" },
    { cosine: 0.1, floor: 0.1, ceiling: 0.5, expected: 0, why: "the floor is 0" },
    { cosine: 0.05, floor: 0.1, ceiling: 0.5, expected: 0, why: "below the floor: clamped to 0" },
    { cosine: 0.5, floor: 0.1, ceiling: 0.5, expected: 1, why: "the ceiling is 1" },
    { cosine: 0.8, floor: 0.1, ceiling: 0.5, expected: 1, why: "above the ceiling: clamped to 1" },
    { cosine: 0.4, floor: 0.25, ceiling: 0.7, expected: 0.333, why: "0.15 / 0.45 = 0.3333…" },
    { cosine: 0.6, floor: 0.25, ceiling: 0.7, expected: 0.778, why: "0.35 / 0.45 = 0.7777…, rounded up" },
  ])("cosine $cosine in [$floor, $ceiling] → $expected ($why)", ({ cosine, floor, ceiling, expected }) => {
    expect(calibrate(cosine, floor, ceiling)).toBe(expected);
  });
});
