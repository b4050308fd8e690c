import { z } from "zod";
import { zodText } from "../../errors/text";
import { conversationMessages } from "../recall/input";

/** The types of memory RememberConversation keeps. */
export const MEMORY_KINDS = [
  "user_preference",
  "project_fact",
  "decision",
  "command",
  "configuration",
  "person_role",
  "general",
] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

const MODES = ["auto", "llm", "rules"] as const;

/** RememberConversation's input (the RPC, and the MCP tool `remember`). */
export const rememberInput = z.object({
  messages: conversationMessages.describe(
    "对话消息，从旧到新，至少包含一条用户消息；消息的 time 为其内容说出的时间（默认现在）",
  ),
  memory_types: z
    .array(
      z.enum(MEMORY_KINDS, {
        error: zodText(
          `a memory type must be one of ${MEMORY_KINDS.join(", ")}`,
          `记忆类型必须是 ${MEMORY_KINDS.join(", ")} 之一`,
        ),
      }),
    )
    .max(
      MEMORY_KINDS.length,
      zodText(`at most ${MEMORY_KINDS.length} memory types`, `至多 ${MEMORY_KINDS.length} 个记忆类型`),
    )
    .default([])
    .describe(`可选：只保存这些类型的记忆（${MEMORY_KINDS.join("、")}）；默认全部`),
  dry_run: z.boolean().default(false).describe("只给出决定，不写入任何记忆"),
  // Proto JSON sends an unset string as "": that means the default.
  mode: z
    .preprocess(
      (s) => (s === "" ? undefined : s),
      z
        .enum(MODES, { error: zodText('must be "auto", "llm" or "rules"', '必须是 "auto"、"llm" 或 "rules"') })
        .default("auto"),
    )
    .describe("auto（默认：配置了 LLM 时用 LLM 抽取与决定，否则用规则）、llm 或 rules（只保存明确的陈述）"),
});
export type RememberInput = z.output<typeof rememberInput>;
