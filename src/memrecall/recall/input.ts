import { z } from "zod";
import { zodText } from "../../errors/text";
import { MAX_RESULTS, memoryTypesFilter, timeRangeDaysFilter } from "../inputs";

/** Messages a request may carry, the newest: as many as the largest window grants by default (MEMRECALL_MAX_CONTEXT_WINDOW). */
const MAX_MESSAGES = 200;
const MAX_MESSAGE_CHARS = 20_000;
/** The window the first iteration reads when the caller does not say (the spec's context_window_used default). */
const DEFAULT_WINDOW = 5;
const DEFAULT_MAX_ITERATIONS = 3;
const MAX_ITERATIONS = 10;
/** Spec §6.2: at most 3 consecutive searches. */
const MAX_SEARCHES_PER_ITERATION = 3;

/** A conversation, oldest first: 1..MAX_MESSAGES messages with at least one from the user (Recall, RememberConversation). */
export const conversationMessages = z
  .array(
    z.object({
      role: z
        .enum(["user", "assistant", "system"], {
          error: zodText('must be "user", "assistant" or "system"', '必须是 "user"、"assistant" 或 "system"'),
        })
        .describe("谁说的：user、assistant 或 system"),
      content: z
        .string()
        .trim()
        .min(1, zodText("required: the message's text", "必填：消息的文字"))
        .max(
          MAX_MESSAGE_CHARS,
          zodText(`must be at most ${MAX_MESSAGE_CHARS} characters`, `至多 ${MAX_MESSAGE_CHARS} 个字符`),
        )
        .describe("消息内容"),
      time: z.iso
        .datetime({
          offset: true,
          error: zodText(
            "must be an RFC 3339 time such as 2026-03-01T10:00:00+08:00",
            "必须是 RFC 3339 时间，例如 2026-03-01T10:00:00+08:00",
          ),
        })
        .optional()
        .describe("可选：消息的时间（RFC 3339），让“上周”这类说法有参照"),
    }),
  )
  .min(1, zodText("required: the conversation, newest last", "必填：对话，最新的在最后"))
  .max(
    MAX_MESSAGES,
    zodText(`at most ${MAX_MESSAGES} messages: send the newest ones`, `至多 ${MAX_MESSAGES} 条消息：请发送最新的那些`),
  )
  .refine((ms) => ms.length === 0 || ms.some((m) => m.role === "user"), {
    message: zodText(
      "must include a user message: the user is who is recalled and remembered",
      "必须包含一条用户消息：召回和记住的都是这个用户",
    ),
  });

const RECALL_STRATEGIES = ["auto", "llm", "deterministic"] as const;

/**
 * Recall's input (the RecallRequest, and the MCP tool `recall`): the
 * conversation, newest last, and the loop's bounds. `maxWindow` is the largest
 * window the service grants (MEMRECALL_MAX_CONTEXT_WINDOW).
 */
export function recallInput(maxWindow: number) {
  return z.object({
    messages: conversationMessages.describe(
      "对话消息，从旧到新（最新的在最后），至少包含一条用户消息；召回的是最后一条用户消息所指的记忆",
    ),
    context_window: z
      .number()
      .int()
      .min(1, zodText(`must be between 1 and ${maxWindow}`, `必须在 1 到 ${maxWindow} 之间`))
      .max(
        maxWindow,
        zodText(
          `must be between 1 and ${maxWindow}, the largest window this service grants`,
          `必须在 1 到 ${maxWindow} 之间，${maxWindow} 是本服务允许的最大窗口`,
        ),
      )
      .default(Math.min(DEFAULT_WINDOW, maxWindow))
      .describe(`第一轮读取的最新消息数（默认 ${DEFAULT_WINDOW}）`),
    max_iterations: z
      .number()
      .int()
      .min(1, zodText(`must be between 1 and ${MAX_ITERATIONS}`, `必须在 1 到 ${MAX_ITERATIONS} 之间`))
      .max(MAX_ITERATIONS, zodText(`must be between 1 and ${MAX_ITERATIONS}`, `必须在 1 到 ${MAX_ITERATIONS} 之间`))
      .default(DEFAULT_MAX_ITERATIONS)
      .describe(`最多迭代轮数（默认 ${DEFAULT_MAX_ITERATIONS}）；每次拓展上下文窗口结束一轮`),
    max_searches_per_iteration: z
      .number()
      .int()
      .min(
        1,
        zodText(
          `must be between 1 and ${MAX_SEARCHES_PER_ITERATION}`,
          `必须在 1 到 ${MAX_SEARCHES_PER_ITERATION} 之间`,
        ),
      )
      .max(
        MAX_SEARCHES_PER_ITERATION,
        zodText(
          `must be between 1 and ${MAX_SEARCHES_PER_ITERATION} (spec §6.2)`,
          `必须在 1 到 ${MAX_SEARCHES_PER_ITERATION} 之间（规范 §6.2）`,
        ),
      )
      .default(MAX_SEARCHES_PER_ITERATION)
      .describe(`每轮最多搜索次数（1-${MAX_SEARCHES_PER_ITERATION}，默认 ${MAX_SEARCHES_PER_ITERATION}）`),
    max_results_per_search: z
      .number()
      .int()
      .min(1, zodText(`must be between 1 and ${MAX_RESULTS}`, `必须在 1 到 ${MAX_RESULTS} 之间`))
      .max(
        MAX_RESULTS,
        zodText(`must be between 1 and ${MAX_RESULTS} (spec §6.2)`, `必须在 1 到 ${MAX_RESULTS} 之间（规范 §6.2）`),
      )
      .default(MAX_RESULTS)
      .describe(`每次搜索最多返回的结果数（1-${MAX_RESULTS}，默认 ${MAX_RESULTS}）`),
    memory_types: memoryTypesFilter.describe("可选：只在这些类型的记忆中找，每次搜索都遵守"),
    time_range_days: timeRangeDaysFilter.describe("可选：只找最近 N 天内创建的记忆（1-365），每次搜索都遵守"),
    // Proto JSON sends an unset string as "": that means the default.
    strategy: z
      .preprocess(
        (s) => (s === "" ? undefined : s),
        z
          .enum(RECALL_STRATEGIES, {
            error: zodText('must be "auto", "llm" or "deterministic"', '必须是 "auto"、"llm" 或 "deterministic"'),
          })
          .default("auto"),
      )
      .describe("auto（默认：配置了 LLM 时由 LLM 驱动，否则确定性策略）、llm 或 deterministic"),
  });
}
export type RecallInput = z.output<ReturnType<typeof recallInput>>;
export type ConversationMessage = RecallInput["messages"][number];
