import { describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { ToolError } from "../../src/errors/tool-error";
import { evaluateCondition } from "../../src/kn/embedded/conditions";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { ObjectStore } from "../../src/kn/embedded/object-store";
import { ScanBudget } from "../../src/kn/embedded/scan-budget";
import {
  type Condition,
  type DataProperty,
  isCanonicalObjectQuery,
  isCanonicalSubgraphQuery,
  type ObjectType,
  objectQuerySchema,
  subgraphQuerySchema,
} from "../../src/kn/types";
import { embedLocally } from "../../src/upstream/local-embedder";
import { clientWith } from "../helpers/rpc";
import { startServer } from "../helpers/server";

// The embedded engine's condition language over one small object type. Rows are given out of
// primary-key order; the store sorts them, and every answer is listed by id ascending. Full-text
// scores are sums of idf = ln(1 + (n − df + 0.5) / (df + 0.5)) over the shared tokens: with
// n = 5 rows and a token in one row, ln(1 + 4.5 / 1.5) = ln 4.

const prop = (name: string, type: string, condition_operations: string[]): DataProperty => ({
  name,
  display_name: name,
  type,
  comment: "",
  condition_operations,
});
const type: ObjectType = {
  id: "drug",
  name: "药品",
  comment: "",
  tags: [],
  primary_keys: ["id"],
  display_key: "name",
  logic_properties: [],
  data_properties: [
    prop("id", "integer", ["==", "in"]),
    prop("name", "text", [
      "==",
      "!=",
      "in",
      "not_in",
      "like",
      "not_like",
      "regex",
      "exist",
      "not_exist",
      "match",
      "match_phrase",
      "multi_match",
      "knn",
    ]),
    prop("dose", "integer", ["==", "!=", ">", ">=", "<", "<=", "range", "out_range", "exist", "not_exist"]),
    prop("category", "keyword", ["==", "!=", "in", "not_in", "not_exist"]),
    // The platform's "=" alias is read as "==".
    prop("code", "keyword", ["=", "regex"]),
    // Nothing declared: the defaults of its type (keyword: ==, !=, in, not_in, like, not_like, regex, exist, not_exist).
    prop("status", "keyword", []),
  ],
};
const store = new ObjectStore(type, [
  { id: 4, name: "Aspirin tablets", dose: "50", category: "drug", code: "A-004", status: "on sale" },
  { id: 1, name: "阿司匹林肠溶片", dose: 100, category: "药品", code: "A-001", status: "on sale" },
  { id: 2, name: "布洛芬缓释胶囊", dose: 300, category: "药品", code: "B-002", status: "withdrawn" },
  { id: 3, name: "ＩｇＡ肾病", dose: null, category: "疾病", code: "C-3" },
  // An empty name, a dose of 0, no category or code at all.
  { id: 5, name: "", dose: 0 },
]);

const LN4 = Math.log(4);

/** A budget without a caller: the conditions of these tests are small. */
const budget = () => ScanBudget.unlimited(type.id);

async function select(condition: Condition | undefined): Promise<{ ids: number[]; scores: Record<number, number> }> {
  const m = await evaluateCondition(store, condition, budget());
  const id = (i: number) => store.rows[i]!.id as number;
  return { ids: m.rows.map(id), scores: Object.fromEntries([...m.scores].map(([i, s]) => [id(i), s])) };
}

describe("evaluateCondition: one row per leaf operation", () => {
  const rows: { name: string; condition: Condition; ids: number[] }[] = [
    { name: "== a string", condition: { operation: "==", field: "category", value: "药品" }, ids: [1, 2] },
    // Numbers and their string forms are equal (as SQL would compare them): row 4 stores "50".
    { name: "== a number meets its string form", condition: { operation: "==", field: "dose", value: 50 }, ids: [4] },
    // The declared "=" is read as "==".
    { name: "== on a property declaring =", condition: { operation: "==", field: "code", value: "A-001" }, ids: [1] },
    // Row 5 has no category: it is neither equal nor unequal; a plain !== would select it.
    {
      name: "!= leaves out rows without the value",
      condition: { operation: "!=", field: "category", value: "药品" },
      ids: [3, 4],
    },
    // Compared as numbers where both sides read as numbers: "50" > 9 (as text "50" < "9"); 0 is not.
    { name: "> compares numerically", condition: { operation: ">", field: "dose", value: 9 }, ids: [1, 2, 4] },
    // Strict: 100 itself is out.
    { name: "> is strict", condition: { operation: ">", field: "dose", value: 100 }, ids: [2] },
    { name: ">= includes the bound", condition: { operation: ">=", field: "dose", value: 100 }, ids: [1, 2] },
    // 0 is a value and below 100; row 3's null is no value and is never compared.
    { name: "< counts 0, not null", condition: { operation: "<", field: "dose", value: 100 }, ids: [4, 5] },
    { name: "<= includes the bound", condition: { operation: "<=", field: "dose", value: 50 }, ids: [4, 5] },
    {
      name: "in any of the values",
      condition: { operation: "in", field: "category", value: ["疾病", "drug"] },
      ids: [3, 4],
    },
    // "4" finds id 4, as with ==.
    {
      name: "in with a number's string form",
      condition: { operation: "in", field: "id", value: [2, "4"] },
      ids: [2, 4],
    },
    // Like !=, rows without the value are not "not in".
    {
      name: "not_in leaves out rows without the value",
      condition: { operation: "not_in", field: "category", value: ["药品"] },
      ids: [3, 4],
    },
    { name: "like finds a substring", condition: { operation: "like", field: "name", value: "片" }, ids: [1] },
    // NFKC + lower case on both sides: half-width "iga" finds the stored full-width "ＩｇＡ肾病"...
    {
      name: "like: half-width finds full-width",
      condition: { operation: "like", field: "name", value: "iga" },
      ids: [3],
    },
    // ...and full-width upper case finds half-width mixed case.
    {
      name: "like: full-width finds half-width",
      condition: { operation: "like", field: "name", value: "ＡＳＰＩＲＩＮ" },
      ids: [4],
    },
    { name: "like ignores case", condition: { operation: "like", field: "name", value: "TAB" }, ids: [4] },
    // The type's defaults: status declares nothing and is a keyword, so like is allowed.
    {
      name: "like on a property with default operations",
      condition: { operation: "like", field: "status", value: "SALE" },
      ids: [1, 4],
    },
    // Every row with text that lacks 片; row 5's empty name is text (so it is selected), although
    // exist counts an empty string as no value (see exist / not_exist).
    {
      name: "not_like selects the other texts, the empty one too",
      condition: { operation: "not_like", field: "name", value: "片" },
      ids: [2, 3, 4, 5],
    },
    // [low, high): 50 is in, 300 is out.
    { name: "range is [low, high)", condition: { operation: "range", field: "dose", value: [50, 300] }, ids: [1, 4] },
    // The complement among rows with a value: 300 and 0; null is neither in nor out.
    {
      name: "out_range, rows with a value only",
      condition: { operation: "out_range", field: "dose", value: [50, 300] },
      ids: [2, 5],
    },
    // The empty string is no value: row 5 has no name in this sense.
    {
      name: "exist: the empty string does not exist",
      condition: { operation: "exist", field: "name" },
      ids: [1, 2, 3, 4],
    },
    { name: "not_exist: the empty string", condition: { operation: "not_exist", field: "name" }, ids: [5] },
    // null does not exist, 0 does: a falsy check would also select row 5.
    { name: "not_exist: null, not 0", condition: { operation: "not_exist", field: "dose" }, ids: [3] },
    { name: "not_exist: a missing key", condition: { operation: "not_exist", field: "category" }, ids: [5] },
    // Anchored patterns: C-3 has one digit.
    { name: "regex", condition: { operation: "regex", field: "code", value: "^A-\\d{3}$" }, ids: [1, 4] },
    { name: "match a token", condition: { operation: "match", field: "name", value: "阿司匹林" }, ids: [1] },
    // match shares tokens in any order...
    {
      name: "match in any order",
      condition: { operation: "match", field: "name", value: "tablets aspirin" },
      ids: [4],
    },
    // ...match_phrase needs the normalised phrase itself: same tokens reversed find nothing.
    {
      name: "match_phrase needs the phrase",
      condition: { operation: "match_phrase", field: "name", value: "tablets aspirin" },
      ids: [],
    },
    {
      name: "match_phrase finds the phrase",
      condition: { operation: "match_phrase", field: "name", value: "ASPIRIN Tablets" },
      ids: [4],
    },
    {
      name: "multi_match over listed fields",
      condition: { operation: "multi_match", fields: ["name"], value: "阿司匹林" },
      ids: [1],
    },
    // "*" is every property allowing the operation: name alone here.
    { name: "match over every text field", condition: { operation: "match", field: "*", value: "阿司匹林" }, ids: [1] },
    // The same text is its own nearest neighbour (cosine 1); k = 1 keeps only it.
    {
      name: "knn by text, k = 1",
      condition: { operation: "knn", field: "name", value: "阿司匹林肠溶片", limit_value: 1 },
      ids: [1],
    },
    {
      name: "knn by vector, k = 1",
      condition: { operation: "knn", field: "name", value: [...embedLocally("Aspirin tablets")], limit_value: 1 },
      ids: [4],
    },
    // Only the identical text reaches 0.99 (other names share no n-gram with it).
    {
      name: "knn by min_score",
      condition: {
        operation: "knn",
        field: "name",
        value: "阿司匹林肠溶片",
        limit_key: "min_score",
        limit_value: 0.99,
      },
      ids: [1],
    },
    {
      name: "knn by max_distance",
      condition: {
        operation: "knn",
        field: "name",
        value: "Aspirin tablets",
        limit_key: "max_distance",
        limit_value: 0.01,
      },
      ids: [4],
    },
    { name: "__id ==", condition: { operation: "==", field: "__id", value: "drug-2" }, ids: [2] },
    {
      name: "__id in",
      condition: { operation: "in", field: "__id", value: ["drug-3", "drug-1", "drug-9"] },
      ids: [1, 3],
    },
  ];
  it.each(rows)("$name", async ({ condition, ids }) => {
    expect((await select(condition)).ids).toEqual(ids);
  });

  it("selects every row without a condition", async () => {
    expect(await select(undefined)).toEqual({ ids: [1, 2, 3, 4, 5], scores: {} });
  });
});

describe("evaluateCondition: and / or", () => {
  const rows: { name: string; condition: Condition; ids: number[]; scores?: Record<number, number> }[] = [
    {
      name: "and intersects",
      condition: {
        operation: "and",
        sub_conditions: [
          { operation: "==", field: "category", value: "药品" },
          { operation: ">", field: "dose", value: 100 },
        ],
      },
      ids: [2],
    },
    {
      name: "or unites",
      condition: {
        operation: "or",
        sub_conditions: [
          { operation: "==", field: "category", value: "疾病" },
          { operation: "like", field: "name", value: "tab" },
        ],
      },
      ids: [3, 4],
    },
    // Nested: (疾病 or drug) and a dose; row 3's dose is null.
    {
      name: "or inside and",
      condition: {
        operation: "and",
        sub_conditions: [
          {
            operation: "or",
            sub_conditions: [
              { operation: "==", field: "category", value: "疾病" },
              { operation: "==", field: "category", value: "drug" },
            ],
          },
          { operation: "exist", field: "dose" },
        ],
      },
      ids: [4],
    },
    // An empty and holds for every row, an empty or for none.
    { name: "empty and is true", condition: { operation: "and", sub_conditions: [] }, ids: [1, 2, 3, 4, 5] },
    { name: "empty or is false", condition: { operation: "or", sub_conditions: [] }, ids: [] },
    // Scores add up across an or: aspirin (ln 4) + tablets (ln 4), not the best of the two.
    {
      name: "or sums the scores of its parts",
      condition: {
        operation: "or",
        sub_conditions: [
          { operation: "match", field: "name", value: "aspirin" },
          { operation: "match", field: "name", value: "tablets" },
        ],
      },
      ids: [4],
      scores: { 4: 2 * LN4 },
    },
    // One match of two tokens in the same field: the field's tokens add up too (2 ln 4).
    {
      name: "match sums its tokens",
      condition: { operation: "match", field: "name", value: "aspirin tablets" },
      ids: [4],
      scores: { 4: 2 * LN4 },
    },
    // A filter beside a match keeps the match's score on the rows it keeps.
    {
      name: "and keeps the scores of the rows it keeps",
      condition: {
        operation: "and",
        sub_conditions: [
          { operation: "match", field: "name", value: "阿司匹林" },
          { operation: "==", field: "category", value: "药品" },
        ],
      },
      ids: [1],
      scores: { 1: LN4 },
    },
    // ...and a test (!=) that removes the matched row removes its score as well.
    {
      name: "and drops the scores of the rows a test removes",
      condition: {
        operation: "and",
        sub_conditions: [
          { operation: "match", field: "name", value: "阿司匹林" },
          { operation: "!=", field: "category", value: "药品" },
        ],
      },
      ids: [],
      scores: {},
    },
  ];
  it.each(rows)("$name", async ({ condition, ids, scores }) => {
    const out = await select(condition);
    expect(out.ids).toEqual(ids);
    if (scores) {
      expect(Object.keys(out.scores)).toEqual(Object.keys(scores));
      for (const [id, s] of Object.entries(scores)) expect(out.scores[Number(id)]).toBeCloseTo(s, 9);
    }
  });
});

describe("evaluateCondition: INVALID_ARGUMENT", () => {
  const rows: { name: string; condition: Condition; violations: { field: string; description: string }[] }[] = [
    // category lists ==, !=, in, not_in, not_exist: not like, although its type's defaults would allow it.
    {
      name: "an operation the property does not list",
      condition: { operation: "like", field: "category", value: "药" },
      violations: [
        {
          field: "condition.operation",
          description: "category does not support like; it supports: == != in not_in not_exist",
        },
      ],
    },
    {
      name: "knn on a number",
      condition: { operation: "knn", field: "dose", value: "x" },
      violations: [{ field: "condition.operation", description: "dose does not support knn" }],
    },
    // status declares nothing; keyword's defaults do not include match.
    {
      name: "beyond a type's defaults",
      condition: { operation: "match", field: "status", value: "sale" },
      violations: [{ field: "condition.operation", description: "status does not support match" }],
    },
    {
      name: "an unknown field",
      condition: { operation: "==", field: "price", value: 1 },
      violations: [
        {
          field: "condition.field",
          description: "price is not a data property of drug; it has: id, name, dose, category, code, status",
        },
      ],
    },
    {
      name: "no field",
      condition: { operation: "exist" },
      violations: [{ field: "condition.field", description: "exist needs a field" }],
    },
    {
      name: "== with a list",
      condition: { operation: "==", field: "category", value: ["药品"] },
      violations: [{ field: "condition.value", description: "== needs a string, number or boolean value" }],
    },
    {
      name: "in with a string",
      condition: { operation: "in", field: "category", value: "药品" },
      violations: [{ field: "condition.value", description: "in needs an array" }],
    },
    {
      name: "range with one bound",
      condition: { operation: "range", field: "dose", value: [1] },
      violations: [{ field: "condition.value", description: "range needs [low, high]" }],
    },
    {
      name: "like with a number",
      condition: { operation: "like", field: "name", value: 5 },
      violations: [{ field: "condition.value", description: "like needs a string value" }],
    },
    {
      name: "regex that does not compile",
      condition: { operation: "regex", field: "code", value: "(" },
      violations: [{ field: "condition.value", description: "invalid regular expression" }],
    },
    {
      name: "match with blank text",
      condition: { operation: "match", field: "name", value: "  " },
      violations: [{ field: "condition.value", description: "match needs a non-empty string value" }],
    },
    {
      name: "knn with a short vector",
      condition: { operation: "knn", field: "name", value: [1, 2] },
      violations: [{ field: "condition.value", description: "knn needs a text or a vector of 512 numbers" }],
    },
    {
      name: "multi_match over a field without it",
      condition: { operation: "multi_match", fields: ["name", "category"], value: "x" },
      violations: [
        {
          field: "condition.fields",
          description: "multi_match is not supported on category of drug; properties supporting it: name",
        },
      ],
    },
    {
      name: "__id with another operation",
      condition: { operation: "like", field: "__id", value: "drug" },
      violations: [{ field: "condition.operation", description: "__id supports == and in" }],
    },
    // Every problem is reported, each at its own path through the tree; the valid leaf adds none.
    {
      name: "nested problems at their paths",
      condition: {
        operation: "and",
        sub_conditions: [
          { operation: "==", field: "id", value: 1 },
          {
            operation: "or",
            sub_conditions: [
              { operation: "in", field: "id", value: "x" },
              { operation: "like", field: "dose", value: "1" },
            ],
          },
        ],
      },
      violations: [
        { field: "condition.sub_conditions[1].sub_conditions[0].value", description: "in needs an array" },
        { field: "condition.sub_conditions[1].sub_conditions[1].operation", description: "dose does not support like" },
      ],
    },
  ];
  it.each(rows)("$name", async ({ condition, violations }) => {
    let error: unknown;
    try {
      await evaluateCondition(store, condition, budget());
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ToolError);
    const e = error as ToolError;
    expect({ code: e.code, reason: e.reason }).toEqual({ code: "invalid_argument", reason: "INVALID_CONDITION" });
    expect(e.violations).toEqual(
      violations.map((v) => ({
        field: v.field,
        description: { en: expect.stringContaining(v.description), zh: expect.any(String) },
      })),
    );
    expect(e.message).toContain("invalid condition on object type drug");
  });

  it("names the path below the one it is given", async () => {
    // Conditions inside a subgraph path are checked with their own prefix.
    await expect(
      evaluateCondition(
        store,
        { operation: "==", field: "price", value: 1 },
        budget(),
        "relation_type_paths[0].object_types[1].condition",
      ),
    ).rejects.toThrow(
      expect.objectContaining({
        violations: [expect.objectContaining({ field: "relation_type_paths[0].object_types[1].condition.field" })],
      }),
    );
  });
});

describe("evaluateCondition: conditions that cannot run away", () => {
  const refusal = async (condition: Condition, b = budget()) => {
    try {
      await evaluateCondition(store, condition, b);
    } catch (err) {
      expect(err).toBeInstanceOf(ToolError);
      return err as ToolError;
    }
    throw new Error("the condition was not refused");
  };

  it("refuses 20,000 leaves before compiling any, naming the limit", async () => {
    const leaf: Condition = { operation: "regex", field: "code", value: "(\\w)\\1" };
    const groups = Array.from({ length: 200 }, () => ({
      operation: "or" as const,
      sub_conditions: Array(100).fill(leaf),
    }));
    const e = await refusal({ operation: "or", sub_conditions: groups });
    // Not one leaf was compiled: the regex every leaf holds would have been a violation of its own.
    expect(e.violations).toEqual([
      {
        field: "condition",
        description: {
          en: expect.stringContaining("more than 10000 leaf conditions"),
          zh: expect.stringContaining("10000"),
        },
      },
    ]);
  });

  it("refuses a condition nested 100,000 deep without overflowing the stack", async () => {
    let deep: Condition = { operation: "exist", field: "name" };
    for (let i = 0; i < 100_000; i++) deep = { operation: "and", sub_conditions: [deep] };
    const e = await refusal(deep);
    expect(e.violations[0]!.description.en).toContain("more than 32 deep");
  });

  it("charges a scan before running it: past the budget, RESOURCE_EXHAUSTED with what to narrow", async () => {
    // 5 rows × 3 leaves: 15 row checks.
    const three: Condition = {
      operation: "and",
      sub_conditions: [
        { operation: "exist", field: "name" },
        { operation: "!=", field: "category", value: "x" },
        { operation: "not_exist", field: "status" },
      ],
    };
    const e = await refusal(three, new ScanBudget(14, undefined, type.id));
    expect({ code: e.code, reason: e.reason }).toEqual({ code: "resource_exhausted", reason: "SCAN_BUDGET_EXCEEDED" });
    expect(e.hint?.message.en).toContain("indexed leaf");
    await expect(evaluateCondition(store, three, new ScanBudget(15, undefined, type.id))).resolves.toMatchObject({
      rows: [2],
    });
  });

  it("checks only the rows an indexed leaf leaves, even when the tests sit in a nested group", async () => {
    // == picks two rows; the nested and's two tests then check those two rows only: 2 + 2 × 2 = 6 units.
    const narrowed: Condition = {
      operation: "and",
      sub_conditions: [
        { operation: "==", field: "category", value: "药品" },
        {
          operation: "and",
          sub_conditions: [
            { operation: "exist", field: "name" },
            { operation: "!=", field: "dose", value: 7 },
          ],
        },
      ],
    };
    await expect(evaluateCondition(store, narrowed, new ScanBudget(6, undefined, type.id))).resolves.toMatchObject({
      rows: [0, 1],
    });
  });

  it("ends a scan at the caller's deadline with DEADLINE_EXCEEDED saying what to narrow", async () => {
    const ended = { signal: new AbortController().signal, remainingMs: () => 0 };
    const e = await refusal({ operation: "exist", field: "name" }, new ScanBudget(1000, ended, type.id));
    expect({ code: e.code, reason: e.reason }).toEqual({ code: "deadline_exceeded", reason: "SCAN_DEADLINE_EXCEEDED" });
    expect(e.hint?.message.en).toContain("Or allow the call more time");
  });
});

describe("queries the engine takes as they are", () => {
  const leaf = { operation: "like", field: "name", value: "阿莫西林", value_from: "const" };
  const canonical: { name: string; query: unknown }[] = [
    { name: "a page without a condition", query: { limit: 10 } },
    { name: "a leaf", query: { condition: leaf, limit: 1, need_total: true } },
    {
      name: "nested and/or, every leaf field",
      query: {
        condition: {
          operation: "or",
          sub_conditions: [
            leaf,
            {
              operation: "and",
              sub_conditions: [{ operation: "knn", field: "*", value: "x", limit_key: "k", limit_value: 5 }],
            },
            { operation: "multi_match", fields: ["name"], value: "x", match_type: "best_fields" },
            { operation: "in", field: "id", value: [1, 2] },
          ],
        },
        properties: ["name"],
        limit: 10_000,
        sort: [{ field: "_score", direction: "desc" }],
        search_after: [1.5, "a", null, { k: [true] }],
      },
    },
    { name: "an empty and", query: { condition: { operation: "and", sub_conditions: [] }, limit: 5 } },
  ];
  it.each(canonical)("$name: taken as is, and the schema gives the same back", ({ query }) => {
    expect(isCanonicalObjectQuery(query)).toBe(true);
    expect(objectQuerySchema.parse(query)).toEqual(query);
  });

  const others: { name: string; query: unknown; schema: "normalises" | "refuses" }[] = [
    {
      name: "the = alias",
      query: { condition: { operation: "=", field: "id", value: 1 }, limit: 1 },
      schema: "normalises",
    },
    { name: "an unknown key in the query", query: { limit: 1, extra: 1 }, schema: "normalises" },
    {
      name: "an unknown key in a condition",
      query: { condition: { ...leaf, boost: 2 }, limit: 1 },
      schema: "normalises",
    },
    {
      name: "an unknown key in a sort",
      query: { limit: 1, sort: [{ field: "id", direction: "asc", x: 1 }] },
      schema: "normalises",
    },
    { name: "no limit", query: {}, schema: "refuses" },
    { name: "a fractional limit", query: { limit: 1.5 }, schema: "refuses" },
    { name: "a limit over the maximum", query: { limit: 10_001 }, schema: "refuses" },
    {
      name: "an unknown operation",
      query: { condition: { operation: "near", field: "id" }, limit: 1 },
      schema: "refuses",
    },
    { name: "an or without sub_conditions", query: { condition: { operation: "or" }, limit: 1 }, schema: "refuses" },
    {
      name: "101 sub-conditions",
      query: { condition: { operation: "or", sub_conditions: Array.from({ length: 101 }, () => leaf) }, limit: 1 },
      schema: "refuses",
    },
    {
      name: "an empty field name",
      query: { condition: { operation: "exist", field: "" }, limit: 1 },
      schema: "refuses",
    },
    {
      name: "value_from other than const",
      query: { condition: { ...leaf, value_from: "input" }, limit: 1 },
      schema: "refuses",
    },
    {
      name: "an infinite limit_value",
      query: { condition: { operation: "knn", field: "*", value: "x", limit_value: Infinity }, limit: 1 },
      schema: "refuses",
    },
    { name: "NaN in search_after", query: { limit: 1, search_after: [Number.NaN] }, schema: "refuses" },
    { name: "a bad sort direction", query: { limit: 1, sort: [{ field: "id", direction: "up" }] }, schema: "refuses" },
    {
      name: "a nested bad leaf",
      query: { condition: { operation: "and", sub_conditions: [{ operation: "like", field: 3 }] }, limit: 1 },
      schema: "refuses",
    },
  ];
  it.each(others)("$name: goes through the schema, which $schema it", ({ query, schema }) => {
    expect(isCanonicalObjectQuery(query)).toBe(false);
    const parsed = objectQuerySchema.safeParse(query);
    expect(parsed.success).toBe(schema === "normalises");
    if (parsed.success) expect(parsed.data).not.toEqual(query);
  });

  const path = (condition?: unknown) => ({
    object_types: [
      { id: "disease", condition: condition ?? leaf, limit: 1 },
      { id: "symptom", sort: [{ field: "id", direction: "asc" }] },
    ],
    relation_types: [
      { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
    ],
    limit: 10,
  });
  it("takes a subgraph query as it is only when the schema would give it back unchanged", () => {
    const canonical = { relation_type_paths: [path(), path({ operation: "or", sub_conditions: [leaf, leaf] })] };
    expect(isCanonicalSubgraphQuery(canonical)).toBe(true);
    expect(subgraphQuerySchema.parse(canonical)).toEqual(canonical);
    const normalised = [
      { relation_type_paths: [path({ operation: "=", field: "id", value: 1 })] },
      { relation_type_paths: [{ ...path(), extra: true }] },
    ];
    for (const q of normalised) {
      expect(isCanonicalSubgraphQuery(q)).toBe(false);
      expect(subgraphQuerySchema.parse(q)).not.toEqual(q);
    }
    const refused = [
      { relation_type_paths: [] },
      { relation_type_paths: [{ ...path(), object_types: [{ id: "disease" }] }] },
      { relation_type_paths: [{ ...path(), relation_types: [] }] },
      { relation_type_paths: [{ ...path(), limit: 0 }] },
      { relation_type_paths: [path({ operation: "and" })] },
    ];
    for (const q of refused) {
      expect(isCanonicalSubgraphQuery(q)).toBe(false);
      expect(subgraphQuerySchema.safeParse(q).success).toBe(false);
    }
  });

  it("takes every query kn_search and keyword context send to the embedded engine as it is", async () => {
    const engine = EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" });
    const sent: { method: string; query: unknown }[] = [];
    const recording = new Proxy(engine, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if ((prop !== "queryObjects" && prop !== "querySubgraph") || typeof value !== "function") return value;
        return (...args: unknown[]) => {
          sent.push({ method: prop, query: prop === "queryObjects" ? args[3] : args[2] });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const server = await startServer({ LOG_LEVEL: "silent" }, { backend: recording });
    try {
      const client = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-canonical" });
      const kn = [{ knowledgeNetworkId: "kn_medical" }];
      await client.knSearch({ query: "上气道梗阻有哪些症状", knIds: kn });
      await client.retrieveSchema({ query: "帕金深病有哪些症状", knIds: kn, sessionId: "canonical" });
      await client.retrieveKeywordContext({ query: "帕金深病", sessionId: "canonical", objectTypeId: "disease" });
    } finally {
      await server.close();
    }
    expect(sent.filter((s) => s.method === "queryObjects").length).toBeGreaterThan(20);
    expect(sent.filter((s) => s.method === "querySubgraph").length).toBeGreaterThan(2);
    for (const { method, query } of sent) {
      const [canonical, schema] =
        method === "queryObjects"
          ? [isCanonicalObjectQuery, objectQuerySchema]
          : ([isCanonicalSubgraphQuery, subgraphQuerySchema] as const);
      expect(canonical(query), JSON.stringify(query)).toBe(true);
      expect(schema.parse(query)).toEqual(query);
    }
  });
});

describe("like through the character index", () => {
  it("finds exactly the rows containing every needle of one to three characters, repeated characters included", () => {
    const names = ["阿莫西林", "阿阿莫", "莫莫莫", "西林片", "林", "", "aab", "aaab", "Ａa"];
    const store = new ObjectStore(
      { ...type, data_properties: [prop("id", "integer", ["=="]), prop("name", "text", ["like"])] },
      names.map((name, id) => ({ id, name })),
    );
    const texts = store.normalizedTexts("name");
    const needles = new Set<string>();
    for (const t of texts) {
      const chars = [...(t ?? "")];
      for (let n = 1; n <= 3; n++)
        for (let i = 0; i + n <= chars.length; i++) needles.add(chars.slice(i, i + n).join(""));
    }
    needles.add("莫莫");
    needles.add("aaa");
    for (const needle of needles) {
      const scan = texts.flatMap((t, i) => (t?.includes(needle) ? [i] : []));
      expect(store.containing("name", needle), needle).toEqual(scan);
    }
  });
});
