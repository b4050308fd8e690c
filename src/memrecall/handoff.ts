import { z } from "zod";

const MAX_KEYS = 50;

/** Input of handoff (spec §2.5), plus the `reasoning` field the spec's code reads. */
export const handoffInput = z
  .object({
    reason: z
      .string()
      .trim()
      .min(1, "reason is required: say why the task ends")
      .max(2000, "reason must be at most 2000 characters")
      .describe("结束任务的原因，例如：'已找到相关记忆，搜索完成' 或 '达到最大迭代次数，返回当前最佳结果'"),
    search_summary: z
      .string()
      .trim()
      .min(1, "search_summary is required: summarise what was found (or that nothing was)")
      .max(20_000, "search_summary must be at most 20000 characters")
      .describe("搜索结果的总结，包括找到的相关记忆和关键信息"),
    relevant_memory_keys: z
      .array(z.string().trim().min(1, "memory keys must not be empty").max(128, "memory keys are at most 128 characters"))
      .max(MAX_KEYS, `at most ${MAX_KEYS} relevant_memory_keys`)
      .default([])
      .describe("相关记忆的 key 列表"),
    confidence: z
      .number({ error: (issue) => (issue.input === undefined ? "confidence is required (0.0..1.0)" : "confidence must be a number") })
      .min(0, "confidence must be between 0.0 and 1.0")
      .max(1, "confidence must be between 0.0 and 1.0")
      .describe("对搜索结果相关性的信心度 0.0-1.0"),
    needs_more_info: z.boolean().default(false).describe("是否需要更多信息来精确定位记忆"),
    follow_up_question: z
      .string()
      .trim()
      .max(2000, "follow_up_question must be at most 2000 characters")
      .default("")
      .describe("如果需要更多信息，向用户提出的问题"),
    iteration_used: z.number().int().min(1, "iteration_used counts from 1").default(1).describe("完成时使用的迭代轮数"),
    context_window_used: z
      .number()
      .int()
      .min(0, "context_window_used must be at least 0")
      .default(5)
      .describe("最终使用的上下文窗口大小（消息数）"),
    reasoning: z.string().trim().max(20_000, "reasoning must be at most 20000 characters").default("").describe("相关性分析（可选）"),
  })
  .superRefine((v, ctx) => {
    if (v.needs_more_info && v.follow_up_question === "") {
      ctx.addIssue({
        code: "custom",
        path: ["follow_up_question"],
        message: "follow_up_question is required when needs_more_info is true: it is what the user will be asked",
      });
    }
  });

export type HandoffInput = z.output<typeof handoffInput>;

export interface HandoffResult {
  success: true;
  message: string;
  task_completed: true;
}

/** handoff (spec §2.5): renders the final report the calling agent hands on. */
export function handoff(input: HandoffInput): HandoffResult {
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
