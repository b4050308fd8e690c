import { joinText, text } from "../errors/text";
import { type FieldViolation, invalidArgument } from "../errors/tool-error";
import type { LogicProperty, ObjectType } from "../kn/types";
import { inputParameters } from "./parameters";
import type { ResolveInput } from "./resolver-input";
import type { RejectedValue, TimeFacts } from "./time-facts";

/**
 * The request checked before anything is generated: the requested properties
 * against the object type's definition (logic properties only, a data property
 * named as such), identities made of every primary key and nothing else, and
 * the explicit time values of additional_context that a requested property
 * would take (`step=hour`, `"start": 100`). Returns the logic properties in
 * request order; INVALID_ARGUMENT with one violation per problem otherwise,
 * all of them at once.
 */
export function checkRequest(ot: ObjectType, input: ResolveInput, facts: TimeFacts): LogicProperty[] {
  const violations: FieldViolation[] = [];
  const logic = new Map(ot.logic_properties.map((lp) => [lp.name, lp]));
  const data = new Set(ot.data_properties.map((p) => p.name));
  input.properties.forEach((p, i) => {
    if (logic.has(p)) return;
    violations.push({
      field: `properties[${i}]`,
      description: data.has(p)
        ? text(
            `${p} is a data property of ${ot.id}, not a logic property: read it with QueryObjectInstances`,
            `${p} 是 ${ot.id} 的数据属性，不是逻辑属性：请用 QueryObjectInstances 读取`,
          )
        : text(
            `${p} is not a logic property of ${ot.id}; its logic properties: ${[...logic.keys()].join(", ") || "none"}`,
            `${p} 不是 ${ot.id} 的逻辑属性；它的逻辑属性：${[...logic.keys()].join(", ") || "无"}`,
          ),
    });
  });
  const pks = new Set(ot.primary_keys);
  input.identities.forEach((identity, i) => {
    const missing = ot.primary_keys.filter((k) => identity[k] === undefined);
    if (missing.length > 0) {
      violations.push({
        field: `unique_identities[${i}]`,
        description: text(
          `missing primary key ${missing.join(", ")} of ${ot.id}`,
          `缺少 ${ot.id} 的主键 ${missing.join(", ")}`,
        ),
      });
    }
    for (const k of Object.keys(identity)) {
      if (pks.has(k)) continue;
      violations.push({
        field: `unique_identities[${i}].${k}`,
        description: text(
          `not a primary key of ${ot.id} (primary keys: ${ot.primary_keys.join(", ")})`,
          `不是 ${ot.id} 的主键（主键：${ot.primary_keys.join(", ")}）`,
        ),
      });
    }
  });
  const wanted = input.properties.flatMap((p) => logic.get(p) ?? []);
  const badTimes = contextViolations(wanted, facts.rejected);
  if (violations.length > 0 || badTimes.length > 0) {
    const advice = [
      ...(violations.length > 0
        ? [
            text(
              "Ask only for logic properties of the object type, with identities made of its primary keys.",
              "只请求该对象类型的逻辑属性，实例标识由它的主键组成。",
            ),
          ]
        : []),
      ...(badTimes.length > 0
        ? [
            text(
              "Correct the named values in additional_context, or leave them out and say the period in the query (上个月, 2024年Q1).",
              "改正 additional_context 中列出的值，或去掉它们并在 query 中说明时间段（如 上个月、2024年Q1）。",
            ),
          ]
        : []),
    ];
    throw invalidArgument([...violations, ...badTimes], {
      message: joinText(advice, text(" ", "")),
      ...(violations.length > 0 ? { validValues: [...logic.keys()] } : {}),
    });
  }
  return wanted;
}

/**
 * additional_context's rejected values that the request would use: now_ms and
 * timezone set the clock for every property; start, end, step and instant only
 * matter to a metric that takes them as input (an operator reads the context
 * as text, its own parameters named however it likes).
 */
function contextViolations(wanted: LogicProperty[], rejected: RejectedValue[]): FieldViolation[] {
  const taken = new Set<string>(["now_ms", "timezone"]);
  for (const lp of wanted) {
    if (lp.type === "metric") for (const p of inputParameters(lp)) taken.add(p.name);
  }
  return rejected
    .filter((r) => taken.has(r.param))
    .map((r) => ({
      field: `additional_context.${r.key}`,
      description: text(`got ${r.source}; ${r.problem.en}`, `收到 ${r.source}；${r.problem.zh}`),
    }));
}
