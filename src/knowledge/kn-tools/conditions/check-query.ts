import { inBoth, type Text, text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";
import type { ObjectType, SortField } from "../../../kn/types";
import type { Problems } from "./check-condition";
import { closestNames } from "./suggest";

/** A sort key as a caller writes it; direction defaults to asc. */
interface SortInput {
  field: string;
  direction?: string;
}

/** The relevance of a text or vector match, sortable beside the data properties. */
const SCORE = "_score";

/**
 * A `properties` projection checked against the object type: every name a
 * data property (logic properties are computed on demand, not projected).
 * Duplicates are dropped.
 */
export function checkProperties(
  properties: readonly string[],
  type: ObjectType,
  path: string,
  problems: Problems,
): string[] {
  const names = type.data_properties.map((p) => p.name);
  properties.forEach((name, i) => {
    if (names.includes(name)) return;
    const at = `${path}[${i}]`;
    if (type.logic_properties.some((lp) => lp.name === name)) {
      problems.violations.push({
        field: at,
        description: text(
          `${name} is a logic property of ${type.id}: get its values with ResolveLogicProperties (include_logic_params shows its parameters)`,
          `${name} 是 ${type.id} 的逻辑属性：请用 ResolveLogicProperties 获取它的值（include_logic_params 会显示它的参数）`,
        ),
      });
      return;
    }
    const close = closestNames(name, names, 3);
    problems.violations.push({
      field: at,
      description: text(
        `${name} is not a data property of ${type.id}${close.length ? `; did you mean ${close.join(" or ")}?` : "."} Its data properties: ${names.join(", ")}`,
        `${name} 不是 ${type.id} 的数据属性${close.length ? `；是否指 ${close.join(" 或 ")}？` : "。"}它的数据属性有：${names.join(", ")}`,
      ),
    });
  });
  return [...new Set(properties)];
}

/** Sort keys checked against the object type: data properties or _score, asc or desc, each field once. */
export function checkSort(sort: readonly SortInput[], type: ObjectType, path: string, problems: Problems): SortField[] {
  const names = type.data_properties.map((p) => p.name);
  const seen = new Set<string>();
  return sort.map((s, i) => {
    const at = `${path}[${i}]`;
    const direction = (s.direction ?? "asc").toLowerCase();
    if (s.field !== SCORE && !names.includes(s.field)) {
      const close = closestNames(s.field, names, 3);
      problems.violations.push({
        field: `${at}.field`,
        description: text(
          `${JSON.stringify(s.field)} is not a data property of ${type.id} (or ${SCORE})${close.length ? `; did you mean ${close.join(" or ")}?` : ""}`,
          `${JSON.stringify(s.field)} 不是 ${type.id} 的数据属性（也不是 ${SCORE}）${close.length ? `；是否指 ${close.join(" 或 ")}？` : ""}`,
        ),
      });
    } else if (seen.has(s.field)) {
      problems.violations.push({
        field: `${at}.field`,
        description: text(`${s.field} is already a sort key`, `${s.field} 已经是排序键`),
      });
    }
    seen.add(s.field);
    if (direction !== "asc" && direction !== "desc") {
      problems.violations.push({
        field: `${at}.direction`,
        description: text('must be "asc" or "desc"', '必须是 "asc" 或 "desc"'),
      });
    }
    return { field: s.field, direction: direction as SortField["direction"] };
  });
}

/** At most this many problems are listed in the message (all are in the violations). */
const LISTED = 8;

/**
 * INVALID_ARGUMENT for the problems found before calling the platform: one
 * violation per problem, and a hint with corrected examples and the
 * operations the refused property allows. The reason is INVALID_CONDITION
 * when a condition is at fault, else `options.reason` (INVALID_QUERY).
 */
export function invalidQuery(
  problems: Problems,
  what: Text,
  options: { reason?: string; next?: { message: Text; nextRpc: string } } = {},
): ToolError {
  const { next } = options;
  const { violations, examples } = problems;
  const shown = violations.slice(0, LISTED);
  const more = violations.length - LISTED;
  const fixes = examples.slice(0, 3).map((e) => `${e.path} = ${JSON.stringify(e.value)}`);
  const inCondition = violations.some((v) => /(^|\.)condition\b/.test(v.field));
  const hint: Text[] = [
    fixes.length > 0
      ? text(`Corrected: ${fixes.join("; ")}.`, `改正后：${fixes.join("；")}。`)
      : text("Correct the fields named in the violations.", "按字段错误（violations）中列出的字段改正。"),
    ...(inCondition
      ? [
          text(
            "Each data property lists the operations it allows in condition_operations (see SearchSchema); a value must have its operation's shape.",
            "每个数据属性在 condition_operations 中列出它允许的操作（见 SearchSchema）；值必须符合其操作要求的形式。",
          ),
        ]
      : []),
    ...(next ? [next.message] : []),
  ];
  return new ToolError({
    code: "invalid_argument",
    reason: inCondition ? "INVALID_CONDITION" : (options.reason ?? "INVALID_QUERY"),
    message: text(
      `${what.en}: ${[...shown.map((v) => `${v.field}: ${v.description.en}`), ...(more > 0 ? [`…and ${more} more`] : [])].join("; ")}`,
      `${what.zh}：${[...shown.map((v) => `${v.field}：${v.description.zh}`), ...(more > 0 ? [`……另有 ${more} 个`] : [])].join("；")}`,
    ),
    violations,
    hint: {
      message: inBoth((l) => hint.map((h) => h[l]).join(l === "en" ? " " : "")),
      ...(next ? { nextRpc: next.nextRpc } : {}),
      ...(problems.allowed?.length ? { validValues: problems.allowed } : {}),
    },
  });
}
