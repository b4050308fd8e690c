import type { z } from "zod";
import type { CallContext } from "../../core/call-context";
import type { Json } from "../../core/json";
import { lexiconOrNone } from "../../core/lexicon";
import { round3 } from "../../core/scores";
import { compact, table } from "../../core/tables";
import { inSpan, type ServerSpan, startChildSpan } from "../../core/telemetry";
import { type Language, type Text, text } from "../../errors/text";
import { invalidArgument, renderIn, ToolError } from "../../errors/tool-error";
import { safeParseBoth, violationsOf } from "../../errors/validation";
import { detailAnswer, extractionAnswer, searchAnswer } from "../answers";
import { type ExpandContextWindowResult, expandContextWindow } from "../expand-context-window";
import { handoff } from "../handoff";
import {
  expandContextWindowInput,
  extractKeywordsInput,
  getMemoryDetailInput,
  type HandoffInput,
  handoffInput,
  searchMemoriesInput,
} from "../inputs";
import { type Extraction, extractKeywords } from "../keyword-extraction";
import type { MemRecallDeps } from "../memories-deps";
import { getMemoryDetail, type MemoryDetail } from "../read";
import { type SearchOutput, searchMemories } from "../search";
import { SPEC_TOOLS } from "../tool-definitions";
import {
  count,
  type RecallEvent,
  type RecallEventBody,
  type RecallHit,
  type StrategyName,
  type ToolResultEvent,
} from "./events";
import type { ConversationMessage, RecallInput } from "./input";

/**
 * A search result at or above this is a memory the conversation may mean;
 * below it, a guess to ask about. Lower than SearchMemories' default (the
 * spec's 0.5): a recall searches by the words of a conversation, not by a
 * query someone wrote, so fewer of them are the memory's, and a calibrated
 * 0.3 to 0.5 is relevant a third to half of the time. Set on the development
 * sets (bench/recall-eval.json, bench/recall-dev-22.json) with hybrid
 * relevance in log-odds (relevance.ts); the held-out set then recalled 28 of
 * 46 conversations, against 26 with the fixed range's fusion and a bar of 0.5.
 */
export const RELEVANT_SCORE = 0.3;
/** Keys a conclusion names when it has to make do with what was found (an LLM that failed, time that ran out). */
const FALLBACK_KEYS = 3;
/** Less time than this left, no upstream request is started: it could not finish. */
const MIN_REQUEST_MS = 50;
/** The reason of the error `checkTime` throws. */
export const OUT_OF_TIME = "RECALL_OUT_OF_TIME";

/** How a tool call ended: the result the strategy works with and the answer the model reads, or a tool error. */
export type ToolOutcome =
  | { ok: false; error: ToolError; answer: Json }
  | { ok: true; tool: "search_memories"; out: SearchOutput; answer: Json }
  | { ok: true; tool: "get_memory_detail"; memory: MemoryDetail; answer: Json }
  | { ok: true; tool: "extract_search_keywords"; extraction: Extraction; answer: Json }
  | {
      ok: true;
      tool: "expand_context_window";
      expansion: ExpandContextWindowResult;
      reason: string;
      answer: Json;
    }
  | { ok: true; tool: "handoff"; handoff: HandoffInput; answer: Json };

/**
 * One recall in progress: the iteration and its window, what the searches
 * found, the counts its bounds are checked against, and the tools, run within
 * those bounds. The strategies (deterministic.ts, llm-strategy.ts) decide what
 * to call; every call goes through `call`, which streams it and its result.
 */
export class RecallRun {
  /** The current iteration's span, when tracing is on: its tool calls are its children. */
  private iterationSpan: ServerSpan | undefined;

  /** Ends the current iteration's span (at the next iteration, the handoff, or a failure). */
  endIterationSpan(): void {
    this.iterationSpan?.end();
    this.iterationSpan = undefined;
  }

  iteration = 0;
  /** Messages the current iteration reads (the newest ones). */
  window: number;
  searches = 0;
  llmCalls = 0;
  toolErrors = 0;
  private searchesInIteration = 0;
  private sequence = 0;
  private callCount = 0;
  private readonly started = performance.now();
  /** Every memory a search returned, with the best score it got. */
  private readonly seen = new Map<string, RecallHit>();
  /** Memories opened, by key. */
  private readonly opened = new Map<string, MemoryDetail>();
  /** The memory verbs as the recall uses them: its searches never ask an LLM to expand a query (see docs/memrecall.md, "Recall"). */
  private readonly toolDeps: MemRecallDeps;

