import { describe, expect, it } from "vitest";
import { extractTimeFacts, type TimeFacts } from "../../src/resolver/time-facts";

const SHANGHAI = "Asia/Shanghai";
const NEW_YORK = "America/New_York";
/** Sunday 2026-11-22 10:30 in Shanghai: the week began on Monday 11-16. */
const NOW = "2026-11-22T10:30:00.000+08:00";
const NOW_MS = Date.parse(NOW);

/** `ms` as an ISO string in `timeZone`'s offset at that instant, written independently of calendar.ts. */
function isoIn(ms: number | undefined, timeZone: string): string | undefined {
  if (ms === undefined) return undefined;
  const name =
    new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: "longOffset" })
      .formatToParts(ms)
      .find((p) => p.type === "timeZoneName")?.value ?? "GMT";
  const offset = name === "GMT" ? "+00:00" : name.slice(3);
  const minutes = (offset.startsWith("-") ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
  return new Date(ms + minutes * 60_000).toISOString().replace("Z", offset);
}

/** First and last millisecond of a Shanghai day. */
const day = (date: string) => `${date}T00:00:00.000+08:00`;
const last = (date: string) => `${date}T23:59:59.999+08:00`;

function run(opts: {
  query?: string;
  context?: string;
  now?: string;
  requestNowMs?: number | undefined;
  serverNowMs?: number;
  zone?: string;
  requestZone?: string;
}): TimeFacts {
  return extractTimeFacts({
    query: opts.query ?? "",
    additionalContext: opts.context ?? "",
    requestNowMs: "requestNowMs" in opts ? opts.requestNowMs : Date.parse(opts.now ?? NOW),
    serverNowMs: opts.serverNowMs ?? Date.parse(opts.now ?? NOW),
    requestTimeZone: opts.requestZone,
    defaultTimeZone: opts.zone ?? SHANGHAI,
  });
}

/** start/end as ISO strings, with the source and rule of their facts. */
function period(r: TimeFacts) {
  const zone = r.time_zone;
  const fact = r.facts.find((f) => f.param === "start");
  const endFact = r.facts.find((f) => f.param === "end");
  expect(endFact && { source: endFact.source, rule: endFact.rule }).toEqual(
    fact && { source: fact.source, rule: fact.rule },
  );
  return { start: isoIn(r.start, zone), end: isoIn(r.end, zone), source: fact?.source, rule: fact?.rule };
}

interface PeriodRow {
  query: string;
  start: string;
  end: string;
  rule: string;
  /** The text the fact names; the whole query when absent. */
  source?: string;
}

