import type { Json } from "../../../core/json";
import { MAX_PATTERN_LENGTH } from "../../../core/safe-regex";
import { type Text, text } from "../../../errors/text";
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
  ALL_KNN_LIMIT_KEYS,
  ALL_OPERATIONS,
  ANY_FIELD_OPERATIONS,
  GROUP_OPERATIONS,
  ID_FIELD_OPERATIONS,
  KNN_LIMIT_ALIASES,
  KNN_LIMIT_KEYS,
  type KnnLimitKey,
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
 * platform: every group is and/or with sub_conditions (at most 100), nested
 * at most 10 deep; every leaf names a data property (or "*" / "__id" where
 * those are allowed), an operation that property lists in its
 * condition_operations, and a value of the operation's shape; knn's
 * limit_key/limit_value make sense (the platform tool's `min_distance` is
 * read as max_distance). Every problem is added to `problems` at its path,
 * like `condition.sub_conditions[1].operation` — an unknown operation does
 * not hide a wrong field or value: the leaf is checked as the operation
 * probably meant. A node with problems gets one corrected example with all
 * its fixes, offered only when the same check passes it. The normalised
 * condition (aliases resolved, value_from "const" beside every value) is
 * returned when there is no problem. A property that declares no
 * condition_operations is not checked for the operation (the platform
 * decides).
 */
export function checkCondition(
  input: ConditionInput,
  type: ObjectType,
  path: string,
  problems: Problems,
): Condition | undefined {
  const before = problems.violations.length;
  const condition = new Checker(type, problems, true).node(input, path, 1);
  return problems.violations.length === before ? condition : undefined;
}

/** Changes to a node that would correct it; a key set to undefined is removed. */
type Fix = Partial<ConditionInput>;

/** What a leaf's operation applies to, once its field is read (or corrected). */
type Target =
  | {
      kind: "property";
      property: DataProperty;
      /** The caller's own field, not a correction of it. */
      own: boolean;
    }
  | { kind: "every" }
  | { kind: "id" }
  | { kind: "none" };

class Checker {
  private readonly properties: Map<string, DataProperty>;

  constructor(
    private readonly type: ObjectType,
    private readonly problems: Problems,
    /** Whether corrected examples are made (not while checking one). */
    private readonly correcting: boolean,
  ) {
    this.properties = new Map(type.data_properties.map((p) => [p.name, p]));
  }

  private bad(field: string, description: Text): void {
    this.problems.violations.push({ field, description });
  }

  /** The node with its fixes, as an example at `path`, if the same check passes it. */
  private offer(c: ConditionInput, fix: Fix, path: string, depth: number): void {
    if (!this.correcting) return;
    const node = { ...c, ...fix };
    // Written out in full, as the published schema has a group: the list may have been lost on the way (protobuf).
    if (isGroupOperation(node.operation)) node.sub_conditions ??= [];
    const corrected = compactNode(nodeOf(node));
    const scratch = noProblems();
    new Checker(this.type, scratch, false).node(corrected as unknown as ConditionInput, path, depth);
    if (scratch.violations.length === 0) this.problems.examples.push({ path, value: corrected });
  }

  node(c: ConditionInput, path: string, depth: number): Condition | undefined {
    const op = OPERATION_ALIASES[c.operation] ?? c.operation;
    if (isGroupOperation(op)) return this.group(c, op, path, depth);
    if (Object.hasOwn(VALUE_SHAPES, op)) return this.leaf(c, op as LeafOperation, path, depth);
    const guess = MISTAKEN[op.toLowerCase()] ?? closestNames(op, ALL_OPERATIONS, 2)[0];
    const meant = guess === undefined ? undefined : (OPERATION_ALIASES[guess] ?? guess);
    if (meant !== undefined && isGroupOperation(meant)) {
      this.bad(
        `${path}.operation`,
        text(
          `${JSON.stringify(c.operation)} is not an operation; did you mean ${JSON.stringify(meant)}? The operations are: ${ALL_OPERATIONS.join(" ")}`,
          `${JSON.stringify(c.operation)} 不是一个操作；是否指 ${JSON.stringify(meant)}？可用的操作有：${ALL_OPERATIONS.join(" ")}`,
        ),
      );
      this.offer(c, { operation: meant }, path, depth);
      return undefined;
    }
    // Checked as the leaf probably meant, so that a wrong field or value is named too.
    this.leaf(c, meant as LeafOperation | undefined, path, depth, c.operation);
    return undefined;
  }

