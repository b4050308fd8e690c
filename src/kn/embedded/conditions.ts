import type { Json } from "../../core/json";
import { compilePattern } from "../../core/safe-regex";
import { normalizeText, textOf, tokenize } from "../../core/text";
import { measureTree } from "../../core/tree-size";
import { type Text, text, verbatim } from "../../errors/text";
import { type FieldViolation, ToolError } from "../../errors/tool-error";
import { embedLocally, LOCAL_EMBEDDING_DIMENSIONS } from "../../upstream/local-embedder";
import { type Condition, isLogical, type LeafCondition } from "../types";
import { compareValues, type IndexNeed, intersectSorted, type ObjectStore, valueKey } from "./object-store";
import { SCAN_CHUNK, type ScanBudget } from "./scan-budget";

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
  | TestPlan
  | { kind: "and"; parts: Plan[] }
  | { kind: "or"; parts: Plan[] };

/** A row-by-row check; `units` is what checking one row costs against the call's scan budget. */
interface TestPlan {
  kind: "test";
  test(row: number): boolean;
  units: number;
}

/*
 * Plans are built with the helpers below and the module's constants, never
 * with closures named by assignment: tsx keeps function names, which costs a
 * defineProperty per named closure, and kn_search compiles hundreds of leaves
 * per call.
 */
const lookupPlan = (run: () => Matches): Plan => ({ kind: "lookup", run });
const testPlan = (test: (row: number) => boolean, units = 1): Plan => ({ kind: "test", test, units });
const NEVER: Plan = testPlan(() => false);
const ALWAYS: Plan = testPlan(() => true);

/** Records a problem of the condition at `path` and compiles it to a plan matching nothing. */
function violation(violations: FieldViolation[], path: string, field: string, description: Text): Plan {
  violations.push({ field: `${path}.${field}`, description });
  return NEVER;
}

const DEFAULT_KNN_K = 100;
/**
 * Leaves, and/or groups and nesting one condition may have in the engine:
 * far beyond what a query needs (kn_search's largest are a few hundred
 * leaves), low enough that a condition is refused before it is compiled,
 * whatever it holds.
 */
export const MAX_CONDITION_LEAVES = 10_000;
const MAX_CONDITION_GROUPS = 10_000;
const MAX_CONDITION_DEPTH = 32;
/** What one row checked by a regex costs beyond a plain check, and per how many characters of its text one more unit. */
const REGEX_UNITS = 16;
const REGEX_CHARS_PER_UNIT = 32;
/** What a knn costs per row: a cosine over the row's embedding. */
const KNN_UNITS = 4;

/**
 * Checks a condition against the object type (every field a data property,
 * every operation one the property allows, every value of the right shape) and
 * evaluates it within the call's scan budget, letting the event loop run
 * between chunks of rows. Problems are INVALID_ARGUMENT with one violation per
 * problem, at paths like `condition.sub_conditions[1].operation`; a condition
 * larger than the engine takes is refused before anything else is done.
 */
export async function evaluateCondition(
  store: ObjectStore,
  condition: Condition | undefined,
  budget: ScanBudget,
  path = "condition",
): Promise<Matches> {
  if (condition === undefined) return { rows: allRows(store), scores: new Map() };
  const plan = compileCondition(store, condition, budget, path);
  // Indexes are built on first use, here, pausing as a scan does: on a large store that takes seconds.
  await store.prepare(indexNeeds(store, condition), () => budget.pause());
  return run(store, plan, budget);
}

/** The condition compiled, or INVALID_ARGUMENT (INVALID_CONDITION) listing its problems. */
export function compileCondition(store: ObjectStore, condition: Condition, budget: ScanBudget, path: string): Plan {
  const size = measureTree(condition, (c) => (isLogical(c) ? c.sub_conditions : undefined), {
    leaves: MAX_CONDITION_LEAVES,
    groups: MAX_CONDITION_GROUPS,
    depth: MAX_CONDITION_DEPTH,
  });
  if (size.over !== undefined) throw invalidCondition(store, [{ field: path, description: tooLarge(size.over) }]);
  const violations: FieldViolation[] = [];
  const plan = compile(store, condition, path, violations, budget);
  if (violations.length > 0) throw invalidCondition(store, violations);
  return plan;
}

