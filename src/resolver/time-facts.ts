/**
 * The resolver's deterministic time pre-pass (issue 5, "Beyond the spec").
 * Before a metric's parameters go to the LLM, this reads what the request
 * settles about time without any judgement: explicit now_ms / start / end /
 * step / instant / timezone in additional_context, and common relative periods
 * in Chinese and English ("上个月", "近三个月", "last 7 days", "2024年Q1"),
 * computed from now_ms in the time zone with calendar-correct boundaries. The
 * resolver passes these to the LLM as facts it must use. Anything not settled
 * here stays undefined: the LLM fills it, this never guesses.
 */
import {
  addUnits,
  type CalendarUnit,
  daysInMonth,
  instantOf,
  isValidTimeZone,
  MAX_MS,
  MIN_MS,
  shiftUnits,
  startOf,
  wallClock,
} from "../core/calendar";
import { type Text, text } from "../errors/text";

export interface TimeFact {
  param: "now_ms" | "start" | "end" | "step" | "instant";
  value: number | string | boolean;
  /** the text it came from */
  source: string;
  /** which rule, e.g. "explicit", "上个月", "last N days" */
  rule: string;
}

export interface TimeFacts {
  /** The "now" used: request now_ms, else an explicit now_ms=… in additional_context, else the one passed in. */
  now_ms: number;
  /** The zone the periods were computed in: the request's, else a valid timezone in additional_context, else the default. */
  time_zone: string;
  start?: number;
  end?: number;
  step?: CalendarUnit;
  instant?: boolean;
  /** One per determined parameter, for debug output. */
  facts: TimeFact[];
  /** The explicit values in additional_context that name nothing usable (the resolver refuses them). */
  rejected: RejectedValue[];
}

/**
 * An explicit `key=value` (or top-level JSON key) in additional_context whose
 * value is no valid parameter: `step=hour`, `"start": 100`. Only values the
 * request would use are listed (a timezone or now_ms there yields to the
 * request's own field).
 */
export interface RejectedValue {
  param: ExplicitKey;
  /** The key as additional_context writes it ("step", "Start", "time_zone"). */
  key: string;
  /** The text it came from. */
  source: string;
  /** What the parameter must be, without its name (a violation names the key beside it). */
  problem: Text;
}

export interface TimeFactsInput {
  query: string;
  additionalContext: string;
  requestNowMs: number | undefined;
  serverNowMs: number;
  /** The request's own IANA zone: it beats a timezone named in additional_context. */
  requestTimeZone: string | undefined;
  /** The zone when neither names one; the caller validates it (a RangeError otherwise). */
  defaultTimeZone: string;
}

/** Longer text is cut before matching: relative-period words sit in the first sentences, and the regexes stay linear. */
const MAX_SCAN_CHARS = 4000;

/** A time outside the platform's window is no fact. */
const inRange = (ms: number) => Number.isInteger(ms) && ms >= MIN_MS && ms <= MAX_MS;

/** A value with where it came from, as reported in the facts. */
interface Sourced<T> {
  value: T;
  source: string;
  rule: string;
}

