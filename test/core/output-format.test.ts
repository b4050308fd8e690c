import { decode } from "@toon-format/toon";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { render } from "../../src/core/output-format";
import { commonValue, compact, table } from "../../src/core/tables";

const answer = {
  session_id: "s-1",
  object_types: [
    { id: "disease", name: "疾病", score: 0.367, primary_keys: "disease_id" },
    { id: "symptom", name: "症状, 体征", score: 0.5, primary_keys: "symptom_id" },
  ],
  nested: { a: [1, 2, 3], b: { c: null, d: "line one\nline two" } },
  quoted: ['a "quoted" word', "- looks like a list", "true", "123", ""],
};

describe("render", () => {
  it("writes the same data three ways: JSON, YAML and TOON decode back to it", () => {
    expect(JSON.parse(render(answer, "json"))).toEqual(answer);
    expect(parse(render(answer, "yaml"))).toEqual(answer);
    expect(decode(render(answer, "toon"))).toEqual(answer);
  });

  it("writes an array of like rows as one TOON table: a header, then a line per row", () => {
    const text = render({ rows: answer.object_types }, "toon");
    expect(text.split("\n")[0]).toBe("rows[2]{id,name,score,primary_keys}:");
    expect(text.split("\n")).toHaveLength(3);
  });

  it("keeps long Chinese text on one YAML line (no folding)", () => {
    const long = "上气道梗阻".repeat(40);
    expect(render({ long }, "yaml")).toBe(`long: ${long}\n`);
  });
});

describe("tables", () => {
  it("gives every row every key, lists joined and absent cells empty; a column empty everywhere is left out", () => {
    expect(
      table([
        { a: 1, list: ["x", "y"], none: "" },
        { b: 0, none: null },
      ]),
    ).toEqual([
      { a: 1, list: "x, y", b: "" },
      { a: "", list: "", b: 0 },
    ]);
  });

  it("names the value most rows share only when more than one row has it", () => {
    expect(commonValue([{ k: "x" }, { k: "x" }, { k: "y" }], "k")).toBe("x");
    expect(commonValue([{ k: "x" }, { k: "y" }], "k")).toBeUndefined();
  });

  it("leaves out empty fields but keeps false and 0", () => {
    expect(compact({ a: "", b: [], c: {}, d: null, e: undefined, f: false, g: 0 })).toEqual({ f: false, g: 0 });
  });
});