const CHINESE: PeriodRow[] = [
  { query: "今天", start: day("2026-11-22"), end: NOW, rule: "今天" },
  { query: "今日新增", start: day("2026-11-22"), end: NOW, rule: "今天", source: "今日" },
  { query: "昨天", start: day("2026-11-21"), end: last("2026-11-21"), rule: "昨天" },
  { query: "前天", start: day("2026-11-20"), end: last("2026-11-20"), rule: "前天" },
  { query: "本周", start: day("2026-11-16"), end: NOW, rule: "本周" },
  { query: "这周", start: day("2026-11-16"), end: NOW, rule: "本周" },
  { query: "上周", start: day("2026-11-09"), end: last("2026-11-15"), rule: "上周" },
  { query: "上个星期", start: day("2026-11-09"), end: last("2026-11-15"), rule: "上周" },
  { query: "上上周", start: day("2026-11-02"), end: last("2026-11-08"), rule: "上周" },
  { query: "本月", start: day("2026-11-01"), end: NOW, rule: "本月" },
  { query: "这个月", start: day("2026-11-01"), end: NOW, rule: "本月" },
  { query: "上个月", start: day("2026-10-01"), end: last("2026-10-31"), rule: "上个月" },
  { query: "上月", start: day("2026-10-01"), end: last("2026-10-31"), rule: "上个月" },
  { query: "上上个月", start: day("2026-09-01"), end: last("2026-09-30"), rule: "上个月" },
  { query: "今年", start: day("2026-01-01"), end: NOW, rule: "今年" },
  { query: "本年度", start: day("2026-01-01"), end: NOW, rule: "今年", source: "本年" },
  { query: "去年", start: day("2025-01-01"), end: last("2025-12-31"), rule: "去年" },
  { query: "前年", start: day("2024-01-01"), end: last("2024-12-31"), rule: "前年" },
  { query: "本季度", start: day("2026-10-01"), end: NOW, rule: "本季度" },
  { query: "上季度", start: day("2026-07-01"), end: last("2026-09-30"), rule: "上季度" },
  { query: "上半年", start: day("2026-01-01"), end: last("2026-06-30"), rule: "上半年/下半年" },
  { query: "下半年", start: day("2026-07-01"), end: NOW, rule: "上半年/下半年" },
  { query: "2024年上半年", start: day("2024-01-01"), end: last("2024-06-30"), rule: "上半年/下半年" },
  { query: "2024年下半年", start: day("2024-07-01"), end: last("2024-12-31"), rule: "上半年/下半年" },
  { query: "去年下半年", start: day("2025-07-01"), end: last("2025-12-31"), rule: "上半年/下半年" },
  { query: "最近7天", start: "2026-11-15T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "近30日", start: "2026-10-23T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "过去两周", start: "2026-11-08T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "近三个月", start: "2026-08-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "最近十二个月", start: "2025-11-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "最近2个季度", start: "2026-05-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "近半年", start: "2026-05-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "近一年", start: "2025-11-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "过去3年", start: "2023-11-22T10:30:00.000+08:00", end: NOW, rule: "最近N天/周/月/季度/年" },
  { query: "2024年", start: day("2024-01-01"), end: last("2024-12-31"), rule: "YYYY年" },
  { query: "2024年度销售额", start: day("2024-01-01"), end: last("2024-12-31"), rule: "YYYY年", source: "2024年" },
  { query: "2026年", start: day("2026-01-01"), end: NOW, rule: "YYYY年" },
  { query: "2024年3月", start: day("2024-03-01"), end: last("2024-03-31"), rule: "YYYY年M月" },
  { query: "2024年十二月", start: day("2024-12-01"), end: last("2024-12-31"), rule: "YYYY年M月" },
  { query: "去年3月", start: day("2025-03-01"), end: last("2025-03-31"), rule: "YYYY年M月" },
  { query: "2024年Q1", start: day("2024-01-01"), end: last("2024-03-31"), rule: "YYYY年Q1" },
  { query: "2024年第一季度", start: day("2024-01-01"), end: last("2024-03-31"), rule: "YYYY年Q1" },
  { query: "2024年第四季度", start: day("2024-10-01"), end: last("2024-12-31"), rule: "YYYY年Q1" },
  { query: "今年第三季度", start: day("2026-07-01"), end: last("2026-09-30"), rule: "YYYY年Q1" },
  { query: "2024-03", start: day("2024-03-01"), end: last("2024-03-31"), rule: "YYYY-MM" },
  { query: "2024/02", start: day("2024-02-01"), end: last("2024-02-29"), rule: "YYYY-MM" },
  { query: "2024-01-01 至 2024-03-31", start: day("2024-01-01"), end: last("2024-03-31"), rule: "date range" },
  { query: "2024年1月1日到2024年3月31日", start: day("2024-01-01"), end: last("2024-03-31"), rule: "date range" },
  { query: "从2023年到2024年", start: day("2023-01-01"), end: last("2024-12-31"), rule: "date range" },
  { query: "2024年1月到3月", start: day("2024-01-01"), end: last("2024-03-31"), rule: "date range" },
  { query: "2026年3月至今", start: day("2026-03-01"), end: NOW, rule: "date range" },
  { query: "2026-11-01 ~ 2026-12-31", start: day("2026-11-01"), end: NOW, rule: "date range" },
  { query: "2024年3月以来", start: day("2024-03-01"), end: NOW, rule: "since a date" },
  { query: "自2025-06起", start: day("2025-06-01"), end: NOW, rule: "since a date" },
];