function tooLarge(over: "leaves" | "groups" | "depth"): Text {
  switch (over) {
    case "leaves":
      return text(
        `has more than ${MAX_CONDITION_LEAVES} leaf conditions, the most one condition may have; use in for several values of one field`,
        `叶子条件超过 ${MAX_CONDITION_LEAVES} 个，这是一个条件最多能有的数量；同一字段的多个值请用 in`,
      );
    case "groups":
      return text(
        `has more than ${MAX_CONDITION_GROUPS} and/or groups, the most one condition may have`,
        `and/or 组超过 ${MAX_CONDITION_GROUPS} 个，这是一个条件最多能有的数量`,
      );
    case "depth":
      return text(
        `nests and/or groups more than ${MAX_CONDITION_DEPTH} deep, the most one condition may; flatten them`,
        `and/or 组嵌套超过 ${MAX_CONDITION_DEPTH} 层，这是一个条件最多能嵌套的深度；请把它们展平`,
      );
  }
}

function invalidCondition(store: ObjectStore, violations: FieldViolation[]): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_CONDITION",
    message: text(
      `invalid condition on object type ${store.type.id}: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
      `对象类型 ${store.type.id} 上的条件无效：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
    ),
    violations,
    hint: {
      message: text(
        "Use only data properties of the object type and the condition_operations each property lists.",
        "只使用这个对象类型的数据属性，以及每个属性列出的 condition_operations。",
      ),
    },
  });
}

/** The indexes the leaves of a (compiled, so valid) condition read. */
function indexNeeds(store: ObjectStore, condition: Condition): IndexNeed[] {
  const needs: IndexNeed[] = [];
  const stack: Condition[] = [condition];
  const fieldsOf = (c: LeafCondition): string[] => {
    const named = c.operation === "multi_match" ? (c.fields ?? ["*"]) : c.field === undefined ? [] : [c.field];
    if (!named.includes("*")) return named;
    return store.type.data_properties.map((p) => p.name).filter((n) => store.operationsOf(n).has(c.operation));
  };
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (isLogical(c)) {
      stack.push(...c.sub_conditions);
      continue;
    }
    if (c.field === "__id") continue;
    const kinds: IndexNeed["kind"][] = (() => {
      switch (c.operation) {
        case "==":
        case "in":
          return ["exact"];
        case "like":
          return ["grams"];
        case "not_like":
          return ["texts"];
        case "match":
        case "multi_match":
          return ["tokens"];
        case "match_phrase":
          return ["tokens", "texts"];
        case "knn":
          return ["vectors"];
        default:
          return [];
      }
    })();
    for (const property of fieldsOf(c)) for (const kind of kinds) needs.push({ property, kind });
  }
  return needs;
}

function allRows(store: ObjectStore): number[] {
  return Array.from({ length: store.size }, (_, i) => i);
}

/** The rows of `rows` every test keeps, in order, checked in chunks within the budget. */
async function filterRows(rows: ArrayLike<number>, tests: TestPlan[], budget: ScanBudget): Promise<number[]> {
  // The whole scan is charged before it starts: a scan over the budget is refused without being run.
  budget.charge(rows.length * tests.reduce((n, t) => n + t.units, 0));
  const kept: number[] = [];
  for (let start = 0; start < rows.length; start += SCAN_CHUNK) {
    const pause = budget.pause();
    if (pause) await pause;
    const end = Math.min(rows.length, start + SCAN_CHUNK);
    for (let j = start; j < end; j++) {
      const i = rows[j]!;
      let keep = true;
      for (const t of tests) {
        if (!t.test(i)) {
          keep = false;
          break;
        }
      }
      if (keep) kept.push(i);
    }
  }
  return kept;
}

async function run(store: ObjectStore, plan: Plan, budget: ScanBudget): Promise<Matches> {
  switch (plan.kind) {
    case "lookup": {
      const pause = budget.pause();
      if (pause) await pause;
      const found = plan.run();
      budget.charge(found.rows.length);
      return found;
    }
    case "test":
      return { rows: await filterRows(allRows(store), [plan], budget), scores: new Map() };
    case "or": {
      const seen = new Uint8Array(store.size);
      const scores = new Map<number, number>();
      for (const part of plan.parts) {
        const r = await run(store, part, budget);
        budget.charge(r.rows.length);
        for (const i of r.rows) seen[i] = 1;
        for (const [i, s] of r.scores) scores.set(i, (scores.get(i) ?? 0) + s);
      }
      // Marks, then one pass in row order: the union comes out sorted without a sort.
      const rows: number[] = [];
      for (let i = 0; i < seen.length; i++) if (seen[i] === 1) rows.push(i);
      return { rows, scores };
    }
    case "and": {
      const tests = plan.parts.filter((p): p is TestPlan => p.kind === "test");
      const others = plan.parts.filter((p) => p.kind !== "test");
      let rows: number[] | undefined;
      const scores = new Map<number, number>();
      for (const part of others) {
        const r = await run(store, part, budget);
        rows = rows === undefined ? r.rows : intersectSorted(rows, r.rows);
        for (const [i, s] of r.scores) scores.set(i, (scores.get(i) ?? 0) + s);
        if (rows.length === 0) break;
      }
      const base = rows ?? allRows(store);
      const kept = tests.length === 0 ? base : await filterRows(base, tests, budget);
      const keptScores = new Map<number, number>();
      for (const i of kept) if (scores.has(i)) keptScores.set(i, scores.get(i)!);
      return { rows: kept, scores: keptScores };
    }
  }
}

