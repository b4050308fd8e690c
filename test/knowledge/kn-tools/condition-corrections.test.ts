import { beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../../src/core/json";
import { EmbeddedBackend } from "../../../src/kn/embedded/engine";
import type { DataProperty, ObjectType } from "../../../src/kn/types";
import { checkCondition, noProblems, type Problems } from "../../../src/knowledge/kn-tools/conditions/check-condition";
import { type ConditionInput, conditionInput } from "../../../src/knowledge/kn-tools/conditions/condition-input";
import { VALUE_SHAPES } from "../../../src/knowledge/kn-tools/conditions/operators";
import { testContext } from "../../helpers/call-context";
import { withCorrection } from "./corrections";

/**
 * The condition checker's corrected examples, as a property over a large
 * batch of bad conditions: every correction offered passes the same check
 * (in place, nothing left wrong at or below its node), and several mistakes
 * in one node are all reported, with one correction fixing them together.
 */

const prop = (name: string, condition_operations: string[]): DataProperty => ({
  name,
  display_name: name,
  type: "string",
  comment: "",
  condition_operations,
});

/** An object type allowing a bit of everything, beside the sample network's (which mostly allow the six defaults). */
const RICH: ObjectType = {
  id: "drug",
  name: "药品",
  comment: "",
  tags: [],
  primary_keys: ["id"],
  display_key: "name",
  logic_properties: [
    {
      name: "sales",
      display_name: "销量",
      type: "metric",
      comment: "",
      parameters: [],
      data_source: { type: "metric", id: "m" },
    },
  ],
  data_properties: [
    prop("id", ["==", "in"]),
    prop("name", ["==", "!=", "in", "not_in", "like", "not_like", "regex", "exist", "match", "multi_match", "knn"]),
    prop("dose", ["==", "!=", ">", ">=", "<", "<=", "range", "out_range", "exist", "not_exist"]),
    prop("category", ["==", "!=", "in", "not_in", "not_exist"]),
    prop("tags", ["contain", "not_contain", "empty", "not_empty"]),
    prop("note", []),
  ],
};

/**
 * The sample network's kinds of object type: the six default operations
 * (disease), a property declaring none (drug_product), none declared at all
 * (drug_product_new), logic properties (company), full-text and knn (skills).
 */
const SAMPLE_TYPES = ["disease", "drug_product", "drug_product_new", "company", "skills"];

let types: ObjectType[] = [];
beforeAll(async () => {
  const backend = EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" });
  types = [...(await backend.getObjectTypes(testContext(), "kn_medical", SAMPLE_TYPES)), RICH];
});

const FIELD_MISTAKES = (t: ObjectType): (string | undefined)[] => [
  t.display_key.slice(0, -1),
  "name",
  `x_${t.display_key}`,
  t.display_key.toUpperCase(),
  t.logic_properties[0]?.name ?? "nothing_here",
  "",
  undefined,
  "*",
  "__id",
];
const OPERATION_MISTAKES = [
  ...Object.keys(VALUE_SHAPES),
  "=",
  "contains",
  "eq",
  "gt",
  "lte",
  "exists",
  "is_null",
  "starts_with",
  "between_and",
  "LIKE",
  "In",
  "knnn",
  "foo",
  "OR",
  "and",
];
const VALUE_MISTAKES: (Json | undefined)[] = [
  undefined,
  "气道",
  "",
  3,
  ["儿童"],
  [],
  [1, 2, 3],
  [0, 10],
  { a: 1 },
  "%炎%",
];
const EXTRAS: Partial<ConditionInput>[] = [
  {},
  { limit_key: "min_distance", limit_value: 0.4 },
  { limit_key: "topk" },
  { limit_value: 0 },
  { limit_key: "min_score", limit_value: -1 },
  { value_from: "param" },
  { fields: ["name"] },
  { match_type: "phrase" },
  { sub_conditions: [{ field: "id", operation: "==", value: 1 }] },
];

/** Every leaf the mistakes above make on `type`, parsed as the tools parse a condition argument. */
function badLeaves(type: ObjectType): ConditionInput[] {
  const leaves: ConditionInput[] = [];
  for (const field of FIELD_MISTAKES(type))
    for (const operation of OPERATION_MISTAKES)
      for (const value of VALUE_MISTAKES) {
        const raw = { operation, ...(field !== undefined ? { field } : {}), ...(value !== undefined ? { value } : {}) };
        const parsed = conditionInput.safeParse(raw);
        if (parsed.success) leaves.push(parsed.data);
      }
  // The knn, multi_match and group keys on a leaf of each operation, on a field the type has.
  for (const operation of OPERATION_MISTAKES)
    for (const extra of EXTRAS) {
      const parsed = conditionInput.safeParse({ field: type.display_key, operation, value: "气道", ...extra });
      if (parsed.success) leaves.push(parsed.data);
    }
  return leaves;
}

/** Each correction put in place in `condition`: what the checker still finds wrong at or below it. */
function leftAfterCorrections(condition: ConditionInput, type: ObjectType, problems: Problems) {
  return problems.examples.map(({ path, value }) => {
    const fixed = conditionInput.parse(withCorrection("condition", condition, path, value));
    const again = noProblems();
    checkCondition(fixed, type, "condition", again);
    return {
      path,
      value,
      left: again.violations.filter((v) => v.field === path || v.field.startsWith(`${path}.`)),
    };
  });
}

describe("the condition checker's corrections", () => {
  it("offers, for thousands of bad leaves on each kind of object type, only corrections that pass the same check", () => {
    let bad = 0;
    let corrected = 0;
    for (const type of types) {
      for (const leaf of badLeaves(type)) {
        const problems = noProblems();
        if (checkCondition(leaf, type, "condition", problems) !== undefined) continue;
        bad++;
        expect(problems.examples.length, JSON.stringify(leaf)).toBeLessThanOrEqual(1);
        for (const { path, value, left } of leftAfterCorrections(leaf, type, problems)) {
          corrected++;
          expect(left, `${type.id}: ${JSON.stringify(leaf)} corrected as ${path} = ${JSON.stringify(value)}`).toEqual(
            [],
          );
        }
      }
    }
    // Not vacuous: most of the batch is bad, and many of those can be corrected.
    expect(bad).toBeGreaterThan(20_000);
    expect(corrected).toBeGreaterThan(5_000);
  });

  it("does the same inside groups, for groups' own mistakes and nested leaves'", () => {
    const type = RICH;
    const leaves = badLeaves(type).filter((_, i) => i % 37 === 0);
    const groups: unknown[] = [
      { operation: "or" },
      { operation: "OR" },
      { operation: "Or", sub_conditions: [{ field: "dose", operation: ">", value: 3 }] },
      { operation: "and", field: "name", value: "x" },
      { operation: "and", field: "dose", sub_conditions: [] },
      { operation: "or", limit_key: "k", sub_conditions: [{ field: "id", operation: "==", value: 1 }] },
      ...leaves.map((leaf, i) => ({
        operation: i % 2 ? "and" : "or",
        sub_conditions: [
          { field: "id", operation: "==", value: 1 },
          leaf,
          { operation: "and", sub_conditions: [leaves[(i + 1) % leaves.length]] },
        ],
      })),
    ];
    let corrected = 0;
    for (const raw of groups) {
      const condition = conditionInput.parse(raw);
      const problems = noProblems();
      expect(checkCondition(condition, type, "condition", problems), JSON.stringify(raw)).toBeUndefined();
      for (const { path, value, left } of leftAfterCorrections(condition, type, problems)) {
        corrected++;
        expect(left, `${JSON.stringify(raw)} corrected as ${path} = ${JSON.stringify(value)}`).toEqual([]);
      }
    }
    expect(corrected).toBeGreaterThan(50);
  });

  const disease = () => types.find((t) => t.id === "disease")!;
  const check = (c: unknown, type = disease()) => {
    const problems = noProblems();
    checkCondition(conditionInput.parse(c), type, "condition", problems);
    return problems;
  };

  it("reports a wrong field and an unknown operation together, and corrects both in one example", () => {
    const p = check({ field: "name", operation: "contains", value: "气道" });
    expect(p.violations.map((v) => v.field).sort()).toEqual(["condition.field", "condition.operation"]);
    expect(p.examples).toEqual([
      { path: "condition", value: { field: "disease_name", operation: "like", value: "气道" } },
    ]);
    const three = check({ field: "ag", operation: "equals", value: ["儿童", "婴幼儿"], limit_key: "k" });
    expect(three.violations.map((v) => v.field).sort()).toEqual([
      "condition.field",
      "condition.limit_key",
      "condition.operation",
      "condition.value",
    ]);
    expect(three.examples).toEqual([
      { path: "condition", value: { field: "age", operation: "in", value: ["儿童", "婴幼儿"] } },
    ]);
  });

  it("offers nothing rather than a correction the check would refuse", () => {
    // disease_name allows no operation without a value: "exists" has no correction (it used to offer exist).
    const exists = check({ field: "disease_name", operation: "exists" });
    expect(exists.violations[0]?.description.en).toContain('did you mean "exist"? disease_name does not allow it');
    expect(exists.violations[0]?.description.zh).toContain('是否指 "exist"？disease_name 不允许它');
    expect(exists.examples).toEqual([]);
    // An or of nothing matches nothing: "OR" alone is not corrected to {"operation":"or"}, which is refused too.
    expect(check({ operation: "OR" }).examples).toEqual([]);
    expect(check({ operation: "or" }).violations).toEqual([
      {
        field: "condition.sub_conditions",
        description: {
          en: expect.stringContaining("empty, so the or group matches no instance"),
          zh: expect.stringContaining("这个 or 组不匹配任何实例"),
        },
      },
    ]);
    // An and of nothing is the "every instance" idiom, written out in full.
    expect(check({ operation: "AND" }).examples).toEqual([
      { path: "condition", value: { operation: "and", sub_conditions: [] } },
    ]);
    // A comparison is never swapped for its opposite or an unordered one.
    const rich = check({ field: "category", operation: ">", value: "a" }, RICH);
    expect(rich.violations[0]?.description.en).not.toContain("use");
    expect(rich.examples).toEqual([]);
    expect(check({ field: "id", operation: "!=", value: 1 }, RICH).examples).toEqual([]);
  });

  it("reads knn's min_distance as max_distance, the platform's spelling", () => {
    const out = checkCondition(
      conditionInput.parse({
        field: "name",
        operation: "knn",
        value: "急救",
        limit_key: "min_distance",
        limit_value: 0.4,
      }),
      RICH,
      "condition",
      noProblems(),
    );
    expect(out).toEqual({
      field: "name",
      operation: "knn",
      value: "急救",
      value_from: "const",
      limit_key: "max_distance",
      limit_value: 0.4,
    });
    const negative = check(
      { field: "name", operation: "knn", value: "x", limit_key: "min_distance", limit_value: -1 },
      RICH,
    );
    expect(negative.violations).toEqual([
      {
        field: "condition.limit_value",
        description: {
          en: "min_distance must be a number of at least 0",
          zh: "min_distance 的取值必须是不小于 0 的数字",
        },
      },
    ]);
  });
});