const ENGLISH: PeriodRow[] = [
  { query: "today", start: day("2026-11-22"), end: NOW, rule: "today" },
  { query: "Yesterday", start: day("2026-11-21"), end: last("2026-11-21"), rule: "yesterday" },
  { query: "this week", start: day("2026-11-16"), end: NOW, rule: "this week/month/quarter/year" },
  { query: "this month", start: day("2026-11-01"), end: NOW, rule: "this week/month/quarter/year" },
  { query: "this quarter", start: day("2026-10-01"), end: NOW, rule: "this week/month/quarter/year" },
  { query: "this year", start: day("2026-01-01"), end: NOW, rule: "this week/month/quarter/year" },
  { query: "last week", start: day("2026-11-09"), end: last("2026-11-15"), rule: "last week/month/quarter/year" },
  { query: "last month", start: day("2026-10-01"), end: last("2026-10-31"), rule: "last week/month/quarter/year" },
  { query: "last quarter", start: day("2026-07-01"), end: last("2026-09-30"), rule: "last week/month/quarter/year" },
  { query: "last year", start: day("2025-01-01"), end: last("2025-12-31"), rule: "last week/month/quarter/year" },
  { query: "last 7 days", start: "2026-11-15T10:30:00.000+08:00", end: NOW, rule: "last N days" },
  {
    query: "the last two weeks",
    start: "2026-11-08T10:30:00.000+08:00",
    end: NOW,
    rule: "last N days",
    source: "last two weeks",
  },
  { query: "past 3 months", start: "2026-08-22T10:30:00.000+08:00", end: NOW, rule: "last N days" },
  { query: "past 2 quarters", start: "2026-05-22T10:30:00.000+08:00", end: NOW, rule: "last N days" },
  { query: "last 5 years", start: "2021-11-22T10:30:00.000+08:00", end: NOW, rule: "last N days" },
  {
    query: "over the past year",
    start: "2025-11-22T10:30:00.000+08:00",
    end: NOW,
    rule: "last N days",
    source: "past year",
  },
  { query: "Q1 2024", start: day("2024-01-01"), end: last("2024-03-31"), rule: "Q1 2024" },
  { query: "2024 Q3", start: day("2024-07-01"), end: last("2024-09-30"), rule: "2024 Q1" },
  { query: "in 2024 Q2", start: day("2024-04-01"), end: last("2024-06-30"), rule: "2024 Q1", source: "2024 Q2" },
  { query: "March 2024", start: day("2024-03-01"), end: last("2024-03-31"), rule: "March 2024" },
  {
    query: "sales for Sep 2025",
    start: day("2025-09-01"),
    end: last("2025-09-30"),
    rule: "March 2024",
    source: "Sep 2025",
  },
  { query: "revenue in 2024", start: day("2024-01-01"), end: last("2024-12-31"), rule: "in 2024", source: "in 2024" },
  { query: "between 2024-01-01 and 2024-03-31", start: day("2024-01-01"), end: last("2024-03-31"), rule: "date range" },
  { query: "from 2024-02-01 to 2024-02-29", start: day("2024-02-01"), end: last("2024-02-29"), rule: "date range" },
  { query: "from 2024-01 to today", start: day("2024-01-01"), end: NOW, rule: "date range" },
  {
    query: "trend since March 2024",
    start: day("2024-03-01"),
    end: NOW,
    rule: "since a date",
    source: "since March 2024",
  },
  { query: "since 2025", start: day("2025-01-01"), end: NOW, rule: "since a date" },
];

describe("extractTimeFacts: time expressions (now 2026-11-22 10:30 Asia/Shanghai)", () => {
  it.each(CHINESE)("$query", ({ query, start, end, rule, source }) => {
    expect(period(run({ query }))).toEqual({ start, end, rule, source: source ?? query });
  });

  it.each(ENGLISH)("$query", ({ query, start, end, rule, source }) => {
    expect(period(run({ query }))).toEqual({ start, end, rule, source: source ?? query });
  });
});

describe("extractTimeFacts: calendar edges and other zones", () => {
  it.each([
    // Rolling windows keep the wall-clock time and clamp to the month's last day.
    {
      query: "近三个月",
      now: "2026-05-31T10:00:00+08:00",
      zone: SHANGHAI,
      start: "2026-02-28T10:00:00.000+08:00",
      end: "2026-05-31T10:00:00.000+08:00",
    },
    {
      query: "最近1个月",
      now: "2026-03-31T10:00:00+08:00",
      zone: SHANGHAI,
      start: "2026-02-28T10:00:00.000+08:00",
      end: "2026-03-31T10:00:00.000+08:00",
    },
    {
      query: "近一年",
      now: "2028-02-29T10:00:00+08:00",
      zone: SHANGHAI,
      start: "2027-02-28T10:00:00.000+08:00",
      end: "2028-02-29T10:00:00.000+08:00",
    },
    {
      query: "上个月",
      now: "2026-03-15T09:00:00+08:00",
      zone: SHANGHAI,
      start: day("2026-02-01"),
      end: last("2026-02-28"),
    },
    {
      query: "上个月",
      now: "2026-01-10T09:00:00+08:00",
      zone: SHANGHAI,
      start: day("2025-12-01"),
      end: last("2025-12-31"),
    },
    {
      query: "上季度",
      now: "2026-02-10T09:00:00+08:00",
      zone: SHANGHAI,
      start: day("2025-10-01"),
      end: last("2025-12-31"),
    },
    {
      query: "本周",
      now: "2026-11-16T08:00:00+08:00",
      zone: SHANGHAI,
      start: day("2026-11-16"),
      end: "2026-11-16T08:00:00.000+08:00",
    },
    // New York leaves daylight saving time on 2026-11-01.
    {
      query: "上个月",
      now: "2026-11-22T10:30:00-05:00",
      zone: NEW_YORK,
      start: "2026-10-01T00:00:00.000-04:00",
      end: "2026-10-31T23:59:59.999-04:00",
    },
    {
      query: "本月",
      now: "2026-11-22T10:30:00-05:00",
      zone: NEW_YORK,
      start: "2026-11-01T00:00:00.000-04:00",
      end: "2026-11-22T10:30:00.000-05:00",
    },
    {
      query: "上周",
      now: "2026-11-03T12:00:00-05:00",
      zone: NEW_YORK,
      start: "2026-10-26T00:00:00.000-04:00",
      end: "2026-11-01T23:59:59.999-05:00",
    },
    {
      query: "今天",
      now: "2026-11-01T12:00:00-05:00",
      zone: NEW_YORK,
      start: "2026-11-01T00:00:00.000-04:00",
      end: "2026-11-01T12:00:00.000-05:00",
    },
    {
      query: "最近7天",
      now: "2026-11-05T10:00:00-05:00",
      zone: NEW_YORK,
      start: "2026-10-29T10:00:00.000-04:00",
      end: "2026-11-05T10:00:00.000-05:00",
    },
    {
      query: "last 3 months",
      now: "2026-03-20T12:00:00-04:00",
      zone: NEW_YORK,
      start: "2025-12-20T12:00:00.000-05:00",
      end: "2026-03-20T12:00:00.000-04:00",
    },
    {
      query: "今年",
      now: "2026-07-04T09:00:00-04:00",
      zone: NEW_YORK,
      start: "2026-01-01T00:00:00.000-05:00",
      end: "2026-07-04T09:00:00.000-04:00",
    },
    {
      query: "2024-03-01 至 2024-03-31",
      now: "2026-07-04T09:00:00-04:00",
      zone: NEW_YORK,
      start: "2024-03-01T00:00:00.000-05:00",
      end: "2024-03-31T23:59:59.999-04:00",
    },
  ])("$query at $now in $zone", ({ query, now, zone, start, end }) => {
    const r = run({ query, now, zone });
    expect({ zone: r.time_zone, start: isoIn(r.start, zone), end: isoIn(r.end, zone) }).toEqual({ zone, start, end });
  });
});