  private group(c: ConditionInput, op: "and" | "or", path: string, depth: number): Condition | undefined {
    if (depth > MAX_CONDITION_DEPTH) {
      this.bad(
        path,
        text(
          `and/or groups are nested more than ${MAX_CONDITION_DEPTH} deep here; flatten them (an and inside an and is one and)`,
          `这里的 and/or 组嵌套超过 ${MAX_CONDITION_DEPTH} 层；请把它们展平（and 里面的 and 就是同一个 and）`,
        ),
      );
      return undefined;
    }
    const before = this.problems.violations.length;
    const fix: Fix = {};
    const stray = (["field", "value", "limit_key", "limit_value", "fields", "match_type"] as const).filter(
      (k) => c[k] !== undefined,
    );
    if (stray.length > 0) {
      this.bad(
        `${path}.${stray[0]}`,
        text(
          `an ${op} group takes only sub_conditions; ${stray.join(", ")} belong in a leaf condition inside them`,
          `${op} 组只接受 sub_conditions；${stray.join(", ")} 应放在其中的叶子条件里`,
        ),
      );
      for (const k of stray) fix[k] = undefined;
      // A field and value on a group are a leaf written one level too high.
      if (c.field !== undefined) {
        fix.sub_conditions = [
          ...(c.sub_conditions ?? []),
          { field: c.field, operation: "==", ...(c.value !== undefined ? { value: c.value } : {}) },
        ];
      }
    }
    const subs = c.sub_conditions ?? [];
    // An and of nothing is the idiom for "every instance" (over protobuf [] and no list are one); an or of nothing matches none.
    if (op === "or" && subs.length === 0 && fix.sub_conditions === undefined) {
      this.bad(
        `${path}.sub_conditions`,
        text(
          `empty, so the or group matches no instance: give the conditions it combines, or {"operation":"and","sub_conditions":[]} for every instance`,
          `为空，这个 or 组不匹配任何实例：请给出它要组合的条件；要匹配所有实例请用 {"operation":"and","sub_conditions":[]}`,
        ),
      );
    }
    if (subs.length > MAX_SUB_CONDITIONS) {
      this.bad(
        `${path}.sub_conditions`,
        text(
          `has ${subs.length} conditions; an and/or group takes at most ${MAX_SUB_CONDITIONS}: split them into nested groups of at most ${MAX_SUB_CONDITIONS}, or compare one field with several values using in`,
          `有 ${subs.length} 个条件；一个 and/or 组最多 ${MAX_SUB_CONDITIONS} 个：请拆成每组最多 ${MAX_SUB_CONDITIONS} 个的嵌套组，或用 in 把一个字段与多个值比较`,
        ),
      );
    }
    const own = this.problems.violations.length > before;
    if (own) this.offer(c, fix, path, depth);
    const children = subs.map((sub, i) => this.node(sub, `${path}.sub_conditions[${i}]`, depth + 1));
    if (own || children.some((ch) => ch === undefined)) return undefined;
    return { operation: op, sub_conditions: children as Condition[] };
  }

