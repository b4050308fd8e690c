import type { Json } from "../../../core/json";
import { MAX_PATTERN_LENGTH } from "../../../core/safe-regex";
import type { FieldViolation } from "../../../errors/tool-error";
import {
  type Condition,
  type DataProperty,
  type LeafCondition,
  type LeafOperation,
  MAX_SUB_CONDITIONS,
  type ObjectType,
} from "../../../kn/types";
import type { ConditionInput } from "./condition-input";
import {
  ALL_OPERATIONS,
  ANY_FIELD_OPERATIONS,
  GROUP_OPERATIONS,
  ID_FIELD_OPERATIONS,
  KNN_LIMIT_KEYS,
  MAX_CONDITION_DEPTH,
  MAX_KNN_K,
  OPERATION_ALIASES,
  SHAPE_WORDS,
  VALUE_SHAPES,
  type ValueShape,
} from "./operators";
import { closestNames } from "./suggest";

/** What is wrong with a request, each problem at its path, with a corrected example where one can be given. */
export interface Problems {
  violations: FieldViolation[];
  /** Corrected nodes, by the path of the node they replace. */
  examples: { path: string; value: Json }[];
  /** The operations the first property an operation was refused on allows. */
  allowed?: string[];
}

export function noProblems(): Problems {
  return { violations: [], examples: [] };
}

/** Operations other names are often mistaken for. */
const MISTAKEN: Record<string, string> = {
  contains: "like",
  contain_text: "like",
  eq: "==",
  equal: "==",
  equals: "==",
  ne: "!=",
  neq: "!=",
  not_equal: "!=",
  gt: ">",
  gte: ">=",
  lt: "<",
  lte: "<=",
  starts_with: "prefix",
  startswith: "prefix",
  not_contains: "not_like",
  exists: "exist",
  not_exists: "not_exist",
  is_null: "null",
  between_and: "between",
  "<>": "!=",
};

/**
 * Checks a condition against an object type before anything is sent to the
 * platform: every group is and/or with at most 100 sub_conditions, nested at
 * most 10 deep; every leaf names a data property (or "*" / "__id" where those
 * are allowed), an operation that property lists in its condition_operations,
 * and a value of the operation's shape; knn's limit_key/limit_value make
 * sense. Problems are added to `problems` at paths like
 * `condition.sub_conditions[1].operation`; the normalised condition (aliases
 * resolved, value_from "const" beside every value) is returned when there is
 * none. A property that declares no condition_operations is not checked for
 * the operation (the platform decides).
 */
export function checkCondition(
  input: ConditionInput,
  type: ObjectType,
  path: string,
  problems: Problems,
): Condition | undefined {
  const before = problems.violations.length;
  const condition = new Checker(type, problems).node(input, path, 1);
  return problems.violations.length === before ? condition : undefined;
}

class Checker {
  private readonly properties: Map<string, DataProperty>;

  constructor(
    private readonly type: ObjectType,
    private readonly problems: Problems,
  ) {
    this.properties = new Map(type.data_properties.map((p) => [p.name, p]));
  }

  private bad(field: string, description: string, example?: { path: string; value: Json }): undefined {
    this.problems.violations.push({ field, description });
    if (example) this.problems.examples.push(example);
    return undefined;
  }

  node(c: ConditionInput, path: string, depth: number): Condition | undefined {
    const op = OPERATION_ALIASES[c.operation] ?? c.operation;
    if ((GROUP_OPERATIONS as readonly string[]).includes(op)) return this.group(c, op as "and" | "or", path, depth);
    if (Object.hasOwn(VALUE_SHAPES, op)) return this.leaf(c, op as LeafOperation, path);
    const guess = MISTAKEN[op.toLowerCase()] ?? closestNames(op, ALL_OPERATIONS, 2)[0];
    return this.bad(
      `${path}.operation`,
      `${JSON.stringify(c.operation)} is not an operation${guess ? `; did you mean ${JSON.stringify(guess)}?` : ""} The operations are: ${ALL_OPERATIONS.join(" ")}`,
      guess ? { path, value: compactNode({ ...nodeOf(c), operation: guess }) } : undefined,
    );
  }