  constructor(
    private readonly deps: MemRecallDeps,
    /** The call's context, its signal also ending at the recall's own time budget. */
    readonly ctx: CallContext,
    /** The caller's context: the handoff is assembled with it even when the time budget ran out. */
    private readonly callerCtx: CallContext,
    readonly input: RecallInput,
    readonly strategy: StrategyName,
  ) {
    this.window = Math.min(input.context_window, input.messages.length);
    this.toolDeps = { ...deps, llm: undefined };
  }

  get messages(): readonly ConversationMessage[] {
    return this.input.messages;
  }

  /**
   * Each word's commonest translation in the other language (CC-CEDICT: an
   * English word or pair of words its Chinese word, a Chinese word its first
   * English sense), for words the dictionaries know; none without them.
   */
  async translations(words: readonly string[]): Promise<string[]> {
    const lexicon = await lexiconOrNone(this.deps.lexicon, this.ctx.log, "the subject is not searched translated");
    if (!lexicon) return [];
    const out = new Set<string>();
    for (const w of words) {
      const t = /\p{Script=Han}/u.test(w) ? lexicon.englishFor(w)[0] : lexicon.chineseFor(w)[0];
      if (t && t.split(" ").length <= 3) out.add(t);
    }
    return [...out].filter((t) => !words.includes(t));
  }

  /** The newest `window` messages. */
  windowMessages(): ConversationMessage[] {
    return this.input.messages.slice(-this.window);
  }

  /** True when the recall may take another iteration with a wider window. */
  canExpand(): boolean {
    return this.iteration < this.input.max_iterations && this.window < this.widest();
  }

  /** The next window a strategy of its own asks for: twice the current one, within what there is and is granted. */
  wider(): number {
    return Math.min(this.window * 2, this.widest());
  }

  private widest(): number {
    return Math.min(this.input.messages.length, this.deps.maxContextWindow);
  }

  searchesLeft(): number {
    return this.input.max_searches_per_iteration - this.searchesInIteration;
  }

  /**
   * Throws DEADLINE_EXCEEDED when the time left (the caller's deadline or
   * the recall's own budget, whichever comes first) is too short to start an
   * upstream request, and at once when the call has been ended.
   */
  checkTime(): void {
    this.ctx.signal.throwIfAborted();
    const left = this.ctx.remainingMs();
    if (left === undefined || left >= MIN_REQUEST_MS) return;
    throw new ToolError({
      code: "deadline_exceeded",
      reason: OUT_OF_TIME,
      message: text(
        `the recall has ${Math.round(left)} ms left: too little for another request`,
        `召回只剩 ${Math.round(left)} ms：不够再发一次请求`,
      ),
    });
  }

  /** Every memory seen so far, best first. */
  hits(): RecallHit[] {
    return [...this.seen.values()].sort((a, b) => b.relevance_score - a.relevance_score);
  }

  /** Starts the next iteration. */
  *startIteration(): Generator<RecallEvent> {
    this.iteration++;
    this.searchesInIteration = 0;
    this.endIterationSpan();
    this.iterationSpan = startChildSpan("recall iteration", {
      "recall.iteration": this.iteration,
      "recall.window": this.window,
    });
    yield this.emit({
      kind: "iteration_started",
      iteration: this.iteration,
      max_iterations: this.input.max_iterations,
      window_size: this.window,
      messages_total: this.input.messages.length,
    });
  }

  /** Ends the iteration with a wider window: the next one reads `toSize` messages. */
  *expand(toSize: number, reason: string): Generator<RecallEvent> {
    const from = this.window;
    this.window = Math.min(toSize, this.input.messages.length);
    yield this.emit({
      kind: "window_expanded",
      iteration: this.iteration,
      from_size: from,
      to_size: this.window,
      reason,
    });
  }

