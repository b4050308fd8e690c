import { describe, expect, it } from "vitest";
import { JsonShapeScanner } from "../../src/core/json-shape";

const LOOSE = { maxDepth: 10_000, maxValues: 10_000_000 };

/** Object members plus array items of a parsed value, counted without recursion. */
function countValues(value: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    const children = Array.isArray(v) ? v : Object.values(v);
    count += children.length;
    stack.push(...children);
  }
  return count;
}

/** Scans `text` cut into chunks at `cuts` (byte offsets); the scanner's count and the limit it passed. */
function scan(text: string | Buffer, cuts: number[] = [], limits = LOOSE) {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const scanner = new JsonShapeScanner(limits);
  let from = 0;
  let over: string | undefined;
  for (const to of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
    over = scanner.write(bytes.subarray(from, to));
    from = to;
  }
  return { values: scanner.values, over };
}

/** A seeded generator (mulberry32), so a failure names the seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Strings that would fool a count of brackets and commas: quotes, backslashes, brackets, colons, multi-byte text. */
const TRICKY = [
  "",
  "a",
  '"',
  "\\",
  '\\"',
  "[",
  "]",
  "{",
  "}",
  ",",
  ":",
  '{"a":[1,2]}',
  "中文，",
  "😀",
  "\n\t",
  '\\\\"',
];

function randomValue(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth > 5 || pick < 0.45) {
    const scalar = next();
    if (scalar < 0.2) return null;
    if (scalar < 0.3) return next() < 0.5;
    if (scalar < 0.5) return Math.round((next() - 0.5) * 1e6) / 100;
    const parts = Array.from({ length: Math.floor(next() * 4) }, () => TRICKY[Math.floor(next() * TRICKY.length)]);
    return parts.join("");
  }
  const size = Math.floor(next() * 5);
  if (pick < 0.7) return Array.from({ length: size }, () => randomValue(next, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < size; i++)
    out[`${TRICKY[Math.floor(next() * TRICKY.length)]}${i}`] = randomValue(next, depth + 1);
  return out;
}

describe("JsonShapeScanner", () => {
  it("counts object members and array items at every depth; a string is one value whatever it holds", () => {
    expect(scan("{}").values).toBe(0);
    expect(scan("[]").values).toBe(0);
    expect(scan("[ ]").values).toBe(0);
    expect(scan('"[1,2,{\\"a\\":3}]"').values).toBe(0);
    expect(scan("[1]").values).toBe(1);
    expect(scan('{"a":1,"b":[1,[],{}],"c":{"d":"x,y:z"}}').values).toBe(7);
    expect(scan(' [ [ ] , [ 1 , "]" ] ] ').values).toBe(4);
  });

  it("counts the same on random JSON cut at random points (inside strings and escapes included) as on JSON.parse's result", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = random(seed);
      const value = randomValue(next, 0);
      const text = JSON.stringify(value, null, next() < 0.3 ? 2 : undefined);
      const bytes = Buffer.from(text, "utf8");
      const cuts = Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * bytes.length));
      expect(scan(bytes, cuts).values, `seed ${seed}: ${text}`).toBe(countValues(JSON.parse(text)));
    }
  });

  it("counts a body cut at every byte the same as whole", () => {
    const text = '{"k\\"[":["a\\\\",{"b":"\\u005b,"},[]],"中":"\\"}"}';
    const runs = JSON.stringify({ a: `${"\\".repeat(7)}"${"\\".repeat(8)}`, b: ["\\", '"\\"'] });
    for (let cut = 1; cut < runs.length; cut++) expect(scan(runs, [cut]).values, `cut at ${cut}`).toBe(4);
    const whole = scan(text).values;
    expect(whole).toBe(countValues(JSON.parse(text)));
    const bytes = Buffer.from(text, "utf8");
    for (let cut = 1; cut < bytes.length; cut++) expect(scan(bytes, [cut]).values, `cut at ${cut}`).toBe(whole);
    expect(
      scan(
        bytes,
        Array.from({ length: bytes.length }, (_, i) => i),
      ).values,
    ).toBe(whole);
  });

  it("stops at the first value past maxValues, whatever follows (invalid JSON included)", () => {
    const limits = { maxDepth: 64, maxValues: 100 };
    const members = (n: number) => Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(",");
    expect(scan(`{${members(100)}}`, [], limits).over).toBeUndefined();
    expect(scan(`{${members(101)}}`, [], limits).over).toBe("values");
    expect(scan(`{${members(101)}, this is not JSON`, [], limits)).toEqual({ values: 101, over: "values" });
    expect(scan(`[${"0,".repeat(100)}0]`, [], limits).over).toBe("values");
  });

  it("refuses nesting past maxDepth, counted outside strings and escapes, and stops reading", () => {
    const depth = (text: string, maxDepth: number) => scan(text, [], { maxDepth, maxValues: 1_000_000 }).over;
    expect(depth('{"a":[[1]]}', 3)).toBeUndefined();
    expect(depth('{"a":[[[1]]]}', 3)).toBe("depth");
    expect(depth('{"a":"[[[[{{{{","b":"\\"[[[["}', 1)).toBeUndefined();
    expect(depth("[]".repeat(10_000), 1)).toBeUndefined();
    expect(depth(`${"[".repeat(100_000)}${"]".repeat(100_000)}`, 64)).toBe("depth");
    const limits = { maxDepth: 64, maxValues: 1_000_000 };
    expect(scan(`${"[".repeat(64)}${"]".repeat(64)}`, [], limits).over).toBeUndefined();
    expect(scan(`${"[".repeat(65)}${"]".repeat(65)}`, [], limits).over).toBe("depth");
    expect(scan(`{"a":"${"[".repeat(100)}"}`, [], limits).over).toBeUndefined();
    const scanner = new JsonShapeScanner(limits);
    expect(scanner.write(Buffer.from("[".repeat(100)))).toBe("depth");
    expect(scanner.write(Buffer.from("]"))).toBe("depth");
  });
});