export function extractTimeFacts(input: TimeFactsInput): TimeFacts {
  const explicit = readJsonContext(input.additionalContext) ?? readFreeTextContext(input.additionalContext);
  // The words are read from the query first: it is what the user asked, and the
  // context may carry an unrelated period (explicit key=values still win).
  const query = scannable(input.query);
  const rest = scannable(explicit.rest);

  const rejected: RejectedValue[] = [];
  /** The explicit value of `param` read with `parse`; one given that names nothing is rejected, never guessed around. */
  const given = <T>(param: ExplicitKey, parse: (value: unknown) => T | undefined): Sourced<T> | undefined => {
    const raw = explicit.values[param];
    if (!raw) return undefined;
    const value = parse(raw.value);
    if (value === undefined) {
      rejected.push({ param, key: raw.key, source: raw.source, problem: PROBLEMS[param](raw.value) });
      return undefined;
    }
    return { value, source: raw.source, rule: "explicit" };
  };

  const timeZone =
    input.requestTimeZone ||
    given("timezone", (v) => (typeof v === "string" && isValidTimeZone(v.trim()) ? v.trim() : undefined))?.value ||
    input.defaultTimeZone;
  if (!isValidTimeZone(timeZone)) throw new RangeError(`unknown time zone ${JSON.stringify(timeZone)}`);

  const now = chooseNow(input, () => given("now_ms", (v) => toTimestamp(v, timeZone, false)));
  const clock: Clock = { now: now.value, timeZone };
  const result: TimeFacts = { now_ms: now.value, time_zone: timeZone, facts: [], rejected };
  const record = (param: TimeFact["param"], fact: Sourced<number | string | boolean>) =>
    result.facts.push({ param, ...fact });
  record("now_ms", now);

  const start = given("start", (v) => toTimestamp(v, timeZone, false));
  const end = given("end", (v) => toTimestamp(v, timeZone, true));
  if (start && end && start.value > end.value) {
    rejected.push({
      param: "start",
      key: explicit.values.start!.key,
      source: `${start.source}, ${end.source}`,
      problem: text("must not be after end", "不能晚于 end"),
    });
  }
  if (start || end) {
    // An explicit bound is the agent's decision; a period from the words must not be spliced onto it.
    if (start) {
      result.start = start.value;
      record("start", start);
    }
    if (end) {
      result.end = end.value;
      record("end", end);
    }
  } else {
    const found = findPeriod(query, clock) ?? findPeriod(rest, clock);
    if (found) {
      result.start = found.value.start;
      result.end = found.value.end;
      record("start", { ...found, value: found.value.start });
      record("end", { ...found, value: found.value.end });
    }
  }

  const mode = decideMode(
    { step: given("step", parseStep), instant: given("instant", parseBoolean) },
    {
      step: findWord(query, STEP_WORDS) ?? findWord(rest, STEP_WORDS),
      instant: findWord(query, INSTANT_WORDS) ?? findWord(rest, INSTANT_WORDS),
    },
  );
  if (mode.step) {
    result.step = mode.step.value;
    record("step", mode.step);
  }
  if (mode.instant) {
    result.instant = mode.instant.value;
    record("instant", mode.instant);
  }
  return result;
}

/** The window the platform takes timestamps in, as the rejection of one outside it says. */
const WINDOW = text(
  `between ${MIN_MS} (2000-01-01) and ${MAX_MS} (2100-01-01)`,
  `介于 ${MIN_MS}（2000-01-01）与 ${MAX_MS}（2100-01-01）之间`,
);

function timestampProblem(param: "now_ms" | "start" | "end"): (value: unknown) => Text {
  return (value) => {
    const n =
      typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    const looksLikeSeconds = n >= MIN_MS / 1000 && n <= MAX_MS / 1000;
    const seconds = text(
      looksLikeSeconds ? `; ${n} looks like seconds: multiply by 1000` : "",
      looksLikeSeconds ? `；${n} 看起来是秒：请乘以 1000` : "",
    );
    return param === "now_ms"
      ? text(`must be a millisecond timestamp ${WINDOW.en}${seconds.en}`, `必须是${WINDOW.zh}的毫秒时间戳${seconds.zh}`)
      : text(
          `must be a millisecond timestamp ${WINDOW.en}, or an ISO date such as 2024-03-01${seconds.en}`,
          `必须是${WINDOW.zh}的毫秒时间戳，或 2024-03-01 这样的 ISO 日期${seconds.zh}`,
        );
  };
}

/** What each explicit parameter must be, for its rejection. */
const PROBLEMS: Record<ExplicitKey, (value: unknown) => Text> = {
  now_ms: timestampProblem("now_ms"),
  start: timestampProblem("start"),
  end: timestampProblem("end"),
  step: () =>
    text(
      "must be one calendar unit: day, week, month, quarter or year (天/周/月/季度/年 are read too)",
      "必须是一个日历单位：day、week、month、quarter 或 year（也可写作 天/周/月/季度/年）",
    ),
  instant: () =>
    text(
      "must be true (one value at a moment) or false (a trend, with step)",
      "必须是 true（某一时刻的单个值）或 false（趋势，需同时给出 step）",
    ),
  timezone: () => text("must be an IANA time zone, e.g. Asia/Shanghai", "必须是 IANA 时区，例如 Asia/Shanghai"),
};

/** Whitespace runs collapsed (the English patterns' \s+ would otherwise backtrack quadratically) and the length capped. */
function scannable(text: string): string {
  return text.replace(/\s+/g, " ").slice(0, MAX_SCAN_CHARS);
}