describe("extractTimeFacts: text that names no period", () => {
  it.each([
    { query: "各公司的注册资本是多少", why: "no time at all" },
    { query: "2101年", why: "after 2100" },
    { query: "2027年", why: "not begun yet" },
    { query: "1999年", why: "before 2000" },
    { query: "2024年13月", why: "no 13th month, and not read as 2024 instead" },
    { query: "2024-02-30 至 2024-03-31", why: "no February 30th" },
    { query: "2024-03-31 至 2024-01-01", why: "ends before it starts" },
    { query: "下半年", why: "not begun yet in March", now: "2026-03-01T10:00:00+08:00" },
    { query: "2024年3月1日的数据", why: "a lone date is for the LLM, and not March" },
    { query: "截至2024-03-01的累计数", why: "a lone ISO date, not the month 2024-03" },
    { query: "最近0天", why: "zero days" },
    { query: "近半个月", why: "半 only counts years" },
    { query: "接近3年的项目", why: "接近 is 'nearly', not 近" },
    { query: "马上月底了", why: "马上 is 'at once', not 上月" },
    { query: "截至今天的累计", why: "up to today, not today" },
    { query: "this weekend", why: "not this week" },
    { query: "since 2027", why: "not begun yet" },
    { query: "按日期排序", why: "no period" },
  ])("$query: $why", ({ query, now }) => {
    const r = run({ query, now });
    expect({
      start: r.start,
      end: r.end,
      facts: r.facts.map((f) => f.param).filter((p) => p === "start" || p === "end"),
    }).toEqual({
      start: undefined,
      end: undefined,
      facts: [],
    });
  });

  it("reports nothing but now when nothing is determined", () => {
    const r = run({
      query: "各公司的注册资本是多少",
      context: "company_id=company_000001，registered_capital=2000000",
    });
    expect(r).toEqual({
      now_ms: NOW_MS,
      time_zone: SHANGHAI,
      facts: [{ param: "now_ms", value: NOW_MS, source: `request now_ms=${NOW_MS}`, rule: "request" }],
      rejected: [],
    });
  });
});

describe("extractTimeFacts: the first expression wins", () => {
  it.each([
    { query: "对比去年和今年", context: "", start: day("2025-01-01"), rule: "去年" },
    { query: "2101年和去年", context: "", start: day("2025-01-01"), rule: "去年" },
    { query: "今年上半年", context: "", start: day("2026-01-01"), rule: "上半年/下半年" },
    { query: "今年", context: "统计口径：上个月", start: day("2026-01-01"), rule: "今年" },
    {
      query: "上个月",
      context: '{"object_context": {"company": "c1", "remark": "看去年"}}',
      start: day("2026-10-01"),
      rule: "上个月",
    },
    { query: "审批数", context: "统计口径：上个月", start: day("2026-10-01"), rule: "上个月" },
  ])("$query with context $context → $rule", ({ query, context, start, rule }) => {
    expect(period(run({ query, context }))).toMatchObject({ start, rule });
  });
});