  /**
   * A leaf. `op` is its operation, or with `unknown` (the caller's operation,
   * which is none) the one probably meant, if any.
   */
  private leaf(
    c: ConditionInput,
    op: LeafOperation | undefined,
    path: string,
    depth: number,
    unknown?: string,
  ): Condition | undefined {
    const before = this.problems.violations.length;
    const fix: Fix = unknown !== undefined && op !== undefined ? { operation: op } : {};
    const named = op ?? unknown ?? "";
    if (c.sub_conditions !== undefined && c.sub_conditions.length > 0) {
      this.bad(
        `${path}.sub_conditions`,
        text(
          `a ${named} condition takes none; to combine conditions, put them in an and/or group`,
          `${named} 条件不接受子条件；要组合条件，请把它们放进 and/or 组`,
        ),
      );
    }
    const target = op === "multi_match" ? this.multiMatchFields(c, path, fix) : this.field(c, op, path, fix);
    if (c.value_from !== undefined && c.value_from !== "const") {
      this.bad(
        `${path}.value_from`,
        text(`must be "const" (the only value source), or left out`, `必须是 "const"（唯一的取值来源），或不传`),
      );
      fix.value_from = undefined;
    }
    if (op !== undefined) {
      this.value(c, op, path, fix);
      this.knnLimits(c, op, path, fix);
      if (op !== "multi_match") {
        for (const k of ["fields", "match_type"] as const) {
          if (c[k] === undefined) continue;
          this.bad(
            `${path}.${k}`,
            text(`only for multi_match; ${op} takes field`, `只用于 multi_match；${op} 使用 field`),
          );
          fix[k] = undefined;
        }
      }
    }
    // Last: an operation the field does not allow changes the example's value and knn limits too.
    if (unknown !== undefined) this.unknownOperation(c, unknown, op, target, path, fix);
    else if (op !== undefined) this.operationAllowed(c, op, target, path, fix);
    // Without an operation probably meant, there is nothing to correct the leaf to.
    if (op === undefined) return undefined;
    if (this.problems.violations.length > before) {
      this.offer(c, fix, path, depth);
      return undefined;
    }

    const shape = VALUE_SHAPES[op];
    const out: LeafCondition = { operation: op };
    if (c.field !== undefined) out.field = c.field;
    if (op === "multi_match" && c.fields !== undefined) out.fields = c.fields;
    if (c.match_type !== undefined) out.match_type = c.match_type;
    if (shape !== "none" && c.value !== undefined) {
      out.value = c.value;
      out.value_from = "const";
    }
    if (op === "knn") {
      const key = c.limit_key ?? "k";
      out.limit_key = KNN_LIMIT_ALIASES[key] ?? (key as KnnLimitKey);
      if (c.limit_value !== undefined) out.limit_value = c.limit_value;
    }
    return out;
  }

  /** The leaf's field: a data property, "*" or "__id"; a wrong one is reported, and corrected when a close name exists. */
  private field(c: ConditionInput, op: LeafOperation | undefined, path: string, fix: Fix): Target {
    const field = c.field;
    const names = [...this.properties.keys()];
    if (field === undefined || field === "") {
      this.bad(
        `${path}.field`,
        text(
          `${op === undefined ? "required" : `required by ${op}`}: a data property of ${this.type.id} (${names.join(", ")})${op !== undefined && ANY_FIELD_OPERATIONS.has(op) ? ', or "*" for every property that allows it' : ""}`,
          `${op === undefined ? "必填" : `${op} 必须提供`}：${this.type.id} 的一个数据属性（${names.join(", ")}）${op !== undefined && ANY_FIELD_OPERATIONS.has(op) ? '，或用 "*" 表示所有允许它的属性' : ""}`,
        ),
      );
      return { kind: "none" };
    }
    if (field === "*") {
      if (op !== undefined && !ANY_FIELD_OPERATIONS.has(op)) {
        this.bad(
          `${path}.field`,
          text(
            `"*" (every property) is only for ${[...ANY_FIELD_OPERATIONS].join(", ")}; ${op} needs one data property of ${this.type.id}`,
            `"*"（所有属性）只用于 ${[...ANY_FIELD_OPERATIONS].join(", ")}；${op} 需要 ${this.type.id} 的一个数据属性`,
          ),
        );
        return { kind: "none" };
      }
      return { kind: "every" };
    }
    if (field === "__id") return { kind: "id" };
    const property = this.properties.get(field);
    if (property) return { kind: "property", property, own: true };
    const logic = this.type.logic_properties.find((p) => p.name === field);
    if (logic) {
      this.bad(
        `${path}.field`,
        text(
          `${field} is a logic property (${logic.type}) of ${this.type.id}, computed on demand: conditions filter on data properties only. Get its values for chosen instances with ResolveLogicProperties`,
          `${field} 是 ${this.type.id} 的逻辑属性（${logic.type}），按需计算：条件只能按数据属性过滤。要获取选定实例的值，请用 ResolveLogicProperties`,
        ),
      );
      return { kind: "none" };
    }
    const close = closestNames(field, names, 3);
    this.bad(
      `${path}.field`,
      text(
        `${field} is not a data property of ${this.type.id}${close.length ? `; did you mean ${close.join(" or ")}?` : "."} Its data properties: ${names.join(", ")}`,
        `${field} 不是 ${this.type.id} 的数据属性${close.length ? `；是否指 ${close.join(" 或 ")}？` : "。"}它的数据属性有：${names.join(", ")}`,
      ),
    );
    if (close[0] === undefined) return { kind: "none" };
    fix.field = close[0];
    return { kind: "property", property: this.properties.get(close[0])!, own: false };
  }