/** The request's now_ms, else additional_context's (read only then: one the request overrides is not rejected), else the server's. */
function chooseNow(input: TimeFactsInput, fromContext: () => Sourced<number> | undefined): Sourced<number> {
  const request = input.requestNowMs;
  if (request !== undefined && inRange(request))
    return { value: request, source: `request now_ms=${request}`, rule: "request" };
  return fromContext() ?? { value: input.serverNowMs, source: "server clock", rule: "server" };
}

// ---------------------------------------------------------------------------
// Explicit parameters in additional_context: a JSON object, or the spec's free
// text "now_ms=1762996342241，timezone=Asia/Shanghai；趋势查询step=month/即时查询instant=true".

const EXPLICIT_KEYS = ["now_ms", "start", "end", "step", "instant", "timezone"] as const;
export type ExplicitKey = (typeof EXPLICIT_KEYS)[number];

interface RawValue {
  value: unknown;
  /** The key as written. */
  key: string;
  source: string;
}

interface ExplicitContext {
  values: Partial<Record<ExplicitKey, RawValue>>;
  /** The rest of additional_context, read for time expressions and words after the explicit pairs. */
  rest: string;
}

function explicitKey(name: string): ExplicitKey | undefined {
  const key = name.toLowerCase() === "time_zone" ? "timezone" : name.toLowerCase();
  return EXPLICIT_KEYS.find((k) => k === key);
}

/**
 * Only top-level keys are parameters: nested objects describe object instances,
 * whose own start/end fields are not the query's window. Their text is still
 * read for time expressions.
 */
function readJsonContext(text: string): ExplicitContext | undefined {
  if (!text.trimStart().startsWith("{")) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed)) return undefined;
  const values: ExplicitContext["values"] = {};
  const strings: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    const key = explicitKey(name);
    // null and "" are "not given", as elsewhere in the request.
    if (key && value !== null && !(typeof value === "string" && value.trim() === ""))
      values[key] ??= { value, key: name, source: `"${name}": ${clip(JSON.stringify(value))}` };
    else if (!key) collectStrings(value, strings);
  }
  return { values, rest: strings.join("\n") };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value's JSON cut short: a source is quoted back in errors. */
function clip(text: string | undefined): string {
  const t = text ?? "undefined";
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
}

function collectStrings(value: unknown, into: string[]): void {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, into);
  else if (isObject(value)) for (const v of Object.values(value)) collectStrings(v, into);
}

const PAIR_VALUE = [
  String.raw`\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})?)?`, // ISO date or date-time
  "[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)+", // IANA zone, the only value holding "/"
  "[A-Za-z0-9_.+-]+", // numbers, words, 1M
  "季度|星期|[天日周月季年]",
].join("|");
/** `key=value` or `key: value`, quotes allowed; the key may follow Chinese text ("即时查询instant=true") but not a letter ("restart="). */
const EXPLICIT_PAIR = new RegExp(
  String.raw`(?<![A-Za-z0-9_])["']?(now_ms|start|end|step|instant|time_?zone)["']?\s*[=:：]\s*["']?(${PAIR_VALUE})`,
  "gi",
);
const SEPARATOR = /[\s,，;；/、|。]/;

function readFreeTextContext(text: string): ExplicitContext {
  const values: ExplicitContext["values"] = {};
  let rest = "";
  let from = 0;
  for (const m of text.matchAll(EXPLICIT_PAIR)) {
    const key = explicitKey(m[1] ?? "");
    if (key) values[key] ??= { value: m[2], key: m[1] ?? key, source: m[0] };
    // A label glued to the key ("趋势查询step=month") names the pair: it is no
    // request for a trend, so it leaves the text with the pair.
    let cut = m.index;
    while (cut > from && !SEPARATOR.test(text[cut - 1] ?? "")) cut--;
    rest += `${text.slice(from, cut)}\n`;
    from = m.index + m[0].length;
  }
  return { values, rest: rest + text.slice(from) };
}

/** A ms timestamp, or an ISO date / date-time read in `timeZone` unless it carries an offset. */
function toTimestamp(value: unknown, timeZone: string, isEnd: boolean): number | undefined {
  let ms: number | undefined;
  if (typeof value === "number") ms = value;
  else if (typeof value === "string")
    ms = /^\d+$/.test(value.trim()) ? Number(value) : parseIsoDate(value.trim(), timeZone, isEnd);
  return ms !== undefined && inRange(ms) ? ms : undefined;
}

