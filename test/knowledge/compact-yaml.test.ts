import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { yaml } from "../../src/knowledge/compact-yaml";

/** What JSON keeps of a value: what a YAML reader must get back. */
const asJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

const TRICKY = [
  "",
  " leading",
  "trailing ",
  "a: b",
  "ends:",
  "a #b",
  "a#b",
  "http://host:80/path",
  "- dash",
  "-1",
  "+1",
  "1.5",
  ".5",
  "1e3",
  "0x1F",
  "0o17",
  ".inf",
  "-.inf",
  ".nan",
  "~",
  "null",
  "Null",
  "true",
  "FALSE",
  "yes",
  "No",
  "on",
  "off",
  "y",
  "2024-01-01",
  "10片/盒",
  "line\nbreak",
  "tab\there",
  'quote " inside',
  "'single'",
  '"double"',
  "[list]",
  "{map}",
  "*alias",
  "&anchor",
  "!tag",
  "%directive",
  "@at",
  "`tick",
  "|literal",
  ">folded",
  "? key",
  ", comma",
  "<< merge",
  "上、下气道梗阻",
  "ＩｇＡ（２型）",
  "emoji 😀",
  "\u2028separator",
  "\ufeffbom",
  "back\\slash",
  "控制\u0007字符",
];

describe("the compact YAML writer", () => {
  it.each(TRICKY)("reads back %j as the same string, as a value and as a key", (s) => {
    const value = { [s]: s, list: [s, { [s]: [s] }] };
    expect(parse(yaml(value))).toEqual(value);
  });

  it("reads back nested maps and lists, empty ones, numbers, booleans and null, leaving out undefined as JSON does", () => {
    const value = {
      keyword: "测试产品",
      instances: [
        {
          instance_id: "product_01",
          score: 0.85,
          properties: { product_id: "product_01", price: 12.5, stock: 0, on_sale: true, discontinued: null },
          neighbors: {
            "product_factory 产品的工厂 (outgoing)": ["工厂 1 [factory:factory_1]", { "工厂 2": { city: "上海" } }],
          },
        },
        { instance_id: "product_02", already_returned: true, missing: undefined },
      ],
      nested: [[1, [2, []]], {}, [], [{}]],
      empty: {},
      none: [],
      big: 1e21,
      negative: -3,
    };
    expect(parse(yaml(value))).toEqual(asJson(value));
  });

  it("writes what a YAML library writes for the usual answer shapes", () => {
    const value = {
      objects: {
        disease: {
          name: "疾病",
          score: 0.484,
          primary_keys: ["disease_id"],
          properties: [{ name: "age", display_name: "发病年龄段，表示发病年龄群体", type: "varchar" }],
        },
      },
    };
    expect(yaml(value)).toBe(stringify(value, { lineWidth: 0 }));
  });

  it("reads back random JSON values", () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const gen = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.4)
        return pick<unknown>([pick(TRICKY), random() * 100 - 50, Math.floor(random() * 10), true, false, null]);
      if (r < 0.7) return Array.from({ length: Math.floor(random() * 4) }, () => gen(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(TRICKY), gen(depth + 1)]));
    };
    for (let i = 0; i < 300; i++) {
      const value = { root: gen(0) };
      expect(parse(yaml(value)), JSON.stringify(value)).toEqual(asJson(value));
    }
  });
});
