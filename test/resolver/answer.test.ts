import { decode } from "@toon-format/toon";
import { describe, expect, it } from "vitest";
import { render } from "../../src/core/output-format";
import { resolveAnswer } from "../../src/resolver/answer";

const metric = (company: string, values: (number | null)[]) => ({
  model: { unit_type: "numUnit", unit: "none" },
  datas: [{ labels: { company_id: company, region: "east" }, times: [1000, 2000], values }],
  step: "month",
  is_variable: false,
  is_calendar: true,
});

describe("resolveAnswer", () => {
  const result = {
    datas: [
      {
        _instance_id: "company-c1",
        _instance_identity: { company_id: "c1" },
        _display: "一号药企",
        company_id: "c1",
        sales: metric("c1", [null, 5]),
        top_product: { name: "A", share: 0.4 },
      },
      {
        _instance_id: "company-c2",
        _instance_identity: { company_id: "c2" },
        _display: "二号药企",
        company_id: "c2",
        sales: metric("c2", [3, 4]),
        top_product: { name: "B", share: 0.1 },
      },
    ],
    unmatched_identities: [{ company_id: "c9" }],
    debug: undefined,
    trace_id: "t-1",
  };

  it("puts the identities' keys in columns, metric series in one points table, what series share once", () => {
    const a = resolveAnswer(result) as Record<string, unknown>;
    expect(a["identity_keys"]).toEqual(["company_id"]);
    expect(a["metrics"]).toEqual([
      { property: "sales", unit_type: "numUnit", unit: "none", step: "month", is_variable: false, is_calendar: true },
    ]);
    // The label that repeats the row's identity is left out; the other label stays a column.
    expect(a["points"]).toEqual([
      { row: 0, property: "sales", region: "east", time: 1000, value: "" },
      { row: 0, property: "sales", region: "east", time: 2000, value: 5 },
      { row: 1, property: "sales", region: "east", time: 1000, value: 3 },
      { row: 1, property: "sales", region: "east", time: 2000, value: 4 },
    ]);
    const rows = a["rows"] as Record<string, unknown>[];
    expect(rows.map((r) => [r["row"], r["company_id"], r["_display"]])).toEqual([
      [0, "c1", "一号药企"],
      [1, "c2", "二号药企"],
    ]);
    // An operator's result (not a series) is kept as it came.
    expect(rows[1]!["top_product"]).toEqual({ name: "B", share: 0.1 });
    expect(a["unmatched_identities"]).toEqual([{ company_id: "c9" }]);
  });

  it("says per row what rows disagree on, rather than keep one row's unit", () => {
    const other = { ...metric("c2", [1, 1]), model: { unit_type: "currency", unit: "CNY" } };
    const a = resolveAnswer({ ...result, datas: [result.datas[0]!, { ...result.datas[1]!, sales: other }] }) as Record<
      string,
      unknown
    >;
    expect((a["metrics"] as Record<string, unknown>[]).map((m) => [m["row"], m["unit"]])).toEqual([
      [0, "none"],
      [1, "CNY"],
    ]);
  });

  it("decodes from TOON to the same answer", () => {
    const a = resolveAnswer(result);
    expect(decode(render(a, "toon"))).toEqual(a);
  });
});
