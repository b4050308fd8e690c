import { describe, expect, it } from "vitest";
import { parseJsonStream } from "../../src/core/json-stream";

describe("parseJsonStream", () => {
  it("reads compact and pretty-printed values one after another, strings with brackets and escapes included", () => {
    const text = '{"a":"}{","b":[1,2]}\n{\n  "c": "say \\"hi\\" ]"\n}\n[1, {"d": null}]\n';
    expect(parseJsonStream(text)).toEqual({
      values: [{ a: "}{", b: [1, 2] }, { c: 'say "hi" ]' }, [1, { d: null }]],
      rest: "",
    });
  });

  it("stops at what is not JSON, says where and hands back the rest", () => {
    const { values, problem, rest } = parseJsonStream('{"ok":true}\nFailure: connection refused\n');
    expect(values).toEqual([{ ok: true }]);
    expect(problem).toMatch(/^not JSON at "Failure: connection refused/);
    expect(rest).toBe("Failure: connection refused\n");
  });

  it("reports a value that is cut short", () => {
    const { values, problem, rest } = parseJsonStream('{"a":1} {"b":');
    expect(values).toEqual([{ a: 1 }]);
    expect(problem).toMatch(/^not JSON \(/);
    expect(rest).toBe('{"b":');
  });
});