  /**
   * A known operation against what it applies to: a refused one is reported
   * when the field is the caller's own (a corrected field only changes the
   * example), and the example takes the nearest allowed one instead.
   */
  private operationAllowed(c: ConditionInput, op: LeafOperation, target: Target, path: string, fix: Fix): void {
    // What the example says so far: a list for == already turned it into in.
    const current = (fix.operation ?? op) as LeafOperation;
    switch (target.kind) {
      case "property": {
        const { property, own } = target;
        const allowed = property.condition_operations;
        if (own && !this.allows(property, op)) {
          const instead = substituteFor(op, VALUE_SHAPES[op], allowed);
          this.problems.allowed ??= allowed;
          this.bad(
            `${path}.operation`,
            text(
              `${property.name} does not allow ${op}; its condition_operations are: ${allowed.join(" ")}${instead ? `; use ${instead} instead` : ""}`,
              `${property.name} 不允许 ${op}；它的 condition_operations 是：${allowed.join(" ")}${instead ? `；请改用 ${instead}` : ""}`,
            ),
          );
        }
        if (!this.allows(property, current))
          this.retarget(c, current, substituteFor(current, VALUE_SHAPES[current], allowed), fix);
        return;
      }
      case "every": {
        const somewhere = (o: string) => [...this.properties.values()].some((p) => this.allows(p, o));
        const allowed = this.commonOperations();
        if (!somewhere(op)) {
          const instead = substituteFor(op, VALUE_SHAPES[op], allowed);
          this.problems.allowed ??= allowed;
          this.bad(
            `${path}.operation`,
            text(
              `no data property of ${this.type.id} allows ${op}${instead ? `; use ${instead} instead` : ""}`,
              `${this.type.id} 没有允许 ${op} 的数据属性${instead ? `；请改用 ${instead}` : ""}`,
            ),
          );
        }
        if (somewhere(current)) return;
        const instead = substituteFor(current, VALUE_SHAPES[current], allowed);
        this.retarget(c, current, instead, fix);
        // "*" stands for no property in particular: the example names one that allows the substitute, the display key first.
        if (instead !== undefined) fix.field = this.propertyAllowing(instead);
        return;
      }
      case "id":
        if (!ID_FIELD_OPERATIONS.has(op)) {
          this.bad(
            `${path}.operation`,
            text(
              `__id (the instance id, an answer's _instance_id) takes == or in, not ${op}`,
              `__id（实例id，即应答中的 _instance_id）只接受 == 或 in，不接受 ${op}`,
            ),
          );
        }
        if (!ID_FIELD_OPERATIONS.has(current)) this.retarget(c, current, Array.isArray(c.value) ? "in" : "==", fix);
        return;
      case "none":
        return;
    }
  }