  private group(c: ConditionInput, op: "and" | "or", path: string, depth: number): Condition | undefined {
    if (depth > MAX_CONDITION_DEPTH) {
      return this.bad(
        path,
        `and/or groups are nested more than ${MAX_CONDITION_DEPTH} deep here; flatten them (an and inside an and is one and)`,
      );
    }
    const stray = (["field", "value", "limit_key", "limit_value", "fields", "match_type"] as const).filter(
      (k) => c[k] !== undefined,
    );
    if (stray.length > 0) {
      const leaf = c.field !== undefined ? { field: c.field, operation: "==", value: c.value ?? "…" } : undefined;
      this.bad(
        `${path}.${stray[0]}`,
        `an ${op} group takes only sub_conditions; ${stray.join(", ")} belong in a leaf condition inside them`,
        leaf ? { path, value: { operation: op, sub_conditions: [leaf as Json] } } : undefined,
      );
    }
    const subs = c.sub_conditions ?? [];
    if (subs.length > MAX_SUB_CONDITIONS) {
      this.bad(
        `${path}.sub_conditions`,
        `has ${subs.length} sub_conditions; an and/or group takes at most ${MAX_SUB_CONDITIONS}: split them into nested groups of at most ${MAX_SUB_CONDITIONS}, or compare one field with several values using in`,
        { path, value: { field: "…", operation: "in", value: ["…", "…"] } },
      );
    }
    const children = subs.map((sub, i) => this.node(sub, `${path}.sub_conditions[${i}]`, depth + 1));
    if (children.some((ch) => ch === undefined) || stray.length > 0) return undefined;
    return { operation: op, sub_conditions: children as Condition[] };
  }

  private leaf(c: ConditionInput, op: LeafOperation, path: string): Condition | undefined {
    const before = this.problems.violations.length;
    const shape = VALUE_SHAPES[op];
    if (c.sub_conditions !== undefined && c.sub_conditions.length > 0) {
      this.bad(
        `${path}.sub_conditions`,
        `a ${op} condition takes no sub_conditions; to combine conditions, put them in an and/or group`,
      );
    }
    if (op === "multi_match") this.multiMatchFields(c, path);
    else this.fieldAndOperation(c, op, shape, path);
    this.value(c, op, shape, path);
    if (c.value_from !== undefined && c.value_from !== "const") {
      this.bad(`${path}.value_from`, `must be "const" (the only value source), or left out`);
    }
    this.knnLimits(c, op, path);
    if (op !== "multi_match") {
      for (const k of ["fields", "match_type"] as const) {
        if (c[k] !== undefined) this.bad(`${path}.${k}`, `${k} is only for multi_match; ${op} takes field`);
      }
    }
    if (this.problems.violations.length > before) return undefined;

    const out: LeafCondition = { operation: op };
    if (c.field !== undefined) out.field = c.field;
    if (op === "multi_match" && c.fields !== undefined) out.fields = c.fields;
    if (c.match_type !== undefined) out.match_type = c.match_type;
    if (shape !== "none" && c.value !== undefined) {
      out.value = c.value;
      out.value_from = "const";
    }
    if (op === "knn") {
      out.limit_key = (c.limit_key ?? "k") as LeafCondition["limit_key"];
      if (c.limit_value !== undefined) out.limit_value = c.limit_value;
    }
    return out;
  }