describe("extractTimeFacts: step and instant from words", () => {
  it.each([
    ...["每天", "每日", "按天", "逐日", "日度", "daily", "per day"].map((w) => ({
      query: `${w}的新增数量`,
      step: "day",
      instant: false,
      rule: "每天/按天",
    })),
    ...["每周", "按周", "周度", "weekly"].map((w) => ({
      query: `${w}的新增数量`,
      step: "week",
      instant: false,
      rule: "每周/按周",
    })),
    ...["每月", "按月", "逐月", "月度", "各月", "每个月", "monthly", "per month"].map((w) => ({
      query: `${w}的新增数量`,
      step: "month",
      instant: false,
      rule: "每月/按月",
    })),
    ...["每季度", "按季度", "quarterly"].map((w) => ({
      query: `${w}的新增数量`,
      step: "quarter",
      instant: false,
      rule: "每季度/按季度",
    })),
    ...["每年", "按年", "年度", "历年", "逐年", "yearly"].map((w) => ({
      query: `${w}的新增数量`,
      step: "year",
      instant: false,
      rule: "每年/按年",
    })),
  ])("$query → step $step", ({ query, step, instant, rule }) => {
    const r = run({ query });
    expect({ step: r.step, instant: r.instant }).toEqual({ step, instant });
    expect(r.facts.filter((f) => f.param !== "now_ms")).toEqual([
      { param: "step", value: step, source: query.replace("的新增数量", ""), rule },
      { param: "instant", value: false, source: query.replace("的新增数量", ""), rule: "implied by step" },
    ]);
  });

  it.each([
    { query: "审批数量的趋势", instant: false, source: "趋势" },
    { query: "注册资本的变化", instant: false, source: "变化" },
    { query: "销量走势", instant: false, source: "走势" },
    { query: "approval trend", instant: false, source: "trend" },
    { query: "approvals over time", instant: false, source: "over time" },
    { query: "即时审批数", instant: true, source: "即时" },
    { query: "注册资本当前值", instant: true, source: "当前值" },
    { query: "截至目前的总数", instant: true, source: "截至目前" },
    { query: "the instant value", instant: true, source: "instant value" },
  ])("$query → instant $instant", ({ query, instant, source }) => {
    const r = run({ query });
    expect({ step: r.step, instant: r.instant }).toEqual({ step: undefined, instant });
    expect(r.facts.find((f) => f.param === "instant")).toEqual({
      param: "instant",
      value: instant,
      source,
      rule: instant ? "即时/instant" : "趋势/trend",
    });
  });

  it.each([
    { query: "季度趋势", step: "quarter", instant: false },
    { query: "近半年每月的审批趋势", step: "month", instant: false },
    { query: "每月的当前值", step: undefined, instant: true },
    { query: "2024年度销售额", step: undefined, instant: undefined },
    { query: "本年度销售额", step: undefined, instant: undefined },
    { query: "按日期排序", step: undefined, instant: undefined },
  ])("$query → step $step, instant $instant", ({ query, step, instant }) => {
    const r = run({ query });
    expect({ step: r.step, instant: r.instant }).toEqual({ step, instant });
  });
});

// The spec's free-text form, verbatim from §5.2.
const SPEC_CONTEXT =
  "company_id=company_000001，registered_capital=2000000；registered_capital>1000000；now_ms=1762996342241，timezone=Asia/Shanghai；趋势查询step=month/即时查询instant=true";
const SPEC_NOW = 1762996342241; // 2025-11-13T09:12:22.241+08:00