function compile(
  store: ObjectStore,
  c: Condition,
  path: string,
  violations: FieldViolation[],
  budget: ScanBudget,
): Plan {
  if (isLogical(c)) {
    const parts = c.sub_conditions.map((sub, i) =>
      compile(store, sub, `${path}.sub_conditions[${i}]`, violations, budget),
    );
    if (parts.length === 0) return c.operation === "and" ? ALWAYS : NEVER;
    return group(c.operation, parts);
  }
  return compileLeaf(store, c, path, violations, budget);
}

/**
 * An and/or of compiled parts, shaped so that tests run only on the rows
 * they must: an and inside an and is one and (its tests then check only
 * what the outer lookups left), and a group of tests alone is one test, so
 * that inside an and it too checks only those rows instead of scanning all.
 */
function group(op: "and" | "or", given: Plan[]): Plan {
  const parts = given.flatMap((p) => (p.kind === op ? p.parts : [p]));
  if (!parts.every((p): p is TestPlan => p.kind === "test")) return { kind: op, parts };
  const tests = parts;
  const units = tests.reduce((n, t) => n + t.units, 0);
  return op === "and"
    ? testPlan((i) => tests.every((t) => t.test(i)), units)
    : testPlan((i) => tests.some((t) => t.test(i)), units);
}