  private fieldAndOperation(c: ConditionInput, op: LeafOperation, shape: ValueShape, path: string): void {
    const field = c.field;
    const names = [...this.properties.keys()];
    if (field === undefined || field === "") {
      this.bad(
        `${path}.field`,
        `${op} needs field: a data property of ${this.type.id} (${names.join(", ")})${ANY_FIELD_OPERATIONS.has(op) ? ', or "*" for every property that allows it' : ""}`,
      );
      return;
    }
    if (field === "*") {
      if (!ANY_FIELD_OPERATIONS.has(op)) {
        this.bad(
          `${path}.field`,
          `"*" (every property) is only for ${[...ANY_FIELD_OPERATIONS].join(", ")}; ${op} needs one data property of ${this.type.id}`,
        );
        return;
      }
      const supporting = names.filter((n) => this.allows(this.properties.get(n)!, op));
      if (supporting.length === 0) {
        this.refused(c, op, shape, path, `no data property of ${this.type.id} allows ${op}`, this.commonOperations());
      }
      return;
    }
    if (field === "__id") {
      if (!ID_FIELD_OPERATIONS.has(op)) {
        this.bad(`${path}.operation`, `__id (the instance id, an answer's _instance_id) takes == or in, not ${op}`, {
          path,
          value: { field: "__id", operation: "in", value: ["<_instance_id>"] },
        });
      }
      return;
    }
    const property = this.properties.get(field);
    if (!property) {
      const logic = this.type.logic_properties.find((p) => p.name === field);
      if (logic) {
        this.bad(
          `${path}.field`,
          `${field} is a logic property (${logic.type}) of ${this.type.id}, computed on demand: conditions filter on data properties only. Get its values for chosen instances with ResolveLogicProperties`,
        );
        return;
      }
      const close = closestNames(field, names, 3);
      const likely = close[0] === undefined ? undefined : this.properties.get(close[0])!;
      const operation =
        likely === undefined || this.allows(likely, op) ? op : substituteFor(op, shape, likely.condition_operations);
      this.bad(
        `${path}.field`,
        `${field} is not a data property of ${this.type.id}${close.length ? `; did you mean ${close.join(" or ")}?` : ""} Its data properties: ${names.join(", ")}`,
        likely && operation
          ? {
              path,
              value: compactNode({
                ...nodeOf(c),
                field: likely.name,
                operation,
                value: operation === op ? c.value : exampleValue(VALUE_SHAPES[operation as LeafOperation], c.value),
              }),
            }
          : undefined,
      );
      return;
    }
    if (!this.allows(property, op)) {
      this.refused(
        c,
        op,
        shape,
        path,
        `${field} does not allow ${op}; its condition_operations are: ${property.condition_operations.join(" ")}`,
        property.condition_operations,
      );
    }
  }

  /** A refused operation: the violation, the allowed ones, and the condition rewritten with the nearest allowed one. */
  private refused(
    c: ConditionInput,
    op: string,
    shape: ValueShape,
    path: string,
    why: string,
    allowed: string[],
  ): void {
    this.problems.allowed ??= allowed;
    const instead = substituteFor(op, shape, allowed);
    // "*" stands for no property in particular: the example names one that allows the substitute, the display key first.
    const field =
      c.field !== "*" || instead === undefined
        ? c.field
        : [this.type.display_key, ...this.properties.keys()].find((n) => {
            const p = this.properties.get(n);
            return p !== undefined && this.allows(p, instead);
          });
    const example =
      instead === undefined || field === undefined
        ? undefined
        : {
            path,
            value: compactNode({
              field,
              operation: instead,
              value: exampleValue(VALUE_SHAPES[instead as LeafOperation] ?? "scalar", c.value),
            }),
          };
    this.bad(`${path}.operation`, instead ? `${why}; use ${instead} instead` : why, example);
  }