describe("extractTimeFacts: explicit parameters in additional_context", () => {
  it("reads the spec's free text: now_ms and the zone win, the query's words pick trend over instant", () => {
    const r = run({
      query: "近三个月每月审批数量的变化趋势",
      context: SPEC_CONTEXT,
      requestNowMs: undefined,
      serverNowMs: NOW_MS,
      zone: "UTC",
    });
    expect(r).toEqual({
      now_ms: SPEC_NOW,
      time_zone: SHANGHAI,
      start: Date.parse("2025-08-13T09:12:22.241+08:00"),
      end: SPEC_NOW,
      step: "month",
      instant: false,
      facts: [
        { param: "now_ms", value: SPEC_NOW, source: "now_ms=1762996342241", rule: "explicit" },
        {
          param: "start",
          value: Date.parse("2025-08-13T09:12:22.241+08:00"),
          source: "近三个月",
          rule: "最近N天/周/月/季度/年",
        },
        { param: "end", value: SPEC_NOW, source: "近三个月", rule: "最近N天/周/月/季度/年" },
        { param: "step", value: "month", source: "step=month", rule: "explicit" },
        { param: "instant", value: false, source: "变化", rule: "趋势/trend" },
      ],
      rejected: [],
    });
  });

  it("reads the spec's free text: instant words pick instant=true and drop the step", () => {
    const r = run({ query: "截至目前的审批药品总数", context: SPEC_CONTEXT, requestNowMs: undefined });
    expect({ step: r.step, instant: r.instant }).toEqual({ step: undefined, instant: true });
    expect(r.facts.find((f) => f.param === "instant")).toEqual({
      param: "instant",
      value: true,
      source: "instant=true",
      rule: "explicit",
    });
  });

  it("reads the spec's free text: without words either way neither step nor instant is a fact", () => {
    const r = run({ query: "审批药品总数", context: SPEC_CONTEXT, requestNowMs: undefined });
    expect({ step: r.step, instant: r.instant, params: r.facts.map((f) => f.param) }).toEqual({
      step: undefined,
      instant: undefined,
      params: ["now_ms"],
    });
  });

  it("reads start/end as ISO dates in the zone, the end date through its last millisecond, and 1M as month", () => {
    const r = run({ context: "start=2024-03-01, end=2024-03-31; step=1M; instant=false" });
    expect({ start: isoIn(r.start, SHANGHAI), end: isoIn(r.end, SHANGHAI), step: r.step, instant: r.instant }).toEqual({
      start: day("2024-03-01"),
      end: last("2024-03-31"),
      step: "month",
      instant: false,
    });
    expect(r.facts.slice(1)).toEqual([
      { param: "start", value: r.start, source: "start=2024-03-01", rule: "explicit" },
      { param: "end", value: r.end, source: "end=2024-03-31", rule: "explicit" },
      { param: "step", value: "month", source: "step=1M", rule: "explicit" },
      { param: "instant", value: false, source: "instant=false", rule: "explicit" },
    ]);
  });

  it("reads ISO date-times in the zone, or at their own offset", () => {
    const r = run({ context: "start=2024-03-01T08:00:00，end=2024-03-01T18:30:00.5" });
    expect([isoIn(r.start, SHANGHAI), isoIn(r.end, SHANGHAI)]).toEqual([
      "2024-03-01T08:00:00.000+08:00",
      "2024-03-01T18:30:00.500+08:00",
    ]);
    const z = run({ context: "start=2024-03-01T08:00:00Z end=2024-03-01T08:00:00-05:00" });
    expect([isoIn(z.start, SHANGHAI), isoIn(z.end, SHANGHAI)]).toEqual([
      "2024-03-01T16:00:00.000+08:00",
      "2024-03-01T21:00:00.000+08:00",
    ]);
  });

  it("takes newlines, colons, full-width separators and Chinese step names", () => {
    const r = run({ context: "start: 1709251200000\nend：1711929599999；step: 季度" });
    expect({ start: r.start, end: r.end, step: r.step, instant: r.instant }).toEqual({
      start: 1709251200000,
      end: 1711929599999,
      step: "quarter",
      instant: false,
    });
    expect(r.facts.find((f) => f.param === "instant")).toEqual({
      param: "instant",
      value: false,
      source: "step: 季度",
      rule: "implied by step",
    });
  });

  it.each([
    { value: "day", step: "day" },
    { value: "1d", step: "day" },
    { value: "日", step: "day" },
    { value: "W", step: "week" },
    { value: "周", step: "week" },
    { value: "Month", step: "month" },
    { value: "1M", step: "month" },
    { value: "1q", step: "quarter" },
    { value: "季度", step: "quarter" },
    { value: "1y", step: "year" },
    { value: "年", step: "year" },
    { value: "1m", step: undefined }, // a minute
    { value: "2d", step: undefined }, // steps are one unit
    { value: "hour", step: undefined },
  ])("step=$value → $step", ({ value, step }) => {
    for (const r of [run({ context: `step=${value}` }), run({ context: JSON.stringify({ step: value }) })]) {
      expect(r.step).toBe(step);
      // A value that names no step is rejected, not passed over.
      expect(r.rejected.map((x) => x.param)).toEqual(step === undefined ? ["step"] : []);
    }
  });

  it("reads a JSON object's top-level keys, in its own time zone, and not the nested object's start", () => {
    const context = JSON.stringify({
      now_ms: SPEC_NOW,
      instant: true,
      start: "2024-03-01",
      end: 1711929599999,
      timezone: NEW_YORK,
      object_context: { start: 1700000000000, company: "c1", note: "去年" },
    });
    const r = run({ context, requestNowMs: undefined });
    expect({
      now: r.now_ms,
      zone: r.time_zone,
      start: isoIn(r.start, NEW_YORK),
      end: r.end,
      instant: r.instant,
      step: r.step,
    }).toEqual({
      now: SPEC_NOW,
      zone: NEW_YORK,
      start: "2024-03-01T00:00:00.000-05:00",
      end: 1711929599999,
      instant: true,
      step: undefined,
    });
    expect(r.facts.map((f) => f.source)).toEqual([
      `"now_ms": ${SPEC_NOW}`,
      '"start": "2024-03-01"',
      '"end": 1711929599999',
      '"instant": true',
    ]);
  });

  it("reads time expressions in a JSON object's nested text", () => {
    expect(period(run({ context: '{"object_context": {"company": "c1", "remark": "统计上个月"}}' }))).toMatchObject({
      start: day("2026-10-01"),
      rule: "上个月",
    });
  });

  it("reads broken JSON as free text", () => {
    expect(isoIn(run({ context: '{"start": "2024-03-01", "end": ' }).start, SHANGHAI)).toBe(day("2024-03-01"));
  });

  it("computes periods in an explicit zone", () => {
    const r = run({ query: "上个月", context: "timezone=America/New_York" });
    expect({ zone: r.time_zone, start: isoIn(r.start, NEW_YORK), end: isoIn(r.end, NEW_YORK) }).toEqual({
      zone: NEW_YORK,
      start: "2026-10-01T00:00:00.000-04:00",
      end: "2026-10-31T23:59:59.999-04:00",
    });
  });

  it("computes in the default zone when the named one is unknown, and rejects it", () => {
    const r = run({ query: "上个月", context: "timezone=Mars/Olympus" });
    expect(r.time_zone).toBe(SHANGHAI);
    expect(r.rejected).toEqual([
      {
        param: "timezone",
        key: "timezone",
        source: "timezone=Mars/Olympus",
        problem: {
          en: "must be an IANA time zone, e.g. Asia/Shanghai",
          zh: "必须是 IANA 时区，例如 Asia/Shanghai",
        },
      },
    ]);
  });

  it("takes no key glued to letters; a key with a value it cannot read is rejected", () => {
    const r = run({ context: "restart=2024-03-01, weekend=2024-03-31, xstep=month, instant=maybe" });
    expect(r.facts.map((f) => f.param)).toEqual(["now_ms"]);
    expect(r.rejected.map((x) => x.source)).toEqual(["instant=maybe"]);
  });
});

