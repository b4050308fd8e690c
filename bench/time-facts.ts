import { extractTimeFacts, type TimeFactsInput } from "../src/resolver/time-facts";
import { formatMicros, line, percentile, timeEach } from "./stats";

const CALLS = 20_000;
const NOW = Date.parse("2026-11-22T10:30:00+08:00");

const QUERIES = [
  "上个月各公司的获批药品数量",
  "近三个月每月的审批数量趋势",
  "今年以来的注册资本变化",
  "最近7天新增的不良反应报告",
  "2024年Q1的销售额",
  "2024年1月1日到2024年3月31日的审批情况",
  "去年下半年每季度的营收",
  "本周的临床试验入组人数",
  "近一年的经营健康分",
  "过去两周按天统计的访问量",
  "2024年3月的药品召回数量",
  "从2023年到2024年历年的专利数",
  "当前值：获批药品总数",
  "截至目前的累计审批数",
  "这些公司的注册资本是多少",
  "对比去年和今年的研发投入",
  "上季度的市场份额",
  "近半年的月度走势",
  "2024-01-01 至 2024-06-30 的订单量",
  "昨天的日活",
  "approved drugs last month",
  "monthly approvals over the past 12 months",
  "revenue in 2024",
  "Q3 2025 market share",
  "weekly active users this quarter",
  "between 2024-01-01 and 2024-03-31, how many recalls",
  "business health score today",
  "trend of approvals since March 2024",
  "yearly patents for the last 5 years",
  "current value of the registered capital",
];

const CONTEXTS = [
  "",
  "company_id=company_000001，registered_capital=2000000；registered_capital>1000000；now_ms=1762996342241，timezone=Asia/Shanghai；趋势查询step=month/即时查询instant=true",
  "company_id=company_000002, region=华东; start=2024-03-01, end=2024-03-31; step=1M",
  "now_ms: 1762996342241\ninstant: true\n口径：上个月",
  JSON.stringify({
    now_ms: 1762996342241,
    instant: true,
    object_context: { company_id: "company_000003", name: "某某制药", founded: "2019-05-01" },
  }),
  JSON.stringify({ start: "2024-01-01", end: "2024-12-31T23:59:59", step: "quarter", timezone: "America/New_York" }),
  JSON.stringify({ object_context: { company_id: "company_000004", remark: "统计近30天" } }),
  "项目列表：P-001、P-002、P-003；负责人：张三；状态：进行中",
];

/** 50 pairings of a query and a context: every query at least once (7 and 30 share no factor), the contexts in turn. */
const INPUTS: TimeFactsInput[] = Array.from({ length: 50 }, (_, i) => ({
  query: QUERIES[(i * 7) % QUERIES.length] ?? "",
  additionalContext: CONTEXTS[i % CONTEXTS.length] ?? "",
  requestNowMs: undefined,
  serverNowMs: NOW,
  requestTimeZone: undefined,
  defaultTimeZone: "Asia/Shanghai",
}));

/** The resolver's time pre-pass cost per call over a mix of realistic queries and additional_context. */
export async function benchTimeFacts(): Promise<void> {
  const pick = (i: number) => INPUTS[i % INPUTS.length]!;
  // Warm the JIT and the per-zone Intl formatters before measuring.
  for (let i = 0; i < 2000; i++) extractTimeFacts(pick(i));
  const samples = await timeEach(CALLS, (i) => extractTimeFacts(pick(i)));
  const withPeriod = INPUTS.filter((input) => extractTimeFacts(input).start !== undefined).length;
  line(
    `time facts: ${INPUTS.length} inputs, ${withPeriod} with a start`,
    `${CALLS} calls: p50 ${formatMicros(percentile(samples, 50))}, p95 ${formatMicros(percentile(samples, 95))} per call`,
  );
}
