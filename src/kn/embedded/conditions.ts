import type { Json } from "../../core/json";
import { normalizeText, textOf, tokenize } from "../../core/text";
import { type FieldViolation, ToolError } from "../../errors/tool-error";
import { embedLocally, LOCAL_EMBEDDING_DIMENSIONS } from "../../upstream/local-embedder";
import { type Condition, isLogical, type LeafCondition } from "../types";
import { compareValues, intersectSorted, type ObjectStore, valueKey } from "./object-store";

/** Rows that satisfy a condition, ascending, with a `_score` for those a text or vector match scored. */
export interface Matches {
  rows: number[];
  scores: Map<number, number>;
}

/**
 * A compiled condition. `lookup` kinds answer from an index; `test` kinds are
 * checked row by row, and inside an `and` only against the rows the lookups
 * left, so a selective lookup keeps the whole condition cheap.
 */
type Plan =
  | { kind: "lookup"; run(): Matches }
  | { kind: "test"; test(row: number): boolean }
  | { kind: "and"; parts: Plan[] }
  | { kind: "or"; parts: Plan[] };

/*
 * Plans are built with the helpers below and the module's constants, never
 * with closures named by assignment: tsx keeps function names, which costs a
 * defineProperty per named closure, and kn_search compiles hundreds of leaves
 * per call.
 */
const lookupPlan = (run: () => Matches): Plan => ({ kind: "lookup", run });
const testPlan = (test: (row: number) => boolean): Plan => ({ kind: "test", test });
const NEVER: Plan = testPlan(() => false);
const ALWAYS: Plan = testPlan(() => true);

/** Records a problem of the condition at `path` and compiles it to a plan matching nothing. */
function violation(violations: FieldViolation[], path: string, field: string, description: string): Plan {
  violations.push({ field: `${path}.${field}`, description });
  return NEVER;
}

const MAX_REGEX_LENGTH = 512;
const DEFAULT_KNN_K = 100;

/**
 * Checks a condition against the object type (every field a data property,
 * every operation one the property allows, every value of the right shape) and
 * evaluates it. Problems are INVALID_ARGUMENT with one violation per problem,
 * at paths like `condition.sub_conditions[1].operation`.
 */
export function evaluateCondition(store: ObjectStore, condition: Condition | undefined, path = "condition"): Matches {
  if (condition === undefined) return { rows: store.rows.map((_, i) => i), scores: new Map() };
  const violations: FieldViolation[] = [];
  const plan = compile(store, condition, path, violations);
  if (violations.length > 0) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_CONDITION",
      message: `invalid condition on object type ${store.type.id}: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`,
      violations,
      hint: {
        message: "Use only data properties of the object type and the condition_operations each property lists.",
      },
    });
  }
  return run(store, plan);
}

function run(store: ObjectStore, plan: Plan): Matches {
  switch (plan.kind) {
    case "lookup":
      return plan.run();
    case "test":
      return { rows: store.rows.map((_, i) => i).filter(plan.test), scores: new Map() };
    case "or": {
      const results = plan.parts.map((p) => run(store, p));
      const rows = new Set<number>();
      const scores = new Map<number, number>();
      for (const r of results) {
        for (const i of r.rows) rows.add(i);
        for (const [i, s] of r.scores) scores.set(i, (scores.get(i) ?? 0) + s);
      }
      return { rows: [...rows].sort((a, b) => a - b), scores };
    }
    case "and": {
      const tests = plan.parts.filter((p): p is Extract<Plan, { kind: "test" }> => p.kind === "test");
      const others = plan.parts.filter((p) => p.kind !== "test");
      let rows: number[] | undefined;
      const scores = new Map<number, number>();
      for (const part of others) {
        const r = run(store, part);
        rows = rows === undefined ? r.rows : intersectSorted(rows, r.rows);
        for (const [i, s] of r.scores) scores.set(i, (scores.get(i) ?? 0) + s);
        if (rows.length === 0) break;
      }
      const base = rows ?? store.rows.map((_, i) => i);
      const kept = tests.length === 0 ? base : base.filter((i) => tests.every((t) => t.test(i)));
      const keptScores = new Map<number, number>();
      for (const i of kept) if (scores.has(i)) keptScores.set(i, scores.get(i)!);
      return { rows: kept, scores: keptScores };
    }
  }
}

function compile(store: ObjectStore, c: Condition, path: string, violations: FieldViolation[]): Plan {
  if (isLogical(c)) {
    const parts = c.sub_conditions.map((sub, i) => compile(store, sub, `${path}.sub_conditions[${i}]`, violations));
    if (parts.length === 0) return c.operation === "and" ? ALWAYS : NEVER;
    return { kind: c.operation, parts };
  }
  return compileLeaf(store, c, path, violations);
}