const ISO_DATE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A bare date as an end means the whole day: end=2024-03-31 reaches through March 31. */
function parseIsoDate(text: string, timeZone: string, isEnd: boolean): number | undefined {
  const m = ISO_DATE.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const milli = Number((m[7] ?? "").padEnd(3, "0"));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    return undefined;
  if (m[4] === undefined) {
    const midnight = instantOf(timeZone, year, month, day);
    return isEnd ? addUnits("day", midnight, 1, timeZone) - 1 : midnight;
  }
  const offset = m[8];
  if (offset === undefined) return instantOf(timeZone, year, month, day, hour, minute, second) + milli;
  const offsetMinutes =
    offset.toUpperCase() === "Z"
      ? 0
      : (offset.startsWith("-") ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(-2)));
  return Date.UTC(year, month - 1, day, hour, minute, second, milli) - offsetMinutes * 60_000;
}

const STEP_NAMES: Record<string, CalendarUnit> = {
  day: "day",
  d: "day",
  daily: "day",
  天: "day",
  日: "day",
  week: "week",
  w: "week",
  weekly: "week",
  周: "week",
  星期: "week",
  month: "month",
  monthly: "month",
  月: "month",
  quarter: "quarter",
  q: "quarter",
  quarterly: "quarter",
  季: "quarter",
  季度: "quarter",
  year: "year",
  y: "year",
  yearly: "year",
  年: "year",
};

/** day|week|month|quarter|year, 天/周/月/季度/年, or "1d"-style; "M" is a month, "m" a minute (no step). */
function parseStep(value: unknown): CalendarUnit | undefined {
  if (typeof value !== "string") return undefined;
  const name = value.trim().replace(/^1(?=[A-Za-z])/, "");
  return name === "M" ? "month" : STEP_NAMES[name.toLowerCase()];
}

function parseBoolean(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const text = value.trim().toLowerCase();
  return text === "true" ? true : text === "false" ? false : undefined;
}

// ---------------------------------------------------------------------------
// Time expressions: a list of rules, each a pattern and the period it names.

interface Clock {
  now: number;
  timeZone: string;
}

/** Both ends inclusive, in ms. */
interface Period {
  start: number;
  end: number;
}

interface PeriodRule {
  /** Reported as the fact's rule. */
  name: string;
  /** Global: every occurrence is a candidate. */
  pattern: RegExp;
  /** The period the match names, or undefined when it names none (2024年13月). */
  period(m: RegExpExecArray, clock: Clock): Period | undefined;
}

/** The whole `unit` starting at `start`. */
function whole(unit: CalendarUnit, start: number, clock: Clock): Period {
  return { start, end: addUnits(unit, start, 1, clock.timeZone) - 1 };
}

/** The `unit` `offset` units from the one holding now: 0 is the current one (cut at now later), -1 the last complete one. */
function relative(unit: CalendarUnit, offset: number): PeriodRule["period"] {
  return (_m, clock) =>
    whole(unit, addUnits(unit, startOf(unit, clock.now, clock.timeZone), offset, clock.timeZone), clock);
}

/** 上 (last) or 上上 (the one before) as the prefix of 上周 / 上个月 / 上季度; the 上 of 马上 ("at once") is none. */
const LAST = "(?<!马)(上?)上";

function previous(unit: CalendarUnit): PeriodRule["period"] {
  return (m, clock) => relative(unit, m[1] ? -2 : -1)(m, clock);
}

/** The year, month or day named by its fields; undefined when the calendar has no such month or day. */
function calendarPeriod(clock: Clock, year: number, month?: number, day?: number): Period | undefined {
  const tz = clock.timeZone;
  if (month === undefined) return whole("year", instantOf(tz, year, 1, 1), clock);
  if (!(month >= 1 && month <= 12)) return undefined;
  if (day === undefined) return whole("month", instantOf(tz, year, month, 1), clock);
  if (!(day >= 1 && day <= daysInMonth(year, month))) return undefined;
  return whole("day", instantOf(tz, year, month, day), clock);
}