  private multiMatchFields(c: ConditionInput, path: string): void {
    if (c.field !== undefined && c.field !== "") {
      this.bad(`${path}.field`, "multi_match takes fields (a list of data properties), not field", {
        path,
        value: compactNode({ operation: "multi_match", fields: [c.field], value: c.value }),
      });
      return;
    }
    const fields = c.fields ?? [];
    fields.forEach((f, i) => {
      const p = this.properties.get(f);
      if (!p) this.bad(`${path}.fields[${i}]`, `${f} is not a data property of ${this.type.id}`);
      else if (!this.allows(p, "multi_match")) this.bad(`${path}.fields[${i}]`, `${f} does not allow multi_match`);
    });
    if (fields.length === 0 && ![...this.properties.values()].some((p) => this.allows(p, "multi_match"))) {
      this.bad(`${path}.operation`, `no data property of ${this.type.id} allows multi_match`);
    }
  }

  private value(c: ConditionInput, op: LeafOperation, shape: ValueShape, path: string): void {
    const v = c.value === null ? undefined : c.value;
    const at = `${path}.value`;
    const fix = (value: Json | undefined) => ({ path, value: compactNode({ ...nodeOf(c), value }) });
    const words = SHAPE_WORDS[shape];
    if (shape === "none") {
      if (v !== undefined) this.bad(at, `${op} takes no value; leave value out`, fix(undefined));
      return;
    }
    if (v === undefined) {
      this.bad(at, `${op} needs a value: ${words}`, {
        path,
        value: compactNode({ ...nodeOf(c), value: exampleValue(shape, undefined) }),
      });
      return;
    }
    switch (shape) {
      case "scalar":
        if (Array.isArray(v) && (op === "==" || op === "!=")) {
          const instead = op === "!=" ? "not_in" : "in";
          this.bad(at, `${op} takes one value, not a list; for any of several values use ${instead}`, {
            path,
            value: compactNode({ ...nodeOf(c), operation: instead }),
          });
        } else if (!isScalar(v)) this.bad(at, `${op} needs ${words}, not ${given(v)}`);
        return;
      case "text":
        if (typeof v !== "string" || v.trim() === "") {
          this.bad(at, `${op} needs ${words}, not ${given(v)}`, isScalar(v) ? fix(String(v)) : undefined);
        } else if (op === "regex" && v.length > MAX_PATTERN_LENGTH) {
          this.bad(at, `a regex pattern takes at most ${MAX_PATTERN_LENGTH} characters, not ${v.length}`);
        } else if ((op === "like" || op === "not_like") && /^%|%$/.test(v)) {
          const plain = v.replace(/^%+|%+$/g, "");
          this.bad(at, `${op} already matches a substring and % is taken literally: drop the % wildcards`, fix(plain));
        }
        return;
      case "list":
        if (!Array.isArray(v)) {
          this.bad(at, `${op} needs ${words}, not ${given(v)}`, isScalar(v) ? fix([v]) : undefined);
        } else if (v.length === 0) this.bad(at, `${op} needs at least one value in the list`);
        else if (!v.every(isScalar)) this.bad(at, `${op} needs ${words}; nested lists and objects are not values`);
        return;
      case "value_or_list":
        if (!(isScalar(v) || (Array.isArray(v) && v.length > 0 && v.every(isScalar))))
          this.bad(at, `${op} needs ${words}`);
        return;
      case "pair":
        if (!Array.isArray(v) || v.length !== 2 || !v.every((x) => typeof x === "string" || typeof x === "number")) {
          this.bad(at, `${op} needs ${words}, not ${given(v)}`, {
            path,
            value: compactNode({ ...nodeOf(c), value: exampleValue("pair", v) }),
          });
        }
        return;
      case "vector_query": {
        const text = typeof v === "string" && v.trim() !== "";
        const vector = Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number");
        if (!text && !vector) this.bad(at, `${op} needs ${words}, not ${given(v)}`);
        return;
      }
    }
  }