function compileLeaf(store: ObjectStore, c: LeafCondition, path: string, violations: FieldViolation[]): Plan {
  const op = c.operation;

  if (op === "multi_match") {
    const fields = c.fields ?? ["*"];
    if (typeof c.value !== "string") return violation(violations, path, "value", "multi_match needs a string value");
    const props = expandFields(store, fields, "multi_match", path, violations);
    return props ? fullText(store, props, c.value, false) : NEVER;
  }
  const field = c.field;
  if (field === undefined) return violation(violations, path, "field", `${op} needs a field`);
  if (field === "*" && (op === "match" || op === "match_phrase" || op === "knn")) {
    const props = expandFields(store, ["*"], op, path, violations);
    if (!props) return NEVER;
    return op === "knn" ? knn(store, props, c, path, violations) : textMatch(store, props, c, op, path, violations);
  }
  if (field === "__id") return idCondition(store, c, path, violations);
  if (!store.hasProperty(field)) {
    return violation(
      violations,
      path,
      "field",
      `${field} is not a data property of ${store.type.id}; it has: ${store.type.data_properties.map((p) => p.name).join(", ")}`,
    );
  }
  const allowed = store.operationsOf(field);
  if (!allowed.has(op)) {
    return violation(
      violations,
      path,
      "operation",
      `${field} does not support ${op}; it supports: ${[...allowed].join(" ") || "no operation"}`,
    );
  }
  const value = c.value;
  const rows = store.rows;

  switch (op) {
    case "==":
      if (!isScalar(value)) return violation(violations, path, "value", "== needs a string, number or boolean value");
      return lookupPlan(() => ({ rows: [...store.equalTo(field, value)], scores: new Map() }));
    case "in": {
      if (!Array.isArray(value) || !value.every(isScalar))
        return violation(violations, path, "value", "in needs an array of strings, numbers or booleans");
      return lookupPlan(() => {
        const found = new Set<number>();
        for (const v of value) for (const i of store.equalTo(field, v)) found.add(i);
        return { rows: [...found].sort((a, b) => a - b), scores: new Map() };
      });
    }
    case "!=":
      if (!isScalar(value)) return violation(violations, path, "value", "!= needs a string, number or boolean value");
      return testPlan((i) => present(rows[i]![field]) && valueKey(rows[i]![field]!) !== valueKey(value));
    case "not_in": {
      if (!Array.isArray(value) || !value.every(isScalar))
        return violation(violations, path, "value", "not_in needs an array of strings, numbers or booleans");
      const keys = new Set(value.map((v) => valueKey(v)));
      return testPlan((i) => present(rows[i]![field]) && !keys.has(valueKey(rows[i]![field]!)));
    }
    case "like": {
      if (typeof value !== "string") return violation(violations, path, "value", "like needs a string value");
      const needle = normalizeText(value);
      return lookupPlan(() => ({ rows: store.containing(field, needle), scores: new Map() }));
    }
    case "not_like": {
      if (typeof value !== "string") return violation(violations, path, "value", "not_like needs a string value");
      const needle = normalizeText(value);
      const texts = store.normalizedTexts(field);
      return testPlan((i) => texts[i] !== undefined && !texts[i]!.includes(needle));
    }
    case ">":
    case ">=":
    case "<":
    case "<=": {
      if (!isScalar(value)) return violation(violations, path, "value", `${op} needs a number or string value`);
      return testPlan((i) => present(rows[i]![field]) && holds(op, compareLoose(rows[i]![field]!, value)));
    }
    case "range":
    case "out_range": {
      if (!Array.isArray(value) || value.length !== 2 || !value.every(isScalar))
        return violation(violations, path, "value", `${op} needs [low, high]`);
      const [lo, hi] = value as [Json, Json];
      return testPlan((i) => {
        const v = rows[i]![field];
        return present(v) && (compareLoose(v!, lo) >= 0 && compareLoose(v!, hi) < 0) === (op === "range");
      });
    }
    case "exist":
      return testPlan((i) => present(rows[i]![field]));
    case "not_exist":
      return testPlan((i) => !present(rows[i]![field]));
    case "regex": {
      if (typeof value !== "string" || value.length > MAX_REGEX_LENGTH)
        return violation(violations, path, "value", `regex needs a pattern of at most ${MAX_REGEX_LENGTH} characters`);
      let re: RegExp;
      try {
        re = new RegExp(value, "u");
      } catch (err) {
        return violation(violations, path, "value", `invalid regular expression: ${(err as Error).message}`);
      }
      return testPlan((i) => {
        const t = textOf(rows[i]![field]);
        return t !== undefined && re.test(t);
      });
    }
    case "match":
    case "match_phrase":
      return textMatch(store, [field], c, op, path, violations);
    case "knn":
      return knn(store, [field], c, path, violations);
    default:
      return violation(violations, path, "operation", `unsupported operation ${String(op)}`);
  }
}

function textMatch(
  store: ObjectStore,
  fields: string[],
  c: LeafCondition,
  op: "match" | "match_phrase",
  path: string,
  violations: FieldViolation[],
): Plan {
  if (typeof c.value !== "string" || c.value.trim() === "") {
    return violation(violations, path, "value", `${op} needs a non-empty string value`);
  }
  return fullText(store, fields, c.value, op === "match_phrase");
}

/**
 * Full-text relevance: a row matches when a field shares a token with the
 * query (match) or contains the whole normalised phrase (match_phrase); its
 * score is the sum of the shared tokens' inverse document frequencies, the
 * best field counting.
 */