  /**
   * Calls a tool: streams the call, runs it within the recall's bounds, and
   * streams its result in short. `args` is the model's text when it came
   * from one (it may not be JSON). A call the tool refuses (bad arguments,
   * a search over the limit, an unknown key or tool) is answered with the
   * error, counted, for the strategy to correct; a failure of the store or
   * the session cache is retried once (spec §5.1), then ends the recall.
   */
  async *call(
    name: string,
    args: Record<string, Json> | string,
    callId?: string,
  ): AsyncGenerator<RecallEvent, ToolOutcome> {
    this.ctx.signal.throwIfAborted();
    const id = callId ?? `call_${++this.callCount}`;
    const parsed = typeof args === "string" ? parseArguments(args) : args;
    yield this.emit({
      kind: "tool_call",
      iteration: this.iteration,
      call_id: id,
      name,
      arguments: parsed ?? {},
      unparsed_arguments: parsed === undefined ? (args as string) : "",
    });
    const started = performance.now();
    let outcome: ToolOutcome;
    try {
      if (parsed === undefined) {
        const given = JSON.stringify((args as string).slice(0, 200));
        throw invalidArgument([
          { field: "arguments", description: text(`not a JSON object: ${given}`, `不是 JSON 对象：${given}`) },
        ]);
      }
      const execute = () => inSpan(`recall tool ${name}`, { "recall.tool": name }, () => this.execute(name, parsed));
      // The tool's span (and its searches' and reads') belongs to the iteration's.
      outcome = await (this.iterationSpan ? this.iterationSpan.run(execute) : execute());
    } catch (err) {
      if (!(err instanceof ToolError) || !correctable(err)) throw err;
      outcome = { ok: false, error: err, answer: errorAnswer(err, this.ctx.language) };
    }
    if (!outcome.ok) this.toolErrors++;
    yield this.emit(
      resultEvent(this.iteration, id, name, outcome, Math.round(performance.now() - started), this.ctx.language),
    );
    return outcome;
  }

  /**
   * The final event: the conclusion with the iteration and window as they
   * were, the memories it names in full (redacted for a caller without the
   * permission), and the report Handoff renders.
   */
  async *finish(conclusion: HandoffInput): AsyncGenerator<RecallEvent> {
    this.endIterationSpan();
    const input = { ...conclusion, iteration_used: Math.max(1, this.iteration), context_window_used: this.window };
    const memories = await Promise.all(
      input.relevant_memory_keys.map(async (key) => {
        const memory = this.opened.get(key) ?? (await getMemoryDetail(this.toolDeps, this.callerCtx, key));
        return { ...memory, relevance_score: this.seen.get(key)?.relevance_score ?? 0 };
      }),
    );
    const report = handoff(this.callerCtx, input);
    yield this.emit({
      kind: "handoff",
      result: {
        ...input,
        memories,
        strategy: this.strategy,
        message: report.message,
        searches: this.searches,
        llm_calls: this.llmCalls,
        tool_errors: this.toolErrors,
      },
    });
  }

  /**
   * The conclusion when the strategy could not reach its own (`why`): the
   * best of what the searches found, asking the user to confirm, in the
   * caller's language; or, when nothing was found, the error `failure` says.
   */
  fallback(why: Text, failure: ToolError): HandoffInput {
    const hits = this.hits();
    if (hits.length === 0) throw failure;
    const keys = hits
      .filter((h) => h.relevance_score >= RELEVANT_SCORE && h.superseded_by === "")
      .slice(0, FALLBACK_KEYS)
      .map((h) => h.memory_key);
    const named = hits.slice(0, FALLBACK_KEYS).map((h) => h.memory_key);
    const en = this.ctx.language === "en";
    return {
      reason: en
        ? `the recall could not finish normally (${why.en}): returning the best results so far`
        : `未能正常完成召回（${why.zh}），返回当前最佳结果`,
      search_summary: en
        ? `searched ${this.searches} times; the most relevant memories found: ${named.join(", ")}; not confirmed.`
        : `搜索了 ${this.searches} 次，找到的记忆中最相关的是：${named.join("、")}；未经确认。`,
      relevant_memory_keys: keys,
      // Unconfirmed: at most half what the best search score alone would say.
      confidence: round3((hits[0]?.relevance_score ?? 0) * 0.5),
      needs_more_info: true,
      follow_up_question: en
        ? `I could not confirm which memory you mean: is it one of ${named.join(", ")}? Could you add some details (when, what about)?`
        : `我没能确认您指的是哪条记忆，是 ${named.join("、")} 之一吗？能否补充一些细节（时间、主题）？`,
      iteration_used: Math.max(1, this.iteration),
      context_window_used: this.window,
      reasoning: "",
    };
  }