function compileLeaf(
  store: ObjectStore,
  c: LeafCondition,
  path: string,
  violations: FieldViolation[],
  budget: ScanBudget,
): Plan {
  const op = c.operation;

  if (op === "multi_match") {
    const fields = c.fields ?? ["*"];
    if (typeof c.value !== "string")
      return violation(violations, path, "value", text("multi_match needs a string value", "multi_match 需要字符串值"));
    const props = expandFields(store, fields, "multi_match", path, violations);
    return props ? fullText(store, props, c.value, false) : NEVER;
  }
  const field = c.field;
  if (field === undefined) return violation(violations, path, "field", text(`${op} needs a field`, `${op} 需要 field`));
  if (field === "*" && (op === "match" || op === "match_phrase" || op === "knn")) {
    const props = expandFields(store, ["*"], op, path, violations);
    if (!props) return NEVER;
    return op === "knn"
      ? knn(store, props, c, path, violations, budget)
      : textMatch(store, props, c, op, path, violations);
  }
  if (field === "__id") return idCondition(store, c, path, violations);
  if (!store.hasProperty(field)) {
    return violation(
      violations,
      path,
      "field",
      text(
        `${field} is not a data property of ${store.type.id}; it has: ${store.type.data_properties.map((p) => p.name).join(", ")}`,
        `${field} 不是 ${store.type.id} 的数据属性；它的数据属性有：${store.type.data_properties.map((p) => p.name).join(", ")}`,
      ),
    );
  }
  const allowed = store.operationsOf(field);
  if (!allowed.has(op)) {
    return violation(
      violations,
      path,
      "operation",
      text(
        `${field} does not support ${op}; it supports: ${[...allowed].join(" ") || "no operation"}`,
        `${field} 不支持 ${op}；它支持：${[...allowed].join(" ") || "任何操作都不支持"}`,
      ),
    );
  }
  const value = c.value;
  const rows = store.rows;

  switch (op) {
    case "==":
      if (!isScalar(value))
        return violation(
          violations,
          path,
          "value",
          text("== needs a string, number or boolean value", "== 需要字符串、数字或布尔值"),
        );
      return lookupPlan(() => ({ rows: [...store.equalTo(field, value)], scores: new Map() }));
    case "in": {
      if (!Array.isArray(value) || !value.every(isScalar))
        return violation(
          violations,
          path,
          "value",
          text("in needs an array of strings, numbers or booleans", "in 需要由字符串、数字或布尔值组成的数组"),
        );
      return lookupPlan(() => {
        const found = new Set<number>();
        for (const v of value) for (const i of store.equalTo(field, v)) found.add(i);
        return { rows: [...found].sort((a, b) => a - b), scores: new Map() };
      });
    }
    case "!=":
      if (!isScalar(value))
        return violation(
          violations,
          path,
          "value",
          text("!= needs a string, number or boolean value", "!= 需要字符串、数字或布尔值"),
        );
      return testPlan((i) => present(rows[i]![field]) && valueKey(rows[i]![field]!) !== valueKey(value));
    case "not_in": {
      if (!Array.isArray(value) || !value.every(isScalar))
        return violation(
          violations,
          path,
          "value",
          text("not_in needs an array of strings, numbers or booleans", "not_in 需要由字符串、数字或布尔值组成的数组"),
        );
      const keys = new Set(value.map((v) => valueKey(v)));
      return testPlan((i) => present(rows[i]![field]) && !keys.has(valueKey(rows[i]![field]!)));
    }
    case "like": {
      if (typeof value !== "string")
        return violation(violations, path, "value", text("like needs a string value", "like 需要字符串值"));
      const needle = normalizeText(value);
      return lookupPlan(() => ({ rows: store.containing(field, needle), scores: new Map() }));
    }
    case "not_like": {
      if (typeof value !== "string")
        return violation(violations, path, "value", text("not_like needs a string value", "not_like 需要字符串值"));
      const needle = normalizeText(value);
      // Read when the scan starts, not when compiling: prepare builds the texts first, pausing.
      let texts: readonly (string | undefined)[] | undefined;
      return testPlan((i) => {
        texts ??= store.normalizedTexts(field);
        return texts[i] !== undefined && !texts[i]!.includes(needle);
      });
    }
    case ">":
    case ">=":
    case "<":
    case "<=": {
      if (!isScalar(value))
        return violation(
          violations,
          path,
          "value",
          text(`${op} needs a number or string value`, `${op} 需要数字或字符串值`),
        );
      return testPlan((i) => present(rows[i]![field]) && holds(op, compareLoose(rows[i]![field]!, value)));
    }
    case "range":
    case "out_range": {
      if (!Array.isArray(value) || value.length !== 2 || !value.every(isScalar))
        return violation(violations, path, "value", text(`${op} needs [low, high]`, `${op} 需要 [low, high]`));
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
      if (typeof value !== "string")
        return violation(violations, path, "value", text("regex needs a string pattern", "regex 需要字符串形式的模式"));
      const compiled = compilePattern(value);
      if (!compiled.ok) return violation(violations, path, "value", verbatim(compiled.problem));
      const re = compiled.regex;
      return testPlan((i) => {
        const t = textOf(rows[i]![field]);
        if (t === undefined) return false;
        // Linear in the text: a long text costs more of the budget.
        budget.charge(Math.floor(t.length / REGEX_CHARS_PER_UNIT));
        return re.test(t);
      }, REGEX_UNITS);
    }
    case "match":
    case "match_phrase":
      return textMatch(store, [field], c, op, path, violations);
    case "knn":
      return knn(store, [field], c, path, violations, budget);
    default:
      return violation(
        violations,
        path,
        "operation",
        text(`unsupported operation ${String(op)}`, `不支持的操作 ${String(op)}`),
      );
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
    return violation(violations, path, "value", text(`${op} needs a non-empty string value`, `${op} 需要非空字符串值`));
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

function knn(
  store: ObjectStore,
  fields: string[],
  c: LeafCondition,
  path: string,
  violations: FieldViolation[],
  budget: ScanBudget,
): Plan {
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
      text(
        `knn needs a text or a vector of ${LOCAL_EMBEDDING_DIMENSIONS} numbers`,
        `knn 需要一段文本或由 ${LOCAL_EMBEDDING_DIMENSIONS} 个数字组成的向量`,
      ),
    );
  }
  const key = c.limit_key ?? "k";
  const limit = c.limit_value ?? DEFAULT_KNN_K;
  return lookupPlan(() => {
    // Every row's embedding is compared: a scan, charged as one.
    budget.charge(store.size * fields.length * KNN_UNITS);
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
    return violation(
      violations,
      path,
      "operation",
      text("__id supports == and in with instance ids", "__id 只支持 == 和 in，值为实例id"),
    );
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
    const instead =
      supporting.length > 0
        ? text(`; properties supporting it: ${supporting.join(", ")}`, `；支持它的属性：${supporting.join(", ")}`)
        : verbatim("");
    violations.push({
      field: `${path}.${fields.includes("*") ? "field" : "fields"}`,
      description:
        bad.length > 0
          ? text(
              `${op} is not supported on ${bad.join(", ")} of ${store.type.id}${instead.en}`,
              `${store.type.id} 的 ${bad.join(", ")} 不支持 ${op}${instead.zh}`,
            )
          : text(
              `${op} is not supported on any property of ${store.type.id}${instead.en}`,
              `${store.type.id} 没有支持 ${op} 的属性${instead.zh}`,
            ),
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