describe("extractTimeFacts: precedence", () => {
  it("explicit start/end beat a period in the query", () => {
    const r = run({ query: "上个月的审批数", context: "start=1709251200000,end=1711929599999" });
    expect([r.start, r.end, r.facts[1]?.rule]).toEqual([1709251200000, 1711929599999, "explicit"]);
  });

  it("an explicit start alone is not completed from the query", () => {
    const r = run({ query: "上个月的审批数", context: "start=1709251200000" });
    expect([r.start, r.end]).toEqual([1709251200000, undefined]);
  });

  it("the query's period beats one in additional_context (what the user asked wins)", () => {
    expect(period(run({ query: "今年", context: "口径：上个月" })).rule).toBe("今年");
  });

  it("the request's timezone beats one in additional_context", () => {
    const r = run({ query: "今年", context: "timezone=America/New_York", requestZone: "Europe/Berlin" });
    expect([r.time_zone, isoIn(r.start, r.time_zone)]).toEqual(["Europe/Berlin", "2026-01-01T00:00:00.000+01:00"]);
  });

  it("additional_context's timezone beats the default", () => {
    expect(run({ query: "今年", context: "timezone=America/New_York" }).time_zone).toBe("America/New_York");
  });

  it("bare 'instant' in prose is no instant word", () => {
    expect(run({ query: "show the instant messaging volume by month" }).instant).toBe(false);
  });

  it("whitespace runs are collapsed before matching", () => {
    const r = run({ query: "approvals over the last\n\n   7 \t days", context: `${" \t".repeat(20_000)}按月` });
    expect([period(r).rule, r.step]).toEqual(["last N days", "month"]);
  });

  it("an explicit step beats step words, and means a trend", () => {
    const r = run({ query: "每月趋势", context: "step=week" });
    expect([r.step, r.instant, r.facts.find((f) => f.param === "instant")?.rule]).toEqual([
      "week",
      false,
      "implied by step",
    ]);
  });

  it("explicit instant=true beats step words", () => {
    const r = run({ query: "每月的审批数", context: "instant=true" });
    expect([r.step, r.instant]).toEqual([undefined, true]);
  });

  it("explicit instant=false takes its step from words", () => {
    const r = run({ query: "每月的审批数", context: "instant=false" });
    expect([r.step, r.instant, r.facts.find((f) => f.param === "instant")?.rule]).toEqual(["month", false, "explicit"]);
  });

  it("the query's words beat additional_context's", () => {
    expect(run({ query: "每月", context: "按周统计" }).step).toBe("month");
    expect(run({ query: "审批数", context: "按周统计" }).step).toBe("week");
  });
});

describe("extractTimeFacts: now_ms", () => {
  const other = Date.parse("2026-01-15T00:00:00+08:00");

  it("takes the request's now_ms over additional_context's", () => {
    const r = run({ context: `now_ms=${SPEC_NOW}`, requestNowMs: NOW_MS, serverNowMs: other });
    expect([r.now_ms, r.facts[0]?.rule]).toEqual([NOW_MS, "request"]);
  });

  it("takes additional_context's now_ms over the server's", () => {
    const r = run({ context: `now_ms=${SPEC_NOW}`, requestNowMs: undefined, serverNowMs: other });
    expect(r.facts[0]).toEqual({ param: "now_ms", value: SPEC_NOW, source: `now_ms=${SPEC_NOW}`, rule: "explicit" });
  });

  it("falls back to the server's clock", () => {
    const r = run({ query: "今天", requestNowMs: undefined, serverNowMs: other });
    expect([r.now_ms, r.facts[0], isoIn(r.start, SHANGHAI)]).toEqual([
      other,
      { param: "now_ms", value: other, source: "server clock", rule: "server" },
      "2026-01-15T00:00:00.000+08:00",
    ]);
  });

  it("drops a request now_ms outside 2000..2100", () => {
    expect(run({ context: `now_ms=${SPEC_NOW}`, requestNowMs: 5, serverNowMs: other }).now_ms).toBe(SPEC_NOW);
  });
});

