import { describe, expect, it } from "vitest";
import { fitToSize } from "../../src/store/session-store";

// How a session value over the store's size limit is cut (spec data-retrieval-tools §2.8): the
// first 80 % and the last 20 %, still valid JSON. Sizes are UTF-8 bytes of the JSON. A string
// keeps, of the budget less its quotes (2) and the "…" (3 bytes), characters from the start while
// they take at most 80 % of it, then characters from the end while the whole still fits; each
// character counted at its JSON size (1 byte for ASCII, 2 for an escaped quote, 3 for most Chinese).

const digits = "0123456789".repeat(10); // 100 characters, 102 bytes as JSON
const items = Array.from({ length: 10 }, (_, i) => `item${i}`); // each "itemN" is 7 bytes; the list 2 + 70 + 9 commas = 81

const rows: { name: string; value: unknown; maxBytes: number; json: string; truncated: boolean }[] = [
  // 102 bytes against 102: at the limit is within it, untouched (a "<" check would cut it).
  { name: "at the limit, untouched", value: digits, maxBytes: 102, json: JSON.stringify(digits), truncated: false },
  {
    name: "an object under the limit, untouched",
    value: { rows: items, note: "short" },
    maxBytes: 1000,
    json: JSON.stringify({ rows: items, note: "short" }),
    truncated: false,
  },
  // One byte over: 96 bytes of room, 76 first (76.8 is 80 %), then 20 last: 2 + 76 + 3 + 20 = 101.
  {
    name: "one byte over, the string is cut",
    value: digits,
    maxBytes: 101,
    json: `"${digits.slice(0, 76)}…${digits.slice(80)}"`,
    truncated: true,
  },
  // Budget 50: 45 bytes of room, 36 first and 9 last ("123456789"): exactly 50 bytes.
  {
    name: "a string keeps its first 80 % and last 20 %",
    value: digits,
    maxBytes: 50,
    json: `"${digits.slice(0, 36)}…123456789"`,
    truncated: true,
  },
  // 30 Chinese characters (3 bytes each, 92 bytes as JSON), budget 30: 25 bytes of room, 6 first
  // (18 ≤ 20), 2 last (24 ≤ 25); 2 + 18 + 3 + 6 = 29 bytes. Cut between characters: a byte cut at 30 would split 十.
  {
    name: "multi-byte characters are cut whole",
    value: "一二三四五六七八九十".repeat(3),
    maxBytes: 30,
    json: '"一二三四五六…九十"',
    truncated: true,
  },
  // A quote is 2 bytes as JSON (\"): budget 40 leaves 35 of room, 14 first (28 ≤ 28), 3 last (34); 2 + 28 + 3 + 6 = 39 bytes.
  {
    name: "escaped characters",
    value: '"'.repeat(50),
    maxBytes: 40,
    json: JSON.stringify(`${'"'.repeat(14)}…${'"'.repeat(3)}`),
    truncated: true,
  },
  // An emoji is 4 bytes: budget 40 leaves 35, 7 first (28), 1 last (32); 2 + 28 + 3 + 4 = 37 bytes.
  {
    name: "four-byte characters",
    value: "😀".repeat(20),
    maxBytes: 40,
    json: JSON.stringify(`${"😀".repeat(7)}…😀`),
    truncated: true,
  },
  // A control character is 6 bytes as JSON (\u0001): budget 40 leaves 35, 4 first (24), 1 last (30).
  {
    name: "control characters",
    value: "\u0001".repeat(50),
    maxBytes: 40,
    json: JSON.stringify(`${"\u0001".repeat(4)}…\u0001`),
    truncated: true,
  },
  // A list: 2 bytes of brackets, then each item counts its JSON size + 1 (comma). First items while
  // the total stays within 80 % of 50 = 40: 2 + 8 × 4 = 34 (a fifth would be 42). Then last items
  // while it stays within 50: item9 (42), item8 (50); item7 would be 58. The middle goes.
  {
    name: "a list keeps first items up to 80 % and last up to the budget",
    value: items,
    maxBytes: 50,
    json: '["item0","item1","item2","item3","item8","item9"]',
    truncated: true,
  },
  // The first item alone (103) exceeds 80 % of 50: no first items at all; the last two fit.
  // Items are kept or dropped whole, never cut inside.
  {
    name: "a list whose first item is too big keeps only its end",
    value: ["x".repeat(100), "a", "b"],
    maxBytes: 50,
    json: '["a","b"]',
    truncated: true,
  },
  // {"small":"x","big":"a…"} is 222 bytes; "big" (202) is the largest field; the others take
  // 222 − 202 = 20, so big gets 100 − 20 = 80: 75 of room, 60 a's first and 15 b's last.
  // "small" is left alone.
  {
    name: "an object shrinks its largest field",
    value: { small: "x", big: "a".repeat(100) + "b".repeat(100) },
    maxBytes: 100,
    json: `{"small":"x","big":"${"a".repeat(60)}…${"b".repeat(15)}"}`,
    truncated: true,
  },
  // 105 bytes; "rows" (81) is the largest, the rest 24, so rows gets 36: first items within 28.8
  // (item0-item2, used 26), last within 36 (item9, 34). "note" is untouched.
  {
    name: "a list inside an object is cut like a list",
    value: { rows: items, note: "short" },
    maxBytes: 60,
    json: '{"rows":["item0","item1","item2","item9"],"note":"short"}',
    truncated: true,
  },
];

describe("fitToSize", () => {
  it.each(rows)("$name", ({ value, maxBytes, json, truncated }) => {
    expect(fitToSize(value, maxBytes)).toEqual({ json, truncated });
  });

  it.each(rows)("$name: valid JSON within the budget", ({ value, maxBytes }) => {
    const out = fitToSize(value, maxBytes);
    expect(() => JSON.parse(out.json)).not.toThrow();
    expect(Buffer.byteLength(out.json)).toBeLessThanOrEqual(maxBytes);
  });

  it("leaves the caller's value as it was", () => {
    const value = { rows: [...items], note: "short", big: "a".repeat(200) };
    const copy = structuredClone(value);
    fitToSize(value, 60);
    expect(value).toEqual(copy);
  });

  it("cuts between characters, never inside a surrogate pair", () => {
    // 😀 is two UTF-16 units: a cut by units could leave a lone half, which JSON.stringify writes
    // as \ud83d and no reader turns back into the character.
    const out = fitToSize("😀".repeat(20), 40);
    expect(out.truncated).toBe(true);
    const text = JSON.parse(out.json) as string;
    expect(out.json).not.toMatch(/\\ud[89a-f]/i);
    expect([...text].every((c) => c === "😀" || c === "…")).toBe(true);
    expect(text).toMatch(/^😀+…😀+$/u);
  });
});

describe("fitToSize at the store's default limit (1 MiB)", () => {
  const MIB = 1024 * 1024;
  it.each([
    ["a string of emoji", "😀".repeat(400_000)],
    ["a string of escaped control characters", "\u0001".repeat(400_000)],
    [
      "an object of 20 large fields (more than one shrinking round each would allow at 8 rounds)",
      Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, "x".repeat(100_000)])),
    ],
  ])("keeps %s within the limit, as valid JSON", (_name, value) => {
    const out = fitToSize(value, MIB);
    expect(out.truncated).toBe(true);
    expect(Buffer.byteLength(out.json)).toBeLessThanOrEqual(MIB);
    expect(() => JSON.parse(out.json)).not.toThrow();
  });
});
