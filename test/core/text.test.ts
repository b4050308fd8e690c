import { describe, expect, it } from "vitest";
import { bigrams, comparable, contentTokens, normalizeText, STOP_WORDS, textOf } from "../../src/core/text";

// The forms every comparison of a question with a text goes through. normalizeText, comparable,
// bigrams and textOf are plain string functions and are pinned exactly. contentTokens depends on
// jieba's segmentation (its dictionary decides whether 糖尿病 also yields 糖尿), so its rows assert
// which words must and must not be there rather than the whole list.

describe("normalizeText", () => {
  const rows: { name: string; text: string; expected: string }[] = [
    // NFKC maps full-width letters, digits and brackets to half-width, then lower case: the
    // example of the doc comment.
    { name: "full-width to half-width, lower case", text: "ＩｇＡ（２型）", expected: "iga(2型)" },
    // White space runs (tab, new line) become one space, and the ends are trimmed.
    { name: "white space collapsed and trimmed", text: "  Hello\t\n World  ", expected: "hello world" },
    // The ideographic space U+3000 is NFKC-equivalent to a space, so it collapses like one.
    { name: "ideographic space is a space", text: "糖尿病\u3000症状", expected: "糖尿病 症状" },
    // Compatibility characters decompose: the ligature ﬁ is "fi", the Roman numeral Ⅻ is "XII" → "xii".
    { name: "ligatures and Roman numerals decompose", text: "ﬁle Ⅻ", expected: "file xii" },
    // Punctuation stays (comparable is the form without it): 、 has no compatibility mapping.
    { name: "punctuation is kept", text: "上、下气道梗阻", expected: "上、下气道梗阻" },
    { name: "empty stays empty", text: "   ", expected: "" },
  ];
  it.each(rows)("$name", ({ text, expected }) => {
    expect(normalizeText(text)).toBe(expected);
  });
});

describe("comparable", () => {
  const rows: { name: string; text: string; expected: string }[] = [
    // The doc comment's example: the enumeration comma goes, so "上、下气道梗阻" meets "上下气道梗阻".
    { name: "enumeration comma dropped", text: "上、下气道梗阻", expected: "上下气道梗阻" },
    // Spaces and brackets go too.
    { name: "spaces and brackets dropped", text: "IgA (2型)", expected: "iga2型" },
    // Full-width input reaches the same key as half-width: NFKC first, then the punctuation goes.
    { name: "full-width reaches the same key", text: "ＩｇＡ（２型）", expected: "iga2型" },
    // Symbols (\p{S}: + $) go as well as punctuation (\p{P}: # / - _); letters and digits stay.
    { name: "symbols dropped, letters and digits kept", text: "C++ / C# $100 a-b_c", expected: "cc100abc" },
    { name: "nothing but punctuation", text: "、。！？", expected: "" },
  ];
  it.each(rows)("$name", ({ text, expected }) => {
    expect(comparable(text)).toBe(expected);
  });
});

describe("bigrams", () => {
  const rows: { name: string; normalized: string; expected: string[] }[] = [
    { name: "consecutive pairs", normalized: "abc", expected: ["ab", "bc"] },
    { name: "Chinese pairs", normalized: "气道梗阻", expected: ["气道", "道梗", "梗阻"] },
    // Distinct: "abab" has the pairs ab, ba, ab; ab is listed once, in first-seen order.
    { name: "distinct, first seen first", normalized: "abab", expected: ["ab", "ba"] },
    // A single character has no pair: it is its own gram (so a one-character needle still finds rows).
    { name: "one character is its own gram", normalized: "药", expected: ["药"] },
    { name: "empty has none", normalized: "", expected: [] },
    // Pairs of characters, not of UTF-16 units: 😀 is two units, and a unit-wise split would
    // produce lone surrogates ("\ud83d\ude00", "\ude00a").
    { name: "characters, not UTF-16 units", normalized: "😀a", expected: ["😀a"] },
    // The space is a character like any other: no pair is skipped across it.
    { name: "spaces are characters", normalized: "a b", expected: ["a ", " b"] },
  ];
  it.each(rows)("$name", ({ normalized, expected }) => {
    expect(bigrams(normalized)).toEqual(expected);
  });
});

