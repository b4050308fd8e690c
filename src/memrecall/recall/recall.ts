import type { CallContext } from "../../core/call-context";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { LlmClient } from "../../upstream/llm-client";
import type { HandoffInput } from "../inputs";
import type { MemRecallDeps } from "../memories-deps";
import { ownerOf } from "../owner";
import type { ToolDefinition } from "../tool-definitions";
import { deterministicStrategy } from "./deterministic";
import type { RecallEvent, StrategyName } from "./events";
import type { RecallInput } from "./input";
import { llmStrategy } from "./llm-strategy";
import { OUT_OF_TIME, RecallRun } from "./run";

/**
 * Recall: the recall agent (spec §4), as a stream of what it does. The
 * strategy — the LLM over the spec tools `definitions` (ListTools'), or the
 * deterministic one — runs the loop; this bounds it: the caller's account
 * first, then the iterations, searches and LLM requests the strategies keep
 * to, and time: the caller's deadline or cancel ends it at once (every
 * upstream request is aborted, nothing more is called), and the recall's own
 * budget (MEMRECALL_RECALL_TIMEOUT_MS) ends it with the best results found so
 * far, or DEADLINE_EXCEEDED when there are none. The last event is always the
 * one handoff; any failure ends the stream instead.
 */
export async function* runRecall(
  deps: MemRecallDeps,
  ctx: CallContext,
  input: RecallInput,
  definitions: readonly ToolDefinition[],
): AsyncGenerator<RecallEvent, void> {
  ownerOf(ctx.caller);
  const strategy = strategyOf(input.strategy, deps.llm);
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(timeBudgetSpent(deps.recallTimeoutMs)), deps.recallTimeoutMs);
  const deadline = Date.now() + deps.recallTimeoutMs;
  const bounded: CallContext = {
    ...ctx,
    signal: AbortSignal.any([ctx.signal, budget.signal]),
    remainingMs: () => Math.max(0, Math.min(ctx.remainingMs() ?? Number.POSITIVE_INFINITY, deadline - Date.now())),
  };
  let run: RecallRun | undefined;
  try {
    run = new RecallRun(deps, bounded, ctx, input, strategy);
    let conclusion: HandoffInput;
    try {
      conclusion = yield* strategy === "llm" ? llmStrategy(run, deps.llm!, definitions) : deterministicStrategy(run);
    } catch (err) {
      // Only the recall's own budget is concluded from; the caller's cancel or deadline ends the stream.
      const ownTimeUp =
        budget.signal.aborted ||
        (err instanceof ToolError &&
          err.reason === OUT_OF_TIME &&
          deadline - Date.now() <= (ctx.remainingMs() ?? Number.POSITIVE_INFINITY));
      if (ctx.signal.aborted || !ownTimeUp) throw err;
      conclusion = run.fallback(
        text(`its ${deps.recallTimeoutMs} ms time budget ran out`, `用完了 ${deps.recallTimeoutMs} ms 的时间预算`),
        timeBudgetSpent(deps.recallTimeoutMs),
      );
    }
    yield* run.finish(conclusion);
    ctx.log.info(
      {
        strategy,
        iterations: run.iteration,
        searches: run.searches,
        llm_calls: run.llmCalls,
        tool_errors: run.toolErrors,
        keys: conclusion.relevant_memory_keys.length,
      },
      "memory recall finished",
    );
  } finally {
    clearTimeout(timer);
    run?.endIterationSpan();
  }
}

/** The strategy a request asks for: "auto" is the LLM when one is configured. */
function strategyOf(asked: RecallInput["strategy"], llm: LlmClient | undefined): StrategyName {
  if (asked === "deterministic" || (asked === "auto" && !llm)) return "deterministic";
  if (llm) return "llm";
  throw new ToolError({
    code: "failed_precondition",
    reason: "LLM_NOT_CONFIGURED",
    message: text(
      'strategy "llm" needs an LLM, and this service has none (LLM_BASE_URL is not set)',
      'strategy "llm" 需要 LLM，而本服务没有配置 LLM（未设置 LLM_BASE_URL）',
    ),
    hint: {
      message: text(
        'Call again with strategy "auto" or "deterministic".',
        '用 strategy "auto" 或 "deterministic" 重新调用。',
      ),
      validValues: ["auto", "deterministic"],
    },
  });
}

function timeBudgetSpent(ms: number): ToolError {
  return new ToolError({
    code: "deadline_exceeded",
    reason: "RECALL_TIME_BUDGET",
    message: text(
      `the recall ran out of its ${ms} ms (MEMRECALL_RECALL_TIMEOUT_MS) before it found any memory`,
      `召回在找到任何记忆之前用完了它的 ${ms} ms（MEMRECALL_RECALL_TIMEOUT_MS）`,
    ),
    hint: {
      message: text(
        "Retry with fewer iterations (max_iterations), or a narrower memory_types / time_range_days.",
        "用更少的迭代轮数（max_iterations）或更窄的 memory_types / time_range_days 重试。",
      ),
    },
  });
}
