import { CALENDAR_UNITS, MAX_MS, MIN_MS } from "../core/calendar";
import type { Json } from "../core/json";
import { type Text, text } from "../errors/text";
import type { LogicParameter, LogicProperty, OperatorDetail } from "../kn/types";

/** Metric parameters the platform computes from time (spec §7.3: always generated). */
export const METRIC_SYSTEM_PARAMS = ["instant", "start", "end", "step"] as const;

/** A parameter the answer lacks or got wrong, in the MissingParams shape. */
export interface ParamProblem {
  name: string;
  type: string;
  /** What is wrong, for the repair round (the LLM's words, not the caller's). */
  problem: string;
  /** What the agent should add to additional_context or the query, in both languages. */
  hint: Text;
}

/** The `value_from: input` parameters of a logic property (what must be generated). */
export function inputParameters(lp: LogicProperty): LogicParameter[] {
  const inputs = lp.parameters.filter((p) => p.value_from === "input");
  if (lp.type !== "metric") return inputs;
  // A metric always takes the time parameters (spec §7.3) unless it declares
  // one itself with another source (a const step, say), which then stands.
  const declared = new Set(lp.parameters.map((p) => p.name));
  const implied: LogicParameter[] = METRIC_SYSTEM_PARAMS.filter((n) => !declared.has(n)).map((name) => ({
    name,
    type: name === "instant" ? "BOOLEAN" : name === "step" ? "STRING" : "INTEGER",
    value_from: "input",
    if_system_generate: true,
    comment: "",
  }));
  return [...inputs, ...implied];
}

/**
 * Checks a property's generated parameters: every input parameter present with
 * the declared type, and for a metric the platform's time rules (instant is a
 * boolean; start and end are ms timestamps between 2000 and 2100 with start ≤
 * end; instant=false needs step ∈ day|week|month|quarter|year; instant=true
 * takes no step). Returns the problems; none means usable.
 */
export function checkParameters(lp: LogicProperty, params: Record<string, Json>): ParamProblem[] {
  const problems: ParamProblem[] = [];
  const isMetric = lp.type === "metric";
  for (const p of inputParameters(lp)) {
    const value = params[p.name];
    const type = (p.type || "").toUpperCase();
    if (isMetric && p.name === "step") continue;
    if (value === undefined || value === null || value === "") {
      problems.push({ name: p.name, type: p.type || "ANY", problem: "missing", hint: hintFor(lp, p) });
      continue;
    }
    const wrong = typeProblem(type, value);
    if (wrong) problems.push({ name: p.name, type: p.type, problem: wrong, hint: hintFor(lp, p) });
  }
  if (isMetric) {
    const { instant, start, end, step } = params;
    for (const [name, v] of [
      ["start", start],
      ["end", end],
    ] as const) {
      if (typeof v === "number" && Number.isInteger(v) && (v < MIN_MS || v > MAX_MS)) {
        problems.push({
          name,
          type: "INTEGER",
          problem: "must be a millisecond timestamp between 2000 and 2100",
          hint: timeHint,
        });
      }
    }
    if (typeof start === "number" && typeof end === "number" && start > end) {
      problems.push({ name: "start", type: "INTEGER", problem: "start must not be after end", hint: timeHint });
    }
    if (instant === false && (typeof step !== "string" || !(CALENDAR_UNITS as readonly string[]).includes(step))) {
      problems.push({
        name: "step",
        type: "STRING",
        problem:
          step === undefined || step === null
            ? "a trend query (instant=false) needs step"
            : "step must be one of day, week, month, quarter, year",
        hint: text(
          "Say the trend's granularity in additional_context (e.g. step=month: by month, quarter or year), or make it an instant query (instant=true)",
          "在 additional_context 中说明趋势粒度（如 step=month，按月/按季度/按年），或改为即时查询（instant=true）",
        ),
      });
    }
    if (instant === true && step !== undefined && step !== null) {
      problems.push({
        name: "step",
        type: "STRING",
        problem: "an instant query (instant=true) takes no step; leave step out",
        hint: text("An instant query (instant=true) takes no step", "即时查询（instant=true）不需要 step"),
      });
    }
  }
  return problems;
}

const timeHint = text(
  "Add an explicit time range to additional_context (start/end as millisecond timestamps, or words such as “the last six months”, “2024”), or state the time range in the query",
  "在 additional_context 中补充明确时间范围（start/end 毫秒时间戳，或“最近半年”“2024年”等），或在 query 中明确时间范围",
);

function hintFor(lp: LogicProperty, p: LogicParameter): Text {
  if (p.name === "start" || p.name === "end") return timeHint;
  if (p.name === "instant")
    return text(
      "Say in additional_context whether this is an instant query (instant=true, one point in time) or a trend query (instant=false, with step)",
      "在 additional_context 中说明是即时查询（instant=true，单个时间点）还是趋势查询（instant=false，并给出 step）",
    );
  return text(
    `Add parameter ${p.name} of logic property ${lp.name}${p.comment ? ` (${p.comment})` : ""} to additional_context, of type ${p.type || "any"}`,
    `在 additional_context 中补充逻辑属性 ${lp.name} 的参数 ${p.name}${p.comment ? `（${p.comment}）` : ""}，类型 ${p.type || "任意"}`,
  );
}

