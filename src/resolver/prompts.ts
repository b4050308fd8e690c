import type { Json } from "../core/json";
import type { InstanceIdentity, LogicProperty, OperatorDetail } from "../kn/types";
import type { ChatMessage } from "../upstream/llm-client";
import { inputParameters } from "./parameters";

export interface PromptInput {
  query: string;
  identities: InstanceIdentity[];
  additionalContext: string;
  nowMs: number;
  timeZone: string;
  property: LogicProperty;
  /** Parameters already determined (time facts): the LLM must use them as they are. */
  facts: Record<string, Json>;
  /** The operator's schema from the operator market, when available. */
  operator: OperatorDetail | undefined;
}

/**
 * The messages for one property's dynamic_params (spec §7): the minimal input
 * (question, identities, additional context, now and time zone, this
 * property's parameters) and the hard constraints of its type. The answer is
 * one JSON object `{"<property>": {...}}`, or `{"_error": "..."}` when a
 * required parameter cannot be determined.
 */
export function buildPrompt(input: PromptInput): ChatMessage[] {
  const lp = input.property;
  const params = inputParameters(lp);
  const rules =
    lp.type === "metric"
      ? [
          `只生成下列 value_from=input 的参数，一个都不能少：${params.map((p) => p.name).join("、")}。`,
          "instant、start、end、step 是系统参数：instant=true 表示即时查询（单个时间点），此时不要给 step；instant=false 表示趋势查询，必须给 step。",
          "step 只能是 day、week、month、quarter、year 之一（固定 1 个单位）。",
          "start、end 是毫秒时间戳，在 2000 年至 2100 年之间，且 start ≤ end；相对时间按 now_ms 与时区计算。",
        ]
      : [
          `只生成下列 value_from=input 的参数，一个都不能少：${params.map((p) => p.name).join("、")}。`,
          "参数值可能是基础类型、对象或数组：保持参数定义要求的结构与类型（OBJECT 给 JSON 对象，ARRAY 给 JSON 数组）。",
          "取值优先级：additional_context > query > 参数说明中的示例或默认值。",
        ];
  const system = [
    `你为业务知识网络的逻辑属性生成 dynamic_params。当前逻辑属性：${lp.name}（${lp.display_name || lp.name}，类型 ${lp.type}）。`,
    "硬约束：",
    ...rules.map((r, i) => `${i + 1}. ${r}`),
    Object.keys(input.facts).length > 0
      ? `${rules.length + 1}. 下列参数已经确定，必须原样使用：${JSON.stringify(input.facts)}`
      : "",
    `只输出一个严格合法的 JSON 对象，格式为 {"${lp.name}": {"参数名": 值, ...}}，不要输出其他文字。`,
    `无法确定某个必填参数时，输出 {"_error": "缺少必填参数: 参数名 (说明), ..."}。`,
  ]
    .filter((s) => s !== "")
    .join("\n");
  const user = [
    `用户问题：${input.query}`,
    `对象实例（主键）：${JSON.stringify(input.identities)}`,
    input.additionalContext ? `补充上下文：${input.additionalContext}` : "",
    `当前时间：now_ms=${input.nowMs}（${new Date(input.nowMs).toLocaleString("zh-CN", { timeZone: input.timeZone, hour12: false })}），时区 ${input.timeZone}`,
    `逻辑属性定义：${JSON.stringify({ name: lp.name, type: lp.type, comment: lp.comment, data_source: lp.data_source, parameters: lp.parameters })}`,
    input.operator
      ? `算子参数定义（operator market）：${JSON.stringify({ name: input.operator.name, api_spec: input.operator.metadata.api_spec })}`
      : "",
  ]
    .filter((s) => s !== "")
    .join("\n\n");
  return [
    { role: "system", content: system },
    { role: "user", content: user },
  ];
}
