import type { Json } from "../../core/json";
import type { Language } from "../../errors/text";
import type { HandoffInput } from "../inputs";
import type { MemoryDetail } from "../read";

/** Which strategy drove a recall. */
export type StrategyName = "llm" | "deterministic";

/** A memory a search returned, as an event shows it: key and score, never content. */
export interface RecallHit {
  memory_key: string;
  relevance_score: number;
  superseded_by: string;
}

/** A memory the handoff names, in full (redacted for a caller without the permission), with the best score it got. */
export interface RecalledMemory extends MemoryDetail {
  relevance_score: number;
}

/**
 * The recall's result: the spec's HandoffInput (iteration_used and
 * context_window_used as they were, whatever a strategy said), the memories
 * it names, and how it got there.
 */
export interface RecallResult extends HandoffInput {
  memories: RecalledMemory[];
  strategy: StrategyName;
  /** The final report, as Handoff renders it. */
  message: string;
  searches: number;
  llm_calls: number;
  tool_errors: number;
}

/** What a tool call returned, in short: keys, scores and counts. */
export interface ToolResultEvent {
  kind: "tool_result";
  iteration: number;
  call_id: string;
  name: string;
  ok: boolean;
  hits: RecallHit[];
  memory_key: string;
  keywords: string[];
  approved: boolean;
  new_size: number;
  /** One line for people watching. */
  summary: string;
  error_reason: string;
  error_message: string;
  duration_ms: number;
}

/** One thing that happened in a recall, in the order it happened. */
export type RecallEventBody =
  | {
      kind: "iteration_started";
      iteration: number;
      max_iterations: number;
      window_size: number;
      messages_total: number;
    }
  | {
      kind: "tool_call";
      iteration: number;
      call_id: string;
      name: string;
      /** The arguments as written; empty when they were not a JSON object (see unparsed_arguments). */
      arguments: Record<string, Json>;
      unparsed_arguments: string;
    }
  | ToolResultEvent
  | { kind: "window_expanded"; iteration: number; from_size: number; to_size: number; reason: string }
  | { kind: "handoff"; result: RecallResult };

/** An event with its place in the stream (from 1) and its time since the recall started. */
export type RecallEvent = RecallEventBody & { sequence: number; elapsed_ms: number };

/** The event in one line of the caller's language, for progress notifications (MCP). */
export function describeEvent(e: RecallEventBody, language: Language): string {
  if (language === "en") return inEnglish(e);
  switch (e.kind) {
    case "iteration_started":
      return `第 ${e.iteration}/${e.max_iterations} 轮：读取最新的 ${e.window_size} 条消息（共 ${e.messages_total} 条）`;
    case "tool_call":
      return `调用 ${e.name}${e.unparsed_arguments === "" ? ` ${clip(JSON.stringify(e.arguments))}` : "（参数不是 JSON 对象）"}`;
    case "tool_result":
      return `${e.name} → ${e.ok ? e.summary : `错误 ${e.error_reason}：${e.error_message}`}`;
    case "window_expanded":
      return `拓展上下文窗口 ${e.from_size} → ${e.to_size} 条消息：${e.reason}`;
    case "handoff":
      return `完成（${e.result.strategy}）：${e.result.relevant_memory_keys.length} 条相关记忆，信心度 ${e.result.confidence}`;
  }
}

function inEnglish(e: RecallEventBody): string {
  switch (e.kind) {
    case "iteration_started":
      return `iteration ${e.iteration}/${e.max_iterations}: reading the newest ${count(e.window_size, "message", "messages")} (of ${e.messages_total})`;
    case "tool_call":
      return `calling ${e.name}${e.unparsed_arguments === "" ? ` ${clip(JSON.stringify(e.arguments))}` : " (arguments not a JSON object)"}`;
    case "tool_result":
      return `${e.name} → ${e.ok ? e.summary : `error ${e.error_reason}: ${e.error_message}`}`;
    case "window_expanded":
      return `context window expanded ${e.from_size} → ${count(e.to_size, "message", "messages")}: ${e.reason}`;
    case "handoff":
      return `done (${e.result.strategy}): ${count(e.result.relevant_memory_keys.length, "relevant memory", "relevant memories")}, confidence ${e.result.confidence}`;
  }
}

/** `n` things in English: "1 message", "2 messages". */
export function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A line kept short: a progress message is read at a glance. */
function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