  /** An operation that does not exist: named with the one probably meant, as far as the field allows it. */
  private unknownOperation(
    c: ConditionInput,
    given: string,
    meant: LeafOperation | undefined,
    target: Target,
    path: string,
    fix: Fix,
  ): void {
    let guess = text(".", "。");
    if (meant !== undefined) {
      guess = text(`; did you mean ${JSON.stringify(meant)}?`, `；是否指 ${JSON.stringify(meant)}？`);
      const current = (fix.operation ?? meant) as LeafOperation;
      if (target.kind === "property") {
        const { property, own } = target;
        const allowed = property.condition_operations;
        if (!this.allows(property, meant)) {
          const instead = substituteFor(meant, VALUE_SHAPES[meant], allowed);
          if (own) this.problems.allowed ??= allowed;
          guess = text(
            `${guess.en} ${property.name} does not allow it (its condition_operations are: ${allowed.join(" ")})${instead ? `; use ${JSON.stringify(instead)}` : ""}.`,
            `${guess.zh}${property.name} 不允许它（它的 condition_operations 是：${allowed.join(" ")}）${instead ? `；请用 ${JSON.stringify(instead)}` : ""}。`,
          );
        }
        if (!this.allows(property, current))
          this.retarget(c, current, substituteFor(current, VALUE_SHAPES[current], allowed), fix);
      }
    }
    this.bad(
      `${path}.operation`,
      text(
        `${JSON.stringify(given)} is not an operation${guess.en} The operations are: ${ALL_OPERATIONS.join(" ")}`,
        `${JSON.stringify(given)} 不是一个操作${guess.zh}可用的操作有：${ALL_OPERATIONS.join(" ")}`,
      ),
    );
  }

  /**
   * The example's operation becomes `to` (none: no example can be made), its
   * value reshaped when `to` takes another kind of value, and knn's limits
   * dropped when `to` is not knn.
   */
  private retarget(c: ConditionInput, from: LeafOperation, to: string | undefined, fix: Fix): void {
    if (to === undefined) return;
    fix.operation = to;
    const shape = VALUE_SHAPES[to as LeafOperation];
    const value = "value" in fix ? fix.value : c.value;
    if (shape !== VALUE_SHAPES[from]) fix.value = exampleValue(shape, value);
    if (to !== "knn") {
      fix.limit_key = undefined;
      fix.limit_value = undefined;
    }
  }

  /** The display key, else the first data property, that allows `op`. */
  private propertyAllowing(op: string): string | undefined {
    return [this.type.display_key, ...this.properties.keys()].find((n) => {
      const p = this.properties.get(n);
      return p !== undefined && this.allows(p, op);
    });
  }

  private multiMatchFields(c: ConditionInput, path: string, fix: Fix): Target {
    if (c.field !== undefined && c.field !== "") {
      this.bad(
        `${path}.field`,
        text(
          "multi_match takes fields (a list of data properties), not field",
          "multi_match 使用 fields（数据属性列表），不使用 field",
        ),
      );
      fix.field = undefined;
      fix.fields = [c.field];
      return { kind: "none" };
    }
    const fields = c.fields ?? [];
    const matching = [...this.properties.values()].filter((p) => this.allows(p, "multi_match")).map((p) => p.name);
    const kept: string[] = [];
    fields.forEach((f, i) => {
      const p = this.properties.get(f);
      if (p && this.allows(p, "multi_match")) {
        kept.push(f);
        return;
      }
      this.bad(
        `${path}.fields[${i}]`,
        p
          ? text(`${f} does not allow multi_match`, `${f} 不允许 multi_match`)
          : text(`${f} is not a data property of ${this.type.id}`, `${f} 不是 ${this.type.id} 的数据属性`),
      );
      const close = closestNames(f, matching, 1)[0];
      if (close !== undefined) kept.push(close);
    });
    if (kept.length !== fields.length || kept.some((f, i) => f !== fields[i])) {
      fix.fields = kept.length > 0 ? [...new Set(kept)] : undefined;
    }
    if (fields.length === 0 && matching.length === 0) {
      this.bad(
        `${path}.operation`,
        text(
          `no data property of ${this.type.id} allows multi_match`,
          `${this.type.id} 没有允许 multi_match 的数据属性`,
        ),
      );
    }
    return { kind: "none" };
  }