function quarterPeriod(clock: Clock, year: number, quarter: number): Period {
  return whole("quarter", instantOf(clock.timeZone, year, quarter * 3 - 2, 1), clock);
}

function halfYear(clock: Clock, year: number, half: "上" | "下"): Period {
  const start = instantOf(clock.timeZone, year, half === "上" ? 1 : 7, 1);
  return { start, end: addUnits("month", start, 6, clock.timeZone) - 1 };
}

/** From the same wall-clock moment `n` units ago up to now; 半年 is six months. */
function rolling(unit: CalendarUnit, n: number, clock: Clock): Period | undefined {
  if (unit === "year" && n === 0.5)
    return { start: shiftUnits("month", clock.now, -6, clock.timeZone), end: clock.now };
  if (!Number.isInteger(n) || n < 1) return undefined;
  return { start: shiftUnits(unit, clock.now, -n, clock.timeZone), end: clock.now };
}

/** 今年 / 去年 / 前年 / 2024年; as a prefix, nothing means this year. */
const YEAR = String.raw`今年|去年|前年|(?<!\d)\d{4}\s*年`;
const YEAR_PREFIX = `(${YEAR})`;

function yearOf(prefix: string | undefined, clock: Clock): number {
  const current = wallClock(clock.now, clock.timeZone).year;
  if (prefix === undefined || prefix.startsWith("今")) return current;
  if (prefix.startsWith("去")) return current - 1;
  if (prefix.startsWith("前")) return current - 2;
  return Number.parseInt(prefix, 10);
}