describe("extractTimeFacts: timestamps outside 2000..2100", () => {
  it("uses none of them, and rejects each", () => {
    const r = run({
      query: "上个月",
      context: "now_ms=123, start=946684799999, end=4102444800001",
      requestNowMs: undefined,
      serverNowMs: NOW_MS,
    });
    expect([r.now_ms, r.facts[0]?.rule, period(r).rule]).toEqual([NOW_MS, "server", "上个月"]);
    expect(r.rejected.map((x) => x.param)).toEqual(["now_ms", "start", "end"]);
  });

  it("keeps the bounds themselves", () => {
    const r = run({ context: "start=946684800000, end=4102444800000" });
    expect([r.start, r.end]).toEqual([946684800000, 4102444800000]);
  });
});

describe("extractTimeFacts: explicit values that name nothing", () => {
  it("rejects a JSON step and start with the key as written, where they came from and what they must be", () => {
    const r = run({ context: JSON.stringify({ Step: "hour", start: 100, end: 1711929599999 }) });
    expect(r.rejected).toEqual([
      {
        param: "start",
        key: "start",
        source: '"start": 100',
        problem: {
          en: "must be a millisecond timestamp between 946684800000 (2000-01-01) and 4102444800000 (2100-01-01), or an ISO date such as 2024-03-01",
          zh: "必须是介于 946684800000（2000-01-01）与 4102444800000（2100-01-01）之间的毫秒时间戳，或 2024-03-01 这样的 ISO 日期",
        },
      },
      {
        param: "step",
        key: "Step",
        source: '"Step": "hour"',
        problem: {
          en: "must be one calendar unit: day, week, month, quarter or year (天/周/月/季度/年 are read too)",
          zh: "必须是一个日历单位：day、week、month、quarter 或 year（也可写作 天/周/月/季度/年）",
        },
      },
    ]);
    // What is valid stays a fact.
    expect(r.end).toBe(1711929599999);
  });

  it("says a timestamp in seconds looks like seconds", () => {
    const r = run({ context: "start=1709251200, end=1711929599999" });
    expect(r.rejected[0]?.problem.en).toMatch(/; 1709251200 looks like seconds: multiply by 1000$/);
    expect(r.rejected[0]?.problem.zh).toMatch(/；1709251200 看起来是秒：请乘以 1000$/);
  });

  it("rejects an explicit start after its end, both quoted", () => {
    const r = run({ context: "start=2024-03-31, end=2024-03-01" });
    expect(r.rejected).toEqual([
      {
        param: "start",
        key: "start",
        source: "start=2024-03-31, end=2024-03-01",
        problem: { en: "must not be after end", zh: "不能晚于 end" },
      },
    ]);
  });

  it("rejects instant that is neither true nor false, and an unreadable ISO date", () => {
    const r = run({ context: JSON.stringify({ instant: "yes", start: "2024-02-30" }) });
    expect(r.rejected.map((x) => [x.param, x.source])).toEqual([
      ["start", '"start": "2024-02-30"'],
      ["instant", '"instant": "yes"'],
    ]);
    expect(r.rejected[1]?.problem.en).toBe("must be true (one value at a moment) or false (a trend, with step)");
  });

  it("takes null and empty JSON values as not given", () => {
    expect(run({ context: JSON.stringify({ step: null, start: "", instant: " " }) }).rejected).toEqual([]);
  });

  it("does not reject what the request's own now_ms and timezone override", () => {
    const r = run({ context: "now_ms=abc, timezone=Mars/Olympus", requestNowMs: NOW_MS, requestZone: "UTC" });
    expect([r.now_ms, r.time_zone, r.rejected]).toEqual([NOW_MS, "UTC", []]);
    const alone = run({ context: "now_ms=abc", requestNowMs: undefined });
    expect(alone.rejected.map((x) => x.problem.en)).toEqual([
      "must be a millisecond timestamp between 946684800000 (2000-01-01) and 4102444800000 (2100-01-01)",
    ]);
  });

  it("quotes a long JSON value cut short", () => {
    const r = run({ context: JSON.stringify({ start: "x".repeat(500) }) });
    expect(r.rejected[0]?.source).toBe(`"start": "${"x".repeat(76)}...`);
  });
});