  private emit(body: RecallEventBody): RecallEvent {
    return { ...body, sequence: ++this.sequence, elapsed_ms: Math.round(performance.now() - this.started) };
  }

  private async execute(name: string, args: Record<string, Json>): Promise<ToolOutcome> {
    switch (name) {
      case "search_memories":
        return this.search(args);
      case "get_memory_detail": {
        const { memory_key } = parse(getMemoryDetailInput, args);
        const memory = await retryOnce(this.ctx, () => getMemoryDetail(this.toolDeps, this.ctx, memory_key));
        this.opened.set(memory.memory_key, memory);
        return { ok: true, tool: name, memory, answer: detailAnswer(memory) };
      }
      case "extract_search_keywords": {
        const input = parse(extractKeywordsInput, args);
        // Only the LLM strategy asks the LLM: the deterministic one never does.
        const llm = this.strategy === "llm" ? this.deps.llm : undefined;
        if (llm) this.llmCalls++;
        const extraction = await extractKeywords(llm, this.ctx, input.query, input.context, input.max_keywords);
        return { ok: true, tool: name, extraction, answer: extractionAnswer(extraction) };
      }
      case "expand_context_window":
        return this.expandWindow(args);
      case "handoff":
        return this.handoff(args);
      default:
        throw new ToolError({
          code: "invalid_argument",
          reason: "UNKNOWN_TOOL",
          message: text(
            `there is no tool ${JSON.stringify(name)}; the tools are ${SPEC_TOOLS.join(", ")}`,
            `没有工具 ${JSON.stringify(name)}；可用的工具：${SPEC_TOOLS.join(", ")}`,
          ),
          hint: {
            message: text("Call one of the tools offered.", "调用所提供的工具之一。"),
            validValues: [...SPEC_TOOLS],
          },
        });
    }
  }

  /** search_memories within the recall's bounds: its searches per iteration, results per search, and the caller's filters. */
  private async search(args: Record<string, Json>): Promise<ToolOutcome> {
    if (this.searchesLeft() <= 0) {
      throw new ToolError({
        code: "failed_precondition",
        reason: "SEARCH_LIMIT_REACHED",
        message: text(
          `this iteration has searched ${this.input.max_searches_per_iteration} times (the limit) and cannot search again`,
          `本轮已搜索 ${this.input.max_searches_per_iteration} 次（上限），不能继续搜索`,
        ),
        hint: {
          message: text(
            "Call get_memory_detail or handoff with the results you have; when earlier messages are needed, call expand_context_window (it ends this iteration; the next one may search again).",
            "用已有结果调用 get_memory_detail 或 handoff；需要更早的对话时调用 expand_context_window（结束本轮，下一轮可再搜索）。",
          ),
        },
      });
    }
    const input = parse(searchMemoriesInput, args);
    const max = this.input.max_results_per_search;
    if (input.limit > max) {
      throw invalidArgument([
        {
          field: "limit",
          description: text(
            `this recall allows at most ${max} results a search`,
            `本次召回每次搜索至多返回 ${max} 条结果`,
          ),
        },
      ]);
    }
    const allowed = this.input.memory_types;
    const outside = input.memory_types.filter((t) => allowed.length > 0 && !allowed.includes(t));
    if (outside.length > 0) {
      throw invalidArgument([
        {
          field: "memory_types",
          description: text(
            `this recall keeps to the memory types ${allowed.join(", ")}; ${outside.join(", ")} is not among them`,
            `本次召回只在记忆类型 ${allowed.join(", ")} 中搜索；${outside.join(", ")} 不在其中`,
          ),
        },
      ]);
    }
    const days = [input.time_range_days, this.input.time_range_days].filter((d) => d !== undefined);
    this.searchesInIteration++;
    this.searches++;
    const out = await retryOnce(this.ctx, () =>
      searchMemories(this.toolDeps, this.ctx, {
        ...input,
        memory_types: input.memory_types.length > 0 ? input.memory_types : allowed,
        ...(days.length > 0 ? { time_range_days: Math.min(...days) } : {}),
        // The recall counts its own searches.
        session_id: "",
      }),
    );
    for (const r of out.results) {
      const before = this.seen.get(r.memory_key);
      if (!before || before.relevance_score < r.relevance_score) {
        this.seen.set(r.memory_key, {
          memory_key: r.memory_key,
          relevance_score: r.relevance_score,
          superseded_by: r.superseded_by,
        });
      }
    }
    // The search's advice ("call Handoff") names the recall's tools, as the model calls them.
    return {
      ok: true,
      tool: "search_memories",
      out,
      answer: searchAnswer({ ...out, message: toolNamed(out.message) }),
    };
  }