function typeProblem(type: string, value: Json): string | undefined {
  switch (type) {
    case "INTEGER":
    case "INT":
    case "LONG":
      return typeof value === "number" && Number.isInteger(value) ? undefined : "must be an integer";
    case "NUMBER":
    case "FLOAT":
    case "DOUBLE":
      return typeof value === "number" ? undefined : "must be a number";
    case "BOOLEAN":
    case "BOOL":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "STRING":
      return typeof value === "string" ? undefined : "must be a string";
    case "OBJECT":
      return value !== null && typeof value === "object" && !Array.isArray(value) ? undefined : "must be a JSON object";
    case "ARRAY":
      return Array.isArray(value) ? undefined : "must be a JSON array";
    default:
      return undefined;
  }
}

/**
 * Checks an operator property's generated parameters against the operator
 * market's schema (api_spec.request_body for body parameters, api_spec.parameters
 * for the rest): type, enum, required members and unknown members of objects,
 * item types of arrays, numeric bounds. The property's own declaration only says
 * "OBJECT"; this catches `weights` without the members the operator requires
 * before the call, where a repair round can still fix it.
 */
export function checkOperatorParameters(
  lp: LogicProperty,
  operator: OperatorDetail | undefined,
  params: Record<string, Json>,
): ParamProblem[] {
  if (!operator) return [];
  const spec = operator.metadata.api_spec;
  const body = schemaAt(spec.request_body, ["content", "application/json", "schema"]);
  const bodyProps = schemaAt(body, ["properties"]);
  const listed = Array.isArray(spec.parameters) ? spec.parameters : [];
  const problems: ParamProblem[] = [];
  for (const p of inputParameters(lp)) {
    const value = params[p.name];
    if (value === undefined || value === null) continue;
    const schema =
      !p.source || p.source === "body"
        ? schemaAt(bodyProps, [p.name])
        : schemaAt(
            listed.find((x) => isObject(x) && x["name"] === p.name),
            ["schema"],
          );
    if (!schema) continue;
    for (const problem of schemaProblems(schema, value, p.name)) {
      problems.push({ name: p.name, type: p.type, problem, hint: hintFor(lp, p) });
    }
  }
  return problems;
}

function isObject(v: unknown): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function schemaAt(root: unknown, path: string[]): Record<string, Json> | undefined {
  let at: unknown = root;
  for (const key of path) {
    if (!isObject(at)) return undefined;
    at = at[key];
  }
  return isObject(at) ? at : undefined;
}

/** The JSON Schema subset operator specs use; at most a few problems per value so a repair prompt stays short. */
function schemaProblems(schema: Record<string, Json>, value: Json, path: string): string[] {
  const out: string[] = [];
  const type = typeof schema["type"] === "string" ? schema["type"] : undefined;
  const is: Record<string, (v: Json) => boolean> = {
    object: isObject,
    array: Array.isArray,
    string: (v) => typeof v === "string",
    number: (v) => typeof v === "number",
    integer: (v) => typeof v === "number" && Number.isInteger(v),
    boolean: (v) => typeof v === "boolean",
  };
  if (type && is[type] && !is[type]!(value))
    return [`${path} must be ${type === "integer" || type === "array" || type === "object" ? "an" : "a"} ${type}`];
  if (Array.isArray(schema["enum"]) && !schema["enum"].some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(`${path} must be one of ${JSON.stringify(schema["enum"])}`);
  }
  if (typeof value === "number") {
    if (typeof schema["minimum"] === "number" && value < schema["minimum"])
      out.push(`${path} must be ≥ ${schema["minimum"]}`);
    if (typeof schema["maximum"] === "number" && value > schema["maximum"])
      out.push(`${path} must be ≤ ${schema["maximum"]}`);
  }
  if (isObject(value)) {
    const props = isObject(schema["properties"]) ? schema["properties"] : {};
    for (const name of Array.isArray(schema["required"]) ? schema["required"] : []) {
      if (typeof name === "string" && value[name] === undefined) out.push(`${path}.${name} is required`);
    }
    if (schema["additionalProperties"] === false) {
      for (const name of Object.keys(value))
        if (!(name in props)) out.push(`${path}.${name} is not allowed (allowed: ${Object.keys(props).join(", ")})`);
    }
    for (const [name, sub] of Object.entries(props)) {
      if (value[name] !== undefined && isObject(sub)) out.push(...schemaProblems(sub, value[name]!, `${path}.${name}`));
    }
  }
  if (Array.isArray(value) && isObject(schema["items"])) {
    for (const [i, item] of value.entries())
      out.push(...schemaProblems(schema["items"] as Record<string, Json>, item, `${path}[${i}]`));
  }
  return out.slice(0, 5);
}