  private value(c: ConditionInput, op: LeafOperation, path: string, fix: Fix): void {
    const shape = VALUE_SHAPES[op];
    const v = c.value === null ? undefined : c.value;
    const at = `${path}.value`;
    const words = SHAPE_WORDS[shape];
    if (shape === "none") {
      if (v !== undefined) {
        this.bad(at, text(`${op} takes none; leave it out`, `${op} 不接受值；请不要传`));
        fix.value = undefined;
      }
      return;
    }
    if (v === undefined) {
      this.bad(at, text(`required by ${op}: ${words.en}`, `${op} 必须提供：${words.zh}`));
      fix.value = exampleValue(shape, undefined);
      return;
    }
    switch (shape) {
      case "scalar":
        if (Array.isArray(v) && (op === "==" || op === "!=")) {
          const instead = op === "!=" ? "not_in" : "in";
          this.bad(
            at,
            text(
              `${op} takes one value, not a list; for any of several values use ${instead}`,
              `${op} 只接受一个值，不接受列表；要匹配多个值中的任何一个，请用 ${instead}`,
            ),
          );
          fix.operation = instead;
        } else if (!isScalar(v)) this.bad(at, needs(op, words, v));
        return;
      case "text":
        if (typeof v !== "string" || v.trim() === "") {
          this.bad(at, needs(op, words, v));
          if (isScalar(v)) fix.value = String(v);
        } else if (op === "regex" && v.length > MAX_PATTERN_LENGTH) {
          this.bad(
            at,
            text(
              `a regex pattern takes at most ${MAX_PATTERN_LENGTH} characters, not ${v.length}`,
              `regex 模式最多 ${MAX_PATTERN_LENGTH} 个字符，而不是 ${v.length} 个`,
            ),
          );
        } else if ((op === "like" || op === "not_like") && /^%|%$/.test(v)) {
          this.bad(
            at,
            text(
              `${op} already matches a substring and % is taken literally: drop the % wildcards`,
              `${op} 本身就匹配子串，% 会按字面匹配：请去掉 % 通配符`,
            ),
          );
          fix.value = v.replace(/^%+|%+$/g, "");
        }
        return;
      case "list":
        if (!Array.isArray(v)) {
          this.bad(at, needs(op, words, v));
          if (isScalar(v)) fix.value = [v];
        } else if (v.length === 0)
          this.bad(at, text(`${op} needs at least one value in the list`, `${op} 的列表中至少需要一个值`));
        else if (!v.every(isScalar))
          this.bad(
            at,
            text(
              `${op} needs ${words.en}; nested lists and objects are not values`,
              `${op} 需要${words.zh}；嵌套的列表和对象不是值`,
            ),
          );
        return;
      case "value_or_list":
        if (!(isScalar(v) || (Array.isArray(v) && v.length > 0 && v.every(isScalar))))
          this.bad(at, text(`${op} needs ${words.en}`, `${op} 需要${words.zh}`));
        return;
      case "pair":
        if (!Array.isArray(v) || v.length !== 2 || !v.every((x) => typeof x === "string" || typeof x === "number")) {
          this.bad(at, needs(op, words, v));
          fix.value = exampleValue("pair", v);
        }
        return;
      case "vector_query": {
        const isText = typeof v === "string" && v.trim() !== "";
        const vector = Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number");
        if (!isText && !vector) this.bad(at, needs(op, words, v));
        return;
      }
    }
  }