describe("contentTokens", () => {
  const rows: { name: string; text: string; has: string[]; hasNot: string[] }[] = [
    // Question words and particles (有, 哪些) carry no topic; the disease and 症状 do.
    {
      name: "Chinese question words out",
      text: "糖尿病有哪些症状？",
      has: ["糖尿病", "症状"],
      hasNot: ["有", "哪些", "？"],
    },
    // English function words out, in any case: "What", "the", "of" are stop words once lower-cased.
    {
      name: "English function words out",
      text: "What are the Symptoms of diabetes?",
      has: ["symptoms", "diabetes"],
      hasNot: ["what", "are", "the", "of", "What"],
    },
    // Fillers and references to earlier talk (请, 帮我, 查询, 一下, 上次, 提到) are stop words: only 患者 is left.
    {
      name: "fillers and references to earlier talk out",
      text: "请帮我查询一下上次提到的患者",
      has: ["患者"],
      hasNot: ["请", "帮", "我", "查询", "一下", "上次", "提到", "的"],
    },
    // Full-width English is normalised before the stop-word check: ＴＨＥ is "the" and goes.
    { name: "full-width stop word out", text: "ＴＨＥ ｄｒｕｇｓ", has: ["drugs"], hasNot: ["the", "ＴＨＥ"] },
    // A mixed question keeps the words of both languages.
    {
      name: "both languages in one question",
      text: "列出 aspirin 的适应症",
      has: ["aspirin", "适应症"],
      hasNot: ["列出", "的"],
    },
  ];
  it.each(rows)("$name", ({ text, has, hasNot }) => {
    const tokens = contentTokens(text);
    for (const t of has) expect(tokens).toContain(t);
    for (const t of hasNot) expect(tokens).not.toContain(t);
  });

  it("lists each token once, however often the text repeats it", () => {
    // Distinct: a repeated word must not weigh more in a coverage score.
    expect(contentTokens("症状 症状 症状")).toEqual(["症状"]);
  });

  it("has nothing left when the text is only stop words", () => {
    // Every part is a stop word: a question like this gives every candidate a lexical score of 0.
    expect(contentTokens("有哪些")).toEqual([]);
    expect(contentTokens("what is the")).toEqual([]);
    expect(contentTokens("")).toEqual([]);
  });

  it("STOP_WORDS holds both languages' function words and no topic word", () => {
    for (const w of ["的", "哪些", "如何", "一下", "之前", "the", "which", "previously"])
      expect(STOP_WORDS.has(w)).toBe(true);
    // Topic words must never be stop words, or they could not be found at all.
    for (const w of ["症状", "药品", "drug", "symptom"]) expect(STOP_WORDS.has(w)).toBe(false);
    // Entries are single lower-case words: the split on spaces left no empty entry.
    expect(STOP_WORDS.has("")).toBe(false);
  });
});

describe("textOf", () => {
  const rows: { name: string; value: unknown; expected: string | undefined }[] = [
    { name: "a string is itself", value: "阿司匹林", expected: "阿司匹林" },
    // An empty string is still text (it is a value, just an empty one), not "no text".
    { name: "the empty string is text", value: "", expected: "" },
    { name: "a number as written", value: 3.5, expected: "3.5" },
    // 0 and false are values, not absences: a truthiness check would lose them.
    { name: "zero", value: 0, expected: "0" },
    { name: "false", value: false, expected: "false" },
    { name: "null has no text", value: null, expected: undefined },
    { name: "undefined has no text", value: undefined, expected: undefined },
    // Lists and objects are not text-like: they are not stringified into "1,2" or "[object Object]".
    { name: "a list has no text", value: [1, 2], expected: undefined },
    { name: "an object has no text", value: { a: 1 }, expected: undefined },
  ];
  it.each(rows)("$name", ({ value, expected }) => {
    expect(textOf(value)).toBe(expected);
  });
});