const CN_DIGITS: Record<string, number> = { 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
const EN_NUMBERS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
const CN_NUMBER = "\\d+|[一二两三四五六七八九十]+";
const EN_NUMBER = `\\d+|${Object.keys(EN_NUMBERS).join("|")}`;

/** "7", "三", "十二", "二十", "两", "three", and 半 as one half; NaN for anything else. */
function countOf(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  if (text === "半") return 0.5;
  const english = EN_NUMBERS[text.toLowerCase()];
  if (english !== undefined) return english;
  const ten = text.indexOf("十");
  if (ten < 0) return CN_DIGITS[text] ?? NaN;
  const tens = ten === 0 ? 1 : (CN_DIGITS[text.slice(0, ten)] ?? NaN);
  const units = ten === text.length - 1 ? 0 : (CN_DIGITS[text.slice(ten + 1)] ?? NaN);
  return tens * 10 + units;
}

const CN_UNITS: Record<string, CalendarUnit> = {
  天: "day",
  日: "day",
  周: "week",
  星期: "week",
  月: "month",
  季度: "quarter",
  季: "quarter",
  年: "year",
};
const englishUnit = (word: string) => word.toLowerCase().replace(/s$/, "") as CalendarUnit;

const MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH_NAME =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";

const CN_DATE = String.raw`(?:${YEAR})\s*(?:\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?`;
const ISO_DAY_OR_MONTH = String.raw`(?<!\d)\d{4}[-/]\d{1,2}(?:[-/]\d{1,2})?`;
const RANGE_FROM = `${CN_DATE}|${ISO_DAY_OR_MONTH}`;
/** The end may drop the year ("2024年1月到3月") or be now ("2024年3月至今"). */
const RANGE_TO = String.raw`${RANGE_FROM}|\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?|今天?|现在|目前|now|today|date`;
const DATE_FIELDS = /^(?:(\d{4})\s*[年\-/]\s*)?(?:(\d{1,2})\s*[月\-/]?\s*(?:(\d{1,2})\s*[日号]?)?)?$/;
const NOW_WORDS = /^(?:今天?|现在|目前|now|today|date)$/i;
const NAMED_MONTH = new RegExp(`^(${MONTH_NAME})\\.?,?\\s*(\\d{4})$`, "i");

const monthNumber = (name: string) => MONTH_NAMES.indexOf(name.slice(0, 3).toLowerCase()) + 1;

/** A range end written as "2024年3月"-style fields: English month names, 今年 / 去年 / 前年 and bare years rewritten. */
function dateFields(text: string, clock: Clock): string {
  const named = NAMED_MONTH.exec(text);
  if (named) return `${named[2]}年${monthNumber(named[1] ?? "")}月`;
  const relativeYear = /^(今年|去年|前年)(.*)$/.exec(text);
  if (relativeYear) return `${yearOf(relativeYear[1], clock)}年${relativeYear[2]}`;
  return /^\d{4}$/.test(text) ? `${text}年` : text;
}

/** One end of a range as the day, month or year it names; `year` fills in a missing one. */
function rangeEnd(text: string, clock: Clock, year?: number): Period | undefined {
  const trimmed = text.trim();
  if (NOW_WORDS.test(trimmed)) return { start: clock.now, end: clock.now };
  const m = DATE_FIELDS.exec(dateFields(trimmed, clock));
  const y = m?.[1] !== undefined ? Number(m[1]) : year;
  if (!m || y === undefined) return undefined;
  return calendarPeriod(
    clock,
    y,
    m[2] === undefined ? undefined : Number(m[2]),
    m[3] === undefined ? undefined : Number(m[3]),
  );
}

const PERIOD_RULES: PeriodRule[] = [
  // "截至今天" is up to today, not today alone.
  { name: "今天", pattern: /(?<![至止到])(?:今天|今日)/g, period: relative("day", 0) },
  { name: "昨天", pattern: /昨天|昨日/g, period: relative("day", -1) },
  { name: "前天", pattern: /前天/g, period: relative("day", -2) },
  { name: "本周", pattern: /本周|这一?周|这个?星期|本星期/g, period: relative("week", 0) },
  { name: "上周", pattern: new RegExp(`${LAST}(?:一?周|一?个?星期)`, "g"), period: previous("week") },
  { name: "本月", pattern: /本月|这个?月/g, period: relative("month", 0) },
  { name: "上个月", pattern: new RegExp(`${LAST}一?个?月`, "g"), period: previous("month") },
  { name: "本季度", pattern: /本季度?|这一?个?季度/g, period: relative("quarter", 0) },
  { name: "上季度", pattern: new RegExp(`${LAST}一?个?季度`, "g"), period: previous("quarter") },
  { name: "今年", pattern: /今年|本年/g, period: relative("year", 0) },
  { name: "去年", pattern: /去年|上一年|上年度/g, period: relative("year", -1) },
  { name: "前年", pattern: /前年/g, period: relative("year", -2) },
  {
    name: "上半年/下半年",
    pattern: new RegExp(`${YEAR_PREFIX}?的?\\s*([上下])半年`, "g"),
    period: (m, c) => halfYear(c, yearOf(m[1], c), m[2] === "上" ? "上" : "下"),
  },
  {
    name: "最近N天/周/月/季度/年",
    // Not the 近 of 接近 / 将近 ("nearly"), nor of 附近.
    pattern: new RegExp(
      `(?:最近|(?<![接将附])近|过去)的?\\s*(${CN_NUMBER}|半)\\s*个?\\s*(天|日|周|星期|月|季度|季|年)`,
      "g",
    ),
    period: (m, c) => rolling(CN_UNITS[m[2] ?? ""] ?? "day", countOf(m[1] ?? ""), c),
  },
  { name: "YYYY年", pattern: /(?<!\d)(\d{4})\s*年/g, period: (m, c) => calendarPeriod(c, Number(m[1])) },
  {
    name: "YYYY年M月",
    pattern: new RegExp(`${YEAR_PREFIX}\\s*(\\d{1,2}|[一二三四五六七八九十]+)\\s*月`, "g"),
    period: (m, c) => calendarPeriod(c, yearOf(m[1], c), countOf(m[2] ?? "")),
  },
  {
    name: "YYYY年Q1",
    pattern: new RegExp(`${YEAR_PREFIX}\\s*(?:第?([一二三四1-4])\\s*季度|[Qq]([1-4])(?!\\d))`, "g"),
    period: (m, c) => quarterPeriod(c, yearOf(m[1], c), countOf(m[2] ?? m[3] ?? "")),
  },
  {
    name: "YYYY-MM",
    pattern: /(?<!\d)(\d{4})[-/](\d{1,2})(?!\d)/g,
    period: (m, c) => calendarPeriod(c, Number(m[1]), Number(m[2])),
  },
  {
    // Whether a lone date is a day, a start or an "as of" is for the LLM to
    // judge; the rule only claims the text so its month or year is not read as
    // a period of its own.
    name: "a lone date",
    pattern: new RegExp(
      `${YEAR_PREFIX}\\s*\\d{1,2}\\s*月\\s*\\d{1,2}\\s*[日号]|(?<!\\d)\\d{4}[-/]\\d{1,2}[-/]\\d{1,2}(?!\\d)`,
      "g",
    ),
    period: () => undefined,
  },
  {
    name: "date range",
    pattern: new RegExp(
      String.raw`(?:从|自|\bbetween\s+|\bfrom\s+)?(${RANGE_FROM})\s*(?:至|到|~|～|—|–|\bto\b|\band\b|\s-\s)\s*(${RANGE_TO})(?!\d)`,
      "gi",
    ),
    period: (m, c) => {
      const from = rangeEnd(m[1] ?? "", c);
      const to = from && rangeEnd(m[2] ?? "", c, wallClock(from.start, c.timeZone).year);
      return to && { start: from.start, end: to.end };
    },
  },
  {
    name: "since a date",
    pattern: new RegExp(
      String.raw`(?:自|从)?(${RANGE_FROM})\s*(?:以来|起|开始)|\bsince\s+(${RANGE_FROM}|(?:${MONTH_NAME})\.?,?\s*\d{4}|\d{4})(?!\d)`,
      "gi",
    ),
    period: (m, c) => {
      const from = rangeEnd(m[1] ?? m[2] ?? "", c);
      return from && { start: from.start, end: c.now };
    },
  },
  { name: "today", pattern: /\btoday\b/gi, period: relative("day", 0) },
  { name: "yesterday", pattern: /\byesterday\b/gi, period: relative("day", -1) },
  {
    name: "this week/month/quarter/year",
    pattern: /\b(?:this|current)\s+(week|month|quarter|year)\b/gi,
    period: (m, c) => relative(englishUnit(m[1] ?? ""), 0)(m, c),
  },
  {
    name: "last week/month/quarter/year",
    pattern: /\b(?:last|previous)\s+(week|month|quarter|year)\b/gi,
    period: (m, c) => relative(englishUnit(m[1] ?? ""), -1)(m, c),
  },
  {
    name: "last N days",
    // "past month" without a number is a rolling month; "last month" is the calendar one above.
    pattern: new RegExp(
      `\\b(?:(?:last|past|previous)\\s+(${EN_NUMBER})\\s+|past\\s+)(day|week|month|quarter|year)s?\\b`,
      "gi",
    ),
    period: (m, c) => rolling(englishUnit(m[2] ?? ""), m[1] === undefined ? 1 : countOf(m[1]), c),
  },
  {
    name: "Q1 2024",
    pattern: /\bQ([1-4])\s*(?:of\s+)?(\d{4})(?!\d)/gi,
    period: (m, c) => quarterPeriod(c, Number(m[2]), Number(m[1])),
  },
  {
    name: "2024 Q1",
    pattern: /(?<!\d)(\d{4})\s*-?\s*Q([1-4])(?!\d)/gi,
    period: (m, c) => quarterPeriod(c, Number(m[1]), Number(m[2])),
  },
  {
    name: "March 2024",
    pattern: new RegExp(`\\b(${MONTH_NAME})\\.?,?\\s*(\\d{4})(?!\\d)`, "gi"),
    period: (m, c) => calendarPeriod(c, Number(m[2]), monthNumber(m[1] ?? "")),
  },
  {
    name: "in 2024",
    // Not the year of "2024 Q1", "2024-03" or "2024年3月": their own rules read those.
    pattern: /\b(?:in|during|for)\s+(?:the\s+year\s+)?(\d{4})(?!\d|\s*年|\s*-?\s*Q[1-4]|[-/]\d)/gi,
    period: (m, c) => calendarPeriod(c, Number(m[1])),
  },
];

/**
 * A period as a fact: one not begun yet, or reaching outside the platform's
 * range, names nothing; one still running ends now.
 */
function settle(period: Period | undefined, clock: Clock): Period | undefined {
  if (!period || !(period.start <= clock.now)) return undefined;
  const end = Math.min(period.end, clock.now);
  return inRange(period.start) && inRange(end) && period.start <= end ? { start: period.start, end } : undefined;
}

/**
 * The first period named in `text`. Candidates go by position, the longer
 * first where two start together ("2024年3月" before "2024年"); text a
 * candidate claimed, even one naming nothing (2024年13月), is not read again.
 */
function findPeriod(text: string, clock: Clock): Sourced<Period> | undefined {
  const candidates: { rule: PeriodRule; m: RegExpExecArray }[] = [];
  for (const rule of PERIOD_RULES) {
    // exec rather than matchAll, which copies the regex on every call: this runs on every request.
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(text); m; m = rule.pattern.exec(text)) candidates.push({ rule, m });
  }
  candidates.sort((a, b) => a.m.index - b.m.index || b.m[0].length - a.m[0].length);
  let claimedTo = 0;
  for (const { rule, m } of candidates) {
    if (m.index < claimedTo) continue;
    const period = settle(rule.period(m, clock), clock);
    if (period) return { value: period, source: m[0].trim(), rule: rule.name };
    claimedTo = m.index + m[0].length;
  }
  return undefined;
}