function fullText(store: ObjectStore, fields: string[], query: string, phrase: boolean): Plan {
  return lookupPlan(() => {
    const queryTokens = [...new Set(tokenize(query))];
    const normalizedQuery = normalizeText(query);
    const scores = new Map<number, number>();
    const n = store.size;
    for (const field of fields) {
      const index = store.tokenIndex(field);
      const texts = phrase ? store.normalizedTexts(field) : undefined;
      const fieldScores = new Map<number, number>();
      for (const token of queryTokens) {
        const posting = index.postings.get(token);
        if (!posting) continue;
        const idf = Math.log(1 + (n - posting.length + 0.5) / (posting.length + 0.5));
        for (const i of posting) fieldScores.set(i, (fieldScores.get(i) ?? 0) + idf);
      }
      for (const [i, s] of fieldScores) {
        if (texts && !texts[i]?.includes(normalizedQuery)) continue;
        if (s > (scores.get(i) ?? 0)) scores.set(i, s);
      }
    }
    return { rows: [...scores.keys()].sort((a, b) => a - b), scores };
  });
}

function knn(store: ObjectStore, fields: string[], c: LeafCondition, path: string, violations: FieldViolation[]): Plan {
  let query: Float32Array;
  if (typeof c.value === "string" && c.value.trim() !== "") query = embedLocally(c.value);
  else if (
    Array.isArray(c.value) &&
    c.value.length === LOCAL_EMBEDDING_DIMENSIONS &&
    c.value.every((x) => typeof x === "number")
  ) {
    query = Float32Array.from(c.value as number[]);
  } else {
    return violation(
      violations,
      path,
      "value",
      `knn needs a text or a vector of ${LOCAL_EMBEDDING_DIMENSIONS} numbers`,
    );
  }
  const key = c.limit_key ?? "k";
  const limit = c.limit_value ?? DEFAULT_KNN_K;
  return lookupPlan(() => {
    const best = new Map<number, number>();
    for (const field of fields) {
      store.similarities(field, query).forEach((s, i) => {
        if (s !== undefined && s > (best.get(i) ?? -Infinity)) best.set(i, s);
      });
    }
    let ranked = [...best].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    if (key === "k") ranked = ranked.slice(0, Math.max(0, Math.floor(limit)));
    else if (key === "min_score") ranked = ranked.filter(([, s]) => s >= limit);
    else ranked = ranked.filter(([, s]) => 1 - s <= limit);
    return { rows: ranked.map(([i]) => i).sort((a, b) => a - b), scores: new Map(ranked) };
  });
}

function idCondition(store: ObjectStore, c: LeafCondition, path: string, violations: FieldViolation[]): Plan {
  const ids = c.operation === "==" ? [c.value] : c.operation === "in" && Array.isArray(c.value) ? c.value : undefined;
  if (!ids?.every((v) => typeof v === "string")) {
    return violation(violations, path, "operation", "__id supports == and in with instance ids");
  }
  const wanted = new Set(ids as string[]);
  return testPlan((i) => wanted.has(store.rows[i]!._instance_id));
}

/** The properties behind `fields` ("*" = every property allowing `op`), or undefined after recording a violation. */
function expandFields(
  store: ObjectStore,
  fields: string[],
  op: string,
  path: string,
  violations: FieldViolation[],
): string[] | undefined {
  const names = fields.includes("*")
    ? store.type.data_properties.map((p) => p.name).filter((n) => store.operationsOf(n).has(op))
    : fields;
  const bad = names.filter((n) => !store.hasProperty(n) || !store.operationsOf(n).has(op));
  if (names.length === 0 || bad.length > 0) {
    const supporting = store.type.data_properties.map((p) => p.name).filter((n) => store.operationsOf(n).has(op));
    violations.push({
      field: `${path}.${fields.includes("*") ? "field" : "fields"}`,
      description: `${op} is not supported on ${bad.join(", ") || "any property"} of ${store.type.id}${supporting.length ? `; properties supporting it: ${supporting.join(", ")}` : ""}`,
    });
    return undefined;
  }
  return names;
}

function isScalar(v: Json | undefined): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

/** Whether a comparison's result (negative, zero, positive) satisfies >, >=, < or <=. */
function holds(op: ">" | ">=" | "<" | "<=", comparison: number): boolean {
  switch (op) {
    case ">":
      return comparison > 0;
    case ">=":
      return comparison >= 0;
    case "<":
      return comparison < 0;
    case "<=":
      return comparison <= 0;
  }
}

function present(v: Json | undefined): boolean {
  return v !== undefined && v !== null && v !== "";
}

/** Compares numerically when both sides read as numbers, else as text. */
function compareLoose(a: Json, b: Json): number {
  const na = typeof a === "number" ? a : typeof a === "string" && a.trim() !== "" ? Number(a) : NaN;
  const nb = typeof b === "number" ? b : typeof b === "string" && b.trim() !== "" ? Number(b) : NaN;
  if (Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return compareValues(a, b);
}