  private knnLimits(c: ConditionInput, op: LeafOperation, path: string, fix: Fix): void {
    if (op !== "knn") {
      for (const k of ["limit_key", "limit_value"] as const) {
        if (c[k] === undefined) continue;
        this.bad(`${path}.${k}`, text("only for knn", "只用于 knn"));
        fix[k] = undefined;
      }
      return;
    }
    const given = c.limit_key ?? "k";
    const key = KNN_LIMIT_ALIASES[given] ?? given;
    if (!(KNN_LIMIT_KEYS as readonly string[]).includes(key)) {
      this.bad(
        `${path}.limit_key`,
        text(
          `${JSON.stringify(given)} is not a knn limit; it is k (the k nearest), min_score (similarity at least limit_value) or max_distance (distance at most limit_value; min_distance means the same)`,
          `${JSON.stringify(given)} 不是 knn 的限制方式；可用的是 k（最近的 k 个）、min_score（相似度不低于 limit_value）或 max_distance（距离不超过 limit_value；min_distance 含义相同）`,
        ),
      );
      fix.limit_key = closestNames(given, ALL_KNN_LIMIT_KEYS, 1)[0] ?? "k";
      return;
    }
    const n = c.limit_value;
    if (n === undefined) return;
    if (key === "k" && (!Number.isInteger(n) || n < 1 || n > MAX_KNN_K)) {
      this.bad(
        `${path}.limit_value`,
        text(`k must be a whole number from 1 to ${MAX_KNN_K}`, `k 的取值必须是 1 到 ${MAX_KNN_K} 之间的整数`),
      );
      fix.limit_value = Number.isFinite(n) ? Math.min(MAX_KNN_K, Math.max(1, Math.round(n))) : undefined;
    } else if (key !== "k" && (!Number.isFinite(n) || n < 0)) {
      this.bad(
        `${path}.limit_value`,
        text(`${given} must be a number of at least 0`, `${given} 的取值必须是不小于 0 的数字`),
      );
      fix.limit_value = Number.isFinite(n) ? 0 : undefined;
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

function isGroupOperation(op: string): op is "and" | "or" {
  return (GROUP_OPERATIONS as readonly string[]).includes(op);
}

/** Operations meaning the opposite of one another: never offered for each other. */
const OPPOSITES: Record<string, string> = {
  "==": "!=",
  "!=": "==",
  in: "not_in",
  not_in: "in",
  like: "not_like",
  not_like: "like",
  prefix: "not_prefix",
  not_prefix: "prefix",
  contain: "not_contain",
  not_contain: "contain",
  exist: "not_exist",
  not_exist: "exist",
  empty: "not_empty",
  not_empty: "empty",
  null: "not_null",
  not_null: "null",
  true: "false",
  false: "true",
  range: "out_range",
  out_range: "range",
};

/** Comparisons only another comparison in the same direction can stand in for. */
const ORDERING: ReadonlySet<string> = new Set([">", ">=", "<", "<="]);

/** The allowed operation closest in meaning to a refused one, if any is close enough to offer. */
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
    ">": [">="],
    ">=": [">"],
    "<": ["<="],
    "<=": ["<"],
  };
  // Any other operation taking the same kind of value, unless it means the opposite (or the order is lost).
  const sameShape = ORDERING.has(op)
    ? []
    : allowed.filter((a) => VALUE_SHAPES[a as LeafOperation] === shape && a !== OPPOSITES[op]);
  return [...(preferences[op] ?? []), ...sameShape].find((w) => allowed.includes(w));
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
  const json = JSON.stringify(v) ?? "null";
  return json.length > 60 ? `${json.slice(0, 57)}…` : json;
}

/** `op` needs a value of another shape than the one given. */
function needs(op: string, words: Text, v: Json | undefined): Text {
  return text(`${op} needs ${words.en}, not ${given(v)}`, `${op} 需要${words.zh}，而不是 ${given(v)}`);
}

function isScalar(v: Json | undefined): v is string | number | boolean {
  return typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}
