import type { CallContext } from "../core/call-context";
import type { HandoffInput } from "./inputs";

export interface HandoffResult {
  success: true;
  message: string;
  task_completed: true;
}

/**
 * handoff (spec §2.5): renders the final report the calling agent hands on, its
 * headings in the caller's language (the spec's Chinese, or their English), and
 * logs how the recall ended (its outcome, not its text).
 */
export function handoff(ctx: CallContext, input: HandoffInput): HandoffResult {
  ctx.log.info(
    {
      confidence: input.confidence,
      relevant_memory_keys: input.relevant_memory_keys.length,
      needs_more_info: input.needs_more_info,
      iteration_used: input.iteration_used,
      context_window_used: input.context_window_used,
    },
    "memory recall handed off",
  );
  const w = ctx.language === "en" ? ENGLISH : SPEC;
  const parts = [w.done(percent(input.confidence)), "", w.summary, input.search_summary];
  if (input.reasoning !== "") parts.push("", w.reasoning, input.reasoning);
  if (input.relevant_memory_keys.length > 0) {
    parts.push(
      "",
      w.keys,
      w.found(input.relevant_memory_keys.length),
      ...input.relevant_memory_keys.map((key) => `- ${key}`),
    );
  }
  if (input.needs_more_info) parts.push("", w.clarify, input.follow_up_question);
  return { success: true, message: parts.join("\n"), task_completed: true };
}

/** The report's words: the spec's (§2.5), and the same in English. */
const SPEC = {
  done: (confidence: string) => `## 记忆搜索完成 (信心度: ${confidence})`,
  summary: "### 搜索总结",
  reasoning: "### 相关性分析",
  keys: "### 相关记忆标识",
  found: (n: number) => `共找到 ${n} 个相关记忆:`,
  clarify: "### 需要进一步澄清",
};
const ENGLISH: typeof SPEC = {
  done: (confidence: string) => `## Memory search complete (confidence: ${confidence})`,
  summary: "### Search summary",
  reasoning: "### Relevance analysis",
  keys: "### Relevant memory keys",
  found: (n: number) => `${n} relevant ${n === 1 ? "memory" : "memories"} found:`,
  clarify: "### Needs clarification",
};

/**
 * Formats like Python's "{:.0%}", which the spec uses: the value times 100,
 * rounded half to even ("12%" for 0.125, "85%" for 0.85).
 */
export function percent(value: number): string {
  const scaled = value * 100;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  const rounded = diff > 0.5 || (diff === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
  return `${rounded}%`;
}