  private knnLimits(c: ConditionInput, op: LeafOperation, path: string): void {
    if (op !== "knn") {
      for (const k of ["limit_key", "limit_value"] as const) {
        if (c[k] !== undefined) this.bad(`${path}.${k}`, `${k} is only for knn`);
      }
      return;
    }
    const key = c.limit_key ?? "k";
    if (!(KNN_LIMIT_KEYS as readonly string[]).includes(key)) {
      const instead = key === "min_distance" ? "max_distance" : "k";
      this.bad(
        `${path}.limit_key`,
        `${JSON.stringify(key)} is not a knn limit; it is one of ${KNN_LIMIT_KEYS.join(", ")}${key === "min_distance" ? " (max_distance: vectors at most this far)" : ""}`,
        { path, value: compactNode({ ...nodeOf(c), limit_key: instead }) },
      );
      return;
    }
    const n = c.limit_value;
    if (n === undefined) return;
    if (key === "k" && (!Number.isInteger(n) || n < 1 || n > MAX_KNN_K)) {
      this.bad(`${path}.limit_value`, `k must be a whole number from 1 to ${MAX_KNN_K}`);
    } else if (key !== "k" && (!Number.isFinite(n) || n < 0)) {
      this.bad(`${path}.limit_value`, `${key} must be a number of at least 0`);
    }
  }

  private allows(p: DataProperty, op: string): boolean {
    const ops = p.condition_operations;
    return ops.length === 0 || ops.includes(op) || (op === "==" && ops.includes("="));
  }

  /** The operations most properties of the type share, for a message about "*". */
  private commonOperations(): string[] {
    return [...new Set(this.type.data_properties.flatMap((p) => p.condition_operations))];
  }
}

/** The allowed operation closest in meaning to a refused one. */
function substituteFor(op: string, shape: ValueShape, allowed: readonly string[]): string | undefined {
  const preferences: Record<string, string[]> = {
    match: ["like", "match_phrase", "=="],
    match_phrase: ["like", "match", "=="],
    knn: ["match", "like"],
    multi_match: ["match", "like"],
    regex: ["like"],
    prefix: ["like"],
    not_prefix: ["not_like"],
    contain: ["like", "in"],
    not_contain: ["not_like", "not_in"],
    range: [">="],
    between: [">="],
    out_range: ["<"],
    empty: ["not_exist"],
    not_empty: ["exist"],
    null: ["not_exist"],
    not_null: ["exist"],
    ">": ["!="],
    "<": ["!="],
  };
  const wanted = [...(preferences[op] ?? []), ...allowed.filter((a) => VALUE_SHAPES[a as LeafOperation] === shape)];
  return wanted.find((w) => allowed.includes(w));
}

/** A value of `shape` for an example, from what the caller gave when it fits. */
function exampleValue(shape: ValueShape, given: Json | undefined): Json | undefined {
  if (shape === "none") return undefined;
  const scalar = Array.isArray(given) ? given[0] : given;
  if (shape === "list") return isScalar(scalar) ? [scalar] : ["…"];
  if (shape === "pair") return Array.isArray(given) && given.length === 2 ? given : [0, 10];
  if (shape === "text") return typeof scalar === "string" ? scalar : "…";
  return isScalar(scalar) ? scalar : "…";
}

/** A condition node as JSON, to rewrite into an example. */
function nodeOf(c: ConditionInput): Record<string, Json | undefined> {
  return { ...c } as unknown as Record<string, Json | undefined>;
}

/** The order an example's keys are written in: as a leaf reads. */
const KEY_ORDER = ["field", "fields", "operation", "value", "limit_key", "limit_value", "match_type", "sub_conditions"];

/** A node without its absent keys (and without value_from, which is always "const"), keys in reading order. */
function compactNode(node: Record<string, Json | undefined>): Json {
  const rank = (k: string) => (KEY_ORDER.includes(k) ? KEY_ORDER.indexOf(k) : KEY_ORDER.length);
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => v !== undefined && k !== "value_from")
      .sort(([a], [b]) => rank(a) - rank(b)),
  ) as Json;
}

/** What the caller gave, short, for a message. */
function given(v: Json | undefined): string {
  const text = JSON.stringify(v) ?? "nothing";
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function isScalar(v: Json | undefined): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}