// ---------------------------------------------------------------------------
// step and instant from words.

interface WordRule<T> {
  name: string;
  pattern: RegExp;
  value: T;
}

const STEP_WORDS: WordRule<CalendarUnit>[] = [
  // Not 按日 ("按日期排序" is sorting by date).
  { name: "每天/按天", pattern: /每天|每日|按天|逐日|日度|\bdaily\b|\b(?:per|by|each)\s+day\b/i, value: "day" },
  { name: "每周/按周", pattern: /每周|每个?星期|按周|逐周|周度|\bweekly\b|\b(?:per|by|each)\s+week\b/i, value: "week" },
  {
    name: "每月/按月",
    pattern: /每个?月|按月|逐月|月度|各月|\bmonthly\b|\b(?:per|by|each)\s+month\b/i,
    value: "month",
  },
  {
    name: "每季度/按季度",
    pattern: /每个?季度?|按季度?|逐季|各季度|季度趋势|\bquarterly\b|\b(?:per|by|each)\s+quarter\b/i,
    value: "quarter",
  },
  // Not the 年度 of "2024年度" or "本年度", which name a year rather than a step.
  {
    name: "每年/按年",
    pattern: /每年|按年|(?<![\d本今上去前])年度|历年|逐年|\b(?:yearly|annually)\b|\b(?:per|by|each)\s+year\b/i,
    value: "year",
  },
];

