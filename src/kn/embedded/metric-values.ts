import { z } from "zod";
import { addUnits, CALENDAR_UNITS, type CalendarUnit, MAX_MS, MIN_MS, startOf } from "../../core/calendar";
import type { Json } from "../../core/json";
import { text, zodText } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import type { MetricValue } from "../types";

// operators.ts reads the bounds under these names.

/** A trend longer than this many buckets is refused rather than computed. */
const MAX_BUCKETS = 5000;

/** What a timestamp out of MIN_MS..MAX_MS is told (here and operators' as_of). */
export const TIMESTAMP_RANGE = zodText(
  "must be a millisecond timestamp between 2000 and 2100",
  "必须是 2000 年到 2100 年之间的毫秒时间戳",
);

const timestamp = z
  .number()
  .int(zodText("must be an integer number of milliseconds", "必须是整数毫秒数"))
  .min(MIN_MS, TIMESTAMP_RANGE)
  .max(MAX_MS, TIMESTAMP_RANGE);

/** A metric's dynamic parameters, as the platform takes them (the resolver's rules on instant/step). */
export const metricParamsSchema = z
  .object({
    instant: z.boolean().default(false),
    start: timestamp,
    end: timestamp,
    step: z.enum(CALENDAR_UNITS as [CalendarUnit, ...CalendarUnit[]]).optional(),
    analysis_dimensions: z.array(z.string()).optional(),
    having_condition: z
      .object({
        field: z.literal("__value"),
        operation: z.enum(["==", "!=", ">", ">=", "<", "<=", "in", "not_in", "range", "out_range"]),
        value: z.union([z.number(), z.array(z.number())]),
      })
      .optional(),
    metrics: z
      .object({
        type: z.enum(["sameperiod", "proportion"]),
        sameperiod_config: z
          .object({
            method: z.array(z.enum(["growth_value", "growth_rate"])).default(["growth_value", "growth_rate"]),
            offset: z.number().int().min(1).default(1),
          })
          .optional(),
      })
      .optional(),
  })
  .passthrough()
  .superRefine((p, ctx) => {
    if (p.start > p.end)
      ctx.addIssue({ code: "custom", path: ["start"], message: zodText("must not be after end", "不能晚于 end") });
    if (p.instant && p.step !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["step"],
        message: zodText(
          "must be left out in an instant query (instant=true)",
          "即时查询（instant=true）不接受这个参数",
        ),
      });
    if (!p.instant && p.step === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["step"],
        message: zodText(
          "required in a trend query (instant=false): day, week, month, quarter or year",
          "趋势查询（instant=false）必须提供：day、week、month、quarter 或 year",
        ),
      });
  });

export interface MetricDefinition {
  property: string;
  unit_type: string;
  unit: string;
}

/**
 * Evaluates a metric logic property over one instance's time series: an
 * instant value (the sum over [start, end], reported at `end`) or a trend of
 * calendar buckets of `step` in `timeZone` (each bucket's sum; null where the
 * series has no point). Values are shaped as the platform's metric value.
 */
export function evaluateMetric(
  def: MetricDefinition,
  series: readonly (readonly [number, number | null])[],
  labels: Record<string, string>,
  rawParams: Json | undefined,
  timeZone: string,
): MetricValue {
  const parsed = safeParseBoth(metricParamsSchema, rawParams ?? {});
  if (!parsed.success) {
    const violations = violationsOf(parsed.error).map((v) => ({
      ...v,
      field: `dynamic_params.${def.property}.${v.field}`,
    }));
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_METRIC_PARAMS",
      message: text(
        `invalid dynamic_params for metric ${def.property}: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
        `指标 ${def.property} 的 dynamic_params 无效：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
      ),
      violations,
      hint: {
        message: text(
          "Give instant, start and end (ms); a trend (instant=false) also needs step: day|week|month|quarter|year.",
          "给出 instant、start 和 end（毫秒）；趋势查询（instant=false）还需要 step：day|week|month|quarter|year。",
        ),
      },
    });
  }
  const p = parsed.data;
  const sumBetween = (from: number, to: number) => {
    let sum: number | null = null;
    for (const [t, v] of series) if (t >= from && t <= to && v !== null) sum = (sum ?? 0) + v;
    return sum;
  };
  let times: number[];
  let values: (number | null)[];
  if (p.instant) {
    times = [p.end];
    values = [sumBetween(p.start, p.end)];
  } else {
    const step = p.step!;
    times = [];
    values = [];
    for (let b = startOf(step, p.start, timeZone); b <= p.end; ) {
      const next = addUnits(step, b, 1, timeZone);
      times.push(b);
      values.push(sumBetween(Math.max(b, p.start), Math.min(next - 1, p.end)));
      if (times.length > MAX_BUCKETS) {
        throw new ToolError({
          code: "invalid_argument",
          reason: "INVALID_METRIC_PARAMS",
          message: text(
            `metric ${def.property}: more than ${MAX_BUCKETS} ${step} buckets between start and end; use a larger step or a shorter range`,
            `指标 ${def.property}：start 与 end 之间有超过 ${MAX_BUCKETS} 个 ${step} 区间；请用更大的 step 或更短的时间范围`,
          ),
          violations: [
            {
              field: `dynamic_params.${def.property}.step`,
              description: text(`too many buckets (over ${MAX_BUCKETS})`, `区间太多（超过 ${MAX_BUCKETS} 个）`),
            },
          ],
        });
      }
      b = next;
    }
  }
  if (p.having_condition) values = values.map((v) => (v !== null && having(v, p.having_condition!) ? v : null));
  const row: MetricValue["datas"][number] & Record<string, Json> = { labels, times, values };
  if (p.metrics?.type === "proportion") {
    const total = values.reduce<number>((s, v) => s + (v ?? 0), 0);
    row["proportions"] = values.map((v) => (v === null || total === 0 ? null : v / total));
  } else if (p.metrics?.type === "sameperiod") {
    const { method, offset } = p.metrics.sameperiod_config ?? { method: ["growth_value", "growth_rate"], offset: 1 };
    const prev = (i: number) => (i - offset >= 0 ? values[i - offset]! : null);
    if (method.includes("growth_value"))
      row["growth_values"] = values.map((v, i) => (v === null || prev(i) === null ? null : v - prev(i)!));
    if (method.includes("growth_rate")) {
      row["growth_rates"] = values.map((v, i) => (v === null || !prev(i) ? null : (v - prev(i)!) / prev(i)!));
    }
  }
  return {
    model: { unit_type: def.unit_type, unit: def.unit },
    datas: [row],
    step: p.instant ? "" : p.step!,
    is_variable: false,
    is_calendar: !p.instant,
  };
}

function having(v: number, h: { operation: string; value: number | number[] }): boolean {
  const x = h.value;
  switch (h.operation) {
    case "==":
      return v === x;
    case "!=":
      return v !== x;
    case ">":
      return typeof x === "number" && v > x;
    case ">=":
      return typeof x === "number" && v >= x;
    case "<":
      return typeof x === "number" && v < x;
    case "<=":
      return typeof x === "number" && v <= x;
    case "in":
      return Array.isArray(x) && x.includes(v);
    case "not_in":
      return Array.isArray(x) && !x.includes(v);
    case "range":
      return Array.isArray(x) && x.length === 2 && v >= x[0]! && v < x[1]!;
    case "out_range":
      return Array.isArray(x) && x.length === 2 && (v < x[0]! || v >= x[1]!);
    default:
      return true;
  }
}
