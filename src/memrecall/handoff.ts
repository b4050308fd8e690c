import type { CallContext } from "../core/call-context";
import type { HandoffInput } from "./inputs";

export interface HandoffResult {
  success: true;
  message: string;
  task_completed: true;
}

/**
 * handoff (spec §2.5): renders the final report the calling agent hands on,
 * and logs how the recall ended (its outcome, not its text).
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
  const parts = [`## 记忆搜索完成 (信心度: ${percent(input.confidence)})`, "", "### 搜索总结", input.search_summary];
  if (input.reasoning !== "") parts.push("", "### 相关性分析", input.reasoning);
  if (input.relevant_memory_keys.length > 0) {
    parts.push(
      "",
      "### 相关记忆标识",
      `共找到 ${input.relevant_memory_keys.length} 个相关记忆:`,
      ...input.relevant_memory_keys.map((key) => `- ${key}`),
    );
  }
  if (input.needs_more_info) parts.push("", "### 需要进一步澄清", input.follow_up_question);
  return { success: true, message: parts.join("\n"), task_completed: true };
}

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