const INSTANT_WORDS: WordRule<boolean>[] = [
  { name: "趋势/trend", pattern: /趋势|变化|走势|\btrends?\b|\bover\s+time\b/i, value: false },
  {
    name: "即时/instant",
    pattern:
      /即时|当前值|截[至止](?:目前|今天|今日|现在)|\binstantaneous\b|\binstant\s+(?:value|query)\b|\bcurrent\s+value\b|\bas\s+of\s+now\b/i,
    value: true,
  },
];

/** The word rule matching first in `text` (the longer match where two start together). */
function findWord<T>(text: string, rules: WordRule<T>[]): Sourced<T> | undefined {
  let best: { rule: WordRule<T>; m: RegExpExecArray } | undefined;
  for (const rule of rules) {
    const m = rule.pattern.exec(text);
    if (m && (!best || m.index < best.m.index || (m.index === best.m.index && m[0].length > best.m[0].length)))
      best = { rule, m };
  }
  return best && { value: best.rule.value, source: best.m[0], rule: best.rule.name };
}

interface Mode {
  step?: Sourced<CalendarUnit> | undefined;
  instant?: Sourced<boolean> | undefined;
}

const impliedBy = (step: Sourced<CalendarUnit>): Sourced<boolean> => ({
  value: false,
  source: step.source,
  rule: "implied by step",
});

/** Explicit values beat words; a step means a trend (instant=false); instant=true takes no step. */
function decideMode(given: Mode, words: Mode): Mode {
  if (given.instant?.value === true && given.step) {
    // The spec's own example "趋势查询step=month/即时查询instant=true" offers the
    // two forms for the query to pick from: its words pick, and without any
    // neither is a fact.
    const choice = words.instant ?? (words.step && impliedBy(words.step));
    if (!choice) return {};
    return choice.value ? { instant: given.instant } : { step: given.step, instant: choice };
  }
  const instant =
    given.instant ?? (given.step && impliedBy(given.step)) ?? words.instant ?? (words.step && impliedBy(words.step));
  const step = given.step ?? (instant?.value === true ? undefined : words.step);
  return { step, instant };
}