  /**
   * expand_context_window with what the recall knows (the current window,
   * iteration and maximum, whatever the arguments say) and the conversation's
   * length: a window cannot grow past the messages there are.
   */
  private expandWindow(args: Record<string, Json>): ToolOutcome {
    const input = parse(expandContextWindowInput(this.deps.maxContextWindow), {
      ...args,
      current_size: this.window,
      current_iteration: this.iteration,
      max_iterations: this.input.max_iterations,
    });
    const total = this.input.messages.length;
    const expansion: ExpandContextWindowResult =
      this.window >= total
        ? {
            approved: false,
            new_size: this.window,
            iteration: this.iteration,
            max_iterations: this.input.max_iterations,
            message:
              this.ctx.language === "en"
                ? `the conversation has only ${total} messages and the window holds them all: it cannot grow; call handoff with the results you have`
                : `对话一共只有 ${total} 条消息，当前窗口已包含全部，无法继续拓展：请用已有结果调用 handoff`,
          }
        : expandContextWindow({ ...input, requested_size: Math.min(input.requested_size, total) }, this.ctx.language);
    return { ok: true, tool: "expand_context_window", expansion, reason: input.reason, answer: { ...expansion } };
  }

  /** handoff: every key it names must be one of the caller's memories (an agent's guess is sent back, not passed on). */
  private async handoff(args: Record<string, Json>): Promise<ToolOutcome> {
    const input = parse(handoffInput, args);
    const keys = [...new Set(input.relevant_memory_keys)];
    const unknown: string[] = [];
    await Promise.all(
      keys.map(async (key) => {
        if (this.opened.has(key)) return;
        try {
          this.opened.set(key, await retryOnce(this.ctx, () => getMemoryDetail(this.toolDeps, this.ctx, key)));
        } catch (err) {
          if (!(err instanceof ToolError) || err.code !== "not_found") throw err;
          unknown.push(key);
        }
      }),
    );
    if (unknown.length > 0) {
      const keysText = unknown.sort().join(", ");
      throw invalidArgument(
        [
          {
            field: "relevant_memory_keys",
            description: text(`the user has no memories ${keysText}`, `该用户没有记忆 ${keysText}`),
          },
        ],
        {
          message: text(
            "relevant_memory_keys must come from search_memories results: search, or leave them out.",
            "relevant_memory_keys 必须来自 search_memories 的结果：请先搜索，或不填。",
          ),
        },
      );
    }
    const conclusion = { ...input, relevant_memory_keys: keys };
    return {
      ok: true,
      tool: "handoff",
      handoff: conclusion,
      answer: { message: handoff(this.ctx, conclusion).message, task_completed: true },
    };
  }
}

