import { render } from "../../core/output-format";
import { type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { ChatTurn, FunctionTool, LlmClient, ToolTurn } from "../../upstream/llm-client";
import type { HandoffInput } from "../inputs";
import type { ToolDefinition } from "../tool-definitions";
import type { RecallEvent } from "./events";
import type { RecallRun } from "./run";

/**
 * Requests to the LLM an iteration may send, a retry included. The last one
 * offers only handoff: an iteration ends with a handoff or a wider window.
 */
const LLM_REQUESTS_PER_ITERATION = 6;
/** Tool calls answered with an error (bad arguments, unknown tools or keys) before the LLM is stopped. */
const MAX_TOOL_ERRORS = 5;

/**
 * The LLM strategy: the LLM drives the loop by function calling over the five
 * spec tools, as ListTools defines them (`definitions`). Each iteration is a
 * fresh conversation: the rules, the window's messages and what earlier
 * iterations searched. The model's calls run in the order it wrote them; an
 * approved expand_context_window ends the iteration, handoff ends the recall.
 * Arguments it gets wrong are answered with the error for it to correct, up
 * to MAX_TOOL_ERRORS. A request that fails, times out or comes back without a
 * tool call is sent once more (spec §5.1); when that fails too, or the LLM
 * never hands off, the recall ends with the best results found (needs_more_info),
 * or UNAVAILABLE when there are none.
 */
export async function* llmStrategy(
  run: RecallRun,
  llm: LlmClient,
  definitions: readonly ToolDefinition[],
): AsyncGenerator<RecallEvent, HandoffInput> {
  const tools: FunctionTool[] = definitions.map((d) => d.function);
  const handoffOnly = tools.filter((t) => t.name === "handoff");
  const searched: string[] = [];
  const never = text("the LLM never called handoff", "LLM 没有调用 handoff");
  const noHandoff = () => run.fallback(never, llmFailed(never));
  for (;;) {
    yield* run.startIteration();
    const turns: ChatTurn[] = [
      { role: "system", content: systemPrompt(run) },
      { role: "user", content: windowPrompt(run, searched) },
    ];
    let left = LLM_REQUESTS_PER_ITERATION;
    let expanded = false;
    while (!expanded) {
      if (left === 0) return noHandoff();
      const last = left === 1;
      if (last) turns.push({ role: "user", content: "本轮的调用次数已用完：现在调用 handoff，用已有的结果结束任务。" });
      const asked = await ask(run, llm, turns, last ? handoffOnly : tools, left);
      left -= asked.requests;
      if (!("turn" in asked)) return run.fallback(asked.why, llmFailed(asked.why, asked.cause));
      turns.push({ role: "assistant", content: asked.turn.content, tool_calls: asked.turn.toolCalls });
      for (const call of asked.turn.toolCalls) {
        const outcome = yield* run.call(call.name, call.arguments, call.id);
        turns.push({ role: "tool", tool_call_id: call.id, content: render(outcome.answer, "toon") });
        if (run.toolErrors >= MAX_TOOL_ERRORS) {
          const why = text(
            `${run.toolErrors} of the LLM's tool calls were refused`,
            `LLM 的工具调用出错 ${run.toolErrors} 次`,
          );
          return run.fallback(why, llmFailed(why));
        }
        if (!outcome.ok) continue;
        if (outcome.tool === "handoff") return outcome.handoff;
        if (outcome.tool === "search_memories") {
          const top = outcome.out.results.slice(0, 3).map((r) => `${r.memory_key} (${r.relevance_score})`);
          searched.push(`「${queryOf(call.arguments)}」→ ${top.join("、") || "没有结果"}`);
        }
        if (outcome.tool === "expand_context_window" && outcome.expansion.approved) {
          // The iteration ends here: calls the model wrote after this one are not run.
          yield* run.expand(outcome.expansion.new_size, outcome.reason);
          expanded = true;
          break;
        }
      }
    }
  }
}

type Asked = { turn: ToolTurn; requests: number } | { why: Text; cause?: ToolError; requests: number };

/**
 * One turn of the conversation, sent once more when the LLM fails, times
 * out or answers without calling a tool (spec §5.1: retry once), within the
 * requests `left`. The client's own retries are off: each request here is
 * one the recall counts. The caller's cancel or deadline is rethrown as is.
 */
async function ask(
  run: RecallRun,
  llm: LlmClient,
  turns: readonly ChatTurn[],
  tools: readonly FunctionTool[],
  left: number,
): Promise<Asked> {
  let requests = 0;
  let why = text("", "");
  let cause: ToolError | undefined;
  while (requests < Math.min(2, left)) {
    // A request the deadline would cut at once is not sent (a timed-out request is not retried into it).
    run.checkTime();
    requests++;
    run.llmCalls++;
    try {
      const turn = await llm.chat(run.ctx, turns, tools, { toolChoice: "required", retries: 0 });
      if (turn.toolCalls.length > 0) return { turn, requests };
      why = text("the LLM answered without calling a tool", "LLM 的回答没有调用工具");
      run.ctx.log.warn({ content: turn.content.slice(0, 200) }, "recall: the LLM answered without a tool call");
    } catch (err) {
      run.ctx.signal.throwIfAborted();
      if (!(err instanceof ToolError)) throw err;
      why = text(`the LLM failed (${err.reason}: ${err.text.en})`, `LLM 出错（${err.reason}：${err.text.zh}）`);
      cause = err;
      run.ctx.log.warn({ reason: err.reason }, "recall: the LLM request failed");
    }
  }
  return { why, requests, ...(cause ? { cause } : {}) };
}

function llmFailed(why: Text, cause?: ToolError): ToolError {
  return new ToolError({
    code: "unavailable",
    reason: "RECALL_LLM_FAILED",
    message: text(
      `the recall's LLM could not finish (${why.en}) and no memory had been found yet`,
      `召回的 LLM 未能完成（${why.zh}），且尚未找到任何记忆`,
    ),
    metadata: { upstream: "llm", ...(cause ? { llm_reason: cause.reason } : {}) },
    hint: {
      message: text(
        'Retry in a moment, or call Recall with strategy "deterministic" (no LLM).',
        '稍后重试，或用 strategy "deterministic"（不用 LLM）调用 Recall。',
      ),
    },
    ...(cause ? { cause } : {}),
  });
}

const queryOf = (args: string): string => {
  try {
    const q = (JSON.parse(args) as { query?: unknown }).query;
    return typeof q === "string" ? q : "";
  } catch {
    return "";
  }
};

/** The rules, after the spec's flows (§4) and limits (§6.2). */
function systemPrompt(run: RecallRun): string {
  const i = run.input;
  return `你是 MemRecallAgent：在用户的历史记忆中，找到对话里最后一条用户消息所指的内容（例如"按照我之前的数据库配置来"指的是哪条记忆）。

规则：
1. 用 search_memories 搜索（每轮最多 ${i.max_searches_per_iteration} 次，每次 limit 最多 ${i.max_results_per_search}），需要时用 get_memory_detail 查看详情。结果太多时可加 memory_types、time_range_days 缩小范围；没有结果时可降低 min_relevance_score（如 0.3）、增大 limit 再搜一次。
2. 当前窗口的消息不足以理解用户所指时，调用 expand_context_window：本轮立即结束，下一轮会提供更多消息。共 ${i.max_iterations} 轮。
3. 最后必须调用 handoff 结束：relevant_memory_keys 只能来自搜索结果；找不到时 confidence=0、needs_more_info=true，并写 follow_up_question 向用户询问。
4. 每次回复都要调用工具，不要只回复文字。`;
}

/** The iteration's messages (the newest `window`), numbered, and what earlier iterations searched. */
function windowPrompt(run: RecallRun, searched: readonly string[]): string {
  const all = run.messages.length;
  const first = all - run.window;
  const lines = run.windowMessages().map((m, k) => {
    const when = m.time === undefined ? "" : `（${m.time}）`;
    return `[${first + k + 1}] ${m.role}${when}：${m.content}`;
  });
  const parts = [
    `第 ${run.iteration}/${run.input.max_iterations} 轮。上下文窗口：最新的 ${run.window} 条消息（对话共 ${all} 条）。`,
    ...lines,
  ];
  if (searched.length > 0) parts.push("", "前几轮已搜索过（没有找到合适的记忆）：", ...searched.map((s) => `- ${s}`));
  return parts.join("\n");
}