/** The arguments of a tool call as the model wrote them: the object, or undefined when they are not one. */
function parseArguments(text: string): Record<string, Json> | undefined {
  try {
    const value = JSON.parse(text === "" ? "{}" : text) as Json;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function parse<S extends z.ZodType>(schema: S, args: Record<string, Json>): z.output<S> {
  const result = safeParseBoth(schema, args);
  if (!result.success) throw invalidArgument(violationsOf(result.error));
  return result.data;
}

/** Errors the strategy can act on; the rest (the store or cache down, a bug) end the recall. */
function correctable(err: ToolError): boolean {
  return ["invalid_argument", "not_found", "failed_precondition", "already_exists"].includes(err.code);
}

/** Spec §5.1 (数据库错误): a failure of the store or the cache is retried once, then reported. */
async function retryOnce<T>(ctx: CallContext, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (ctx.signal.aborted || !(err instanceof ToolError) || correctable(err)) throw err;
    ctx.log.warn({ reason: err.reason }, "recall: a tool failed; retrying once");
    return op();
  }
}

/**
 * The RPCs an error's words may name, as the recall's tools (the MCP tools' names) that the model calls;
 * a tool error's words then name only tools it has.
 */
const TOOL_OF_RPC: Record<string, string> = {
  SearchMemories: "search_memories",
  GetMemoryDetail: "get_memory_detail",
  ExtractSearchKeywords: "extract_search_keywords",
  ExpandContextWindow: "expand_context_window",
  Handoff: "handoff",
};
const RPC_NAME = new RegExp(`\\b(?:${Object.keys(TOOL_OF_RPC).join("|")})\\b`, "g");

/** Words naming the recall's tools rather than the RPCs. */
function toolNamed(words: string): string {
  return words.replace(RPC_NAME, (rpc) => TOOL_OF_RPC[rpc] ?? rpc);
}

/** A tool error's words in the caller's language, naming the recall's tools rather than the RPCs. */
function toolWords(err: ToolError, language: Language) {
  const words = renderIn(err, language);
  return {
    message: toolNamed(words.message),
    violations: words.violations.map((v) => ({ field: v.field, description: toolNamed(v.description) })),
    hint: words.hint === undefined ? undefined : toolNamed(words.hint.message),
  };
}

/** A tool error as the model reads it: what was wrong, which argument, and the next step. */
function errorAnswer(err: ToolError, language: Language): Json {
  const words = toolWords(err, language);
  return {
    error: compact({
      code: err.code.toUpperCase(),
      reason: err.reason,
      message: words.message,
      invalid_arguments: table(words.violations),
      valid_values: err.hint?.validValues ?? [],
      next_step: words.hint,
    }),
  };
}

function resultEvent(
  iteration: number,
  callId: string,
  name: string,
  outcome: ToolOutcome,
  ms: number,
  language: Language,
): ToolResultEvent {
  const base: ToolResultEvent = {
    kind: "tool_result",
    iteration,
    call_id: callId,
    name,
    ok: outcome.ok,
    hits: [],
    memory_key: "",
    keywords: [],
    approved: false,
    new_size: 0,
    summary: "",
    error_reason: "",
    error_message: "",
    duration_ms: ms,
  };
  if (!outcome.ok)
    return { ...base, error_reason: outcome.error.reason, error_message: toolWords(outcome.error, language).message };
  const en = language === "en";
  switch (outcome.tool) {
    case "search_memories": {
      const hits = outcome.out.results.map((r) => ({
        memory_key: r.memory_key,
        relevance_score: r.relevance_score,
        superseded_by: r.superseded_by,
      }));
      const best = hits[0];
      const summary = best
        ? en
          ? `${count(hits.length, "result", "results")}, the most relevant ${best.memory_key} (${best.relevance_score})`
          : `${hits.length} 条结果，最相关 ${best.memory_key} (${best.relevance_score})`
        : en
          ? "no results"
          : "没有结果";
      return { ...base, hits, summary };
    }
    case "get_memory_detail": {
      const m = outcome.memory;
      return {
        ...base,
        memory_key: m.memory_key,
        summary: en
          ? `${m.memory_key}: ${m.summary || "(no summary)"}${m.redacted ? " (sensitive content withheld)" : ""}`
          : `${m.memory_key}：${m.summary || "（无摘要）"}${m.redacted ? "（敏感内容已隐去）" : ""}`,
      };
    }
    case "extract_search_keywords": {
      const keywords = outcome.extraction.keywords.map((k) => k.keyword);
      return {
        ...base,
        keywords,
        summary: keywords.join(en ? ", " : "、") || (en ? "no keywords" : "没有关键词"),
      };
    }
    case "expand_context_window":
      return {
        ...base,
        approved: outcome.expansion.approved,
        new_size: outcome.expansion.new_size,
        summary: outcome.expansion.message,
      };
    case "handoff":
      return {
        ...base,
        summary: en
          ? `${count(outcome.handoff.relevant_memory_keys.length, "relevant memory", "relevant memories")}, confidence ${outcome.handoff.confidence}`
          : `${outcome.handoff.relevant_memory_keys.length} 条相关记忆，信心度 ${outcome.handoff.confidence}`,
      };
  }
}
