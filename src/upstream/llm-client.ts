import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { failureMessage, type PostFailure, postJson } from "./post-json";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** A function the LLM asked to call: its arguments as the JSON text the model wrote (it may be invalid). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A turn of a function-calling conversation: plain messages, the assistant's calls, and each call's result. */
export type ChatTurn =
  | ChatMessage
  | { role: "assistant"; content: string; tool_calls: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** A function the LLM may call (OpenAI's tool definition): parameters is a JSON Schema object. */
export interface FunctionTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The assistant's answer in a function-calling conversation: text, calls, or both. */
export interface ToolTurn {
  content: string;
  toolCalls: ToolCall[];
  model: string;
  attempts: number;
  latencyMs: number;
}

export interface LlmOptions {
  /** The OpenAI-compatible base URL, e.g. https://api.example.com/v1 (chat completions at {baseUrl}/chat/completions). */
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  /** Per attempt, ms. */
  timeoutMs: number;
}

export interface Completion {
  /** The assistant message's text. */
  content: string;
  model: string;
  /** Attempts made (1 + retries). */
  attempts: number;
  latencyMs: number;
}

/** Waits before each retry (the resolver spec: at most 2 retries, 100 ms then 200 ms). */
const RETRY_DELAYS_MS = [100, 200];

const completionSchema = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                function: z.object({ name: z.string(), arguments: z.string().default("{}") }),
              }),
            )
            .nullable()
            .optional(),
        }),
      }),
    )
    .min(1, "the answer has no choices"),
});
type CompletionBody = z.output<typeof completionSchema>;

/**
 * A client of any OpenAI-compatible chat completions endpoint. It asks for a
 * JSON object when `json` is set, times each attempt out, and retries only what
 * the spec lets it: HTTP 429, 5xx and timeouts, at most twice (100 ms, then
 * 200 ms). Other failures return at once.
 */
export class LlmClient {
  constructor(private readonly opts: LlmOptions) {}

  get model(): string {
    return this.opts.model;
  }

  /** One completion; `retries` (at most 2, the default) lowers the retries for a caller bounded in time. */
  async complete(
    ctx: CallContext,
    messages: ChatMessage[],
    options: { json?: boolean; temperature?: number; retries?: number } = {},
  ): Promise<Completion> {
    const answer = await this.post(ctx, options.retries ?? RETRY_DELAYS_MS.length, {
      messages,
      temperature: options.temperature ?? 0,
      ...(options.json ? { response_format: { type: "json_object" } } : {}),
    });
    return {
      content: answer.message.content ?? "",
      model: answer.model,
      attempts: answer.attempts,
      latencyMs: answer.latencyMs,
    };
  }

  /**
   * One turn of a function-calling conversation: the model answers with text,
   * with calls of the given tools, or both. `toolChoice` "required" makes it
   * call one. Calls come back as the model wrote them; the caller checks them.
   * `retries` (at most 2, the default) lowers how often a 429, 5xx or timeout
   * is retried, for a caller that retries whole turns itself.
   */
  async chat(
    ctx: CallContext,
    turns: readonly ChatTurn[],
    tools: readonly FunctionTool[],
    options: { toolChoice?: "auto" | "required"; temperature?: number; retries?: number } = {},
  ): Promise<ToolTurn> {
    const answer = await this.post(ctx, options.retries ?? RETRY_DELAYS_MS.length, {
      messages: turns.map((t) =>
        "tool_calls" in t
          ? {
              role: "assistant",
              content: t.content === "" ? null : t.content,
              tool_calls: t.tool_calls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : t,
      ),
      tools: tools.map((t) => ({ type: "function", function: t })),
      tool_choice: options.toolChoice ?? "auto",
      temperature: options.temperature ?? 0,
    });
    return {
      content: answer.message.content ?? "",
      toolCalls: (answer.message.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
      model: answer.model,
      attempts: answer.attempts,
      latencyMs: answer.latencyMs,
    };
  }

  /** Posts a chat completion with at most `retries` of the retries the spec allows; the first choice's message. */
  private async post(
    ctx: CallContext,
    retries: number,
    body: Record<string, unknown>,
  ): Promise<{
    message: CompletionBody["choices"][number]["message"];
    model: string;
    attempts: number;
    latencyMs: number;
  }> {
    const started = performance.now();
    const request = {
      service: "llm",
      url: `${this.opts.baseUrl}/chat/completions`,
      apiKey: this.opts.apiKey,
      timeoutMs: this.opts.timeoutMs,
      body: { model: this.opts.model, ...body },
    };
    let last: ToolError | undefined;
    const attempts = 1 + Math.max(0, Math.min(retries, RETRY_DELAYS_MS.length));
    for (let attempt = 1; attempt <= attempts; attempt++) {
      ctx.signal.throwIfAborted();
      const posted = await postJson(ctx, request, completionSchema);
      if (posted.ok) {
        const ms = performance.now() - started;
        ctx.log.debug({ llm: this.opts.model, attempt, ms: Math.round(ms) }, "llm call");
        return {
          message: posted.value.choices[0]!.message,
          model: posted.value.model ?? this.opts.model,
          attempts: attempt,
          latencyMs: ms,
        };
      }
      const retryable = isRetryable(posted.failure);
      last = llmError(posted.failure);
      ctx.log.warn({ llm: this.opts.model, attempt, reason: last.reason, retryable }, "llm call failed");
      if (!retryable || attempt === attempts) break;
      await sleep(RETRY_DELAYS_MS[attempt - 1]!, ctx.signal);
    }
    throw last!;
  }
}

/** Only 429, 5xx and timeouts are retried (the resolver spec §9.2); a refused connection is not. */
function isRetryable(failure: PostFailure): boolean {
  return failure.kind === "timeout" || (failure.kind === "status" && (failure.status === 429 || failure.status >= 500));
}

const LLM_ENDPOINT = text("the LLM endpoint", "LLM 端点");

/** The LLM's failure in our words: the status class, never the endpoint's text (postJson logged that). */
function llmError(failure: PostFailure): ToolError {
  switch (failure.kind) {
    case "timeout":
      return toolError(
        "deadline_exceeded",
        "LLM_TIMEOUT",
        text(`the LLM did not answer within ${failure.budgetMs} ms`, `LLM 未在 ${failure.budgetMs} ms 内作答`),
      );
    case "unreachable":
      return toolError("unavailable", "LLM_UNREACHABLE", failureMessage(LLM_ENDPOINT, failure));
    case "status":
      if (isRetryable(failure)) {
        return toolError("unavailable", "LLM_UNAVAILABLE", failureMessage(LLM_ENDPOINT, failure), failure.status);
      }
      return toolError(
        "failed_precondition",
        "LLM_REJECTED",
        text(
          `the LLM endpoint refused the request with HTTP ${failure.status}; check LLM_BASE_URL, LLM_API_KEY and LLM_MODEL`,
          `LLM 端点以 HTTP ${failure.status} 拒绝了请求；请检查 LLM_BASE_URL、LLM_API_KEY 和 LLM_MODEL`,
        ),
        failure.status,
      );
    case "bad_body":
      return toolError("unavailable", "LLM_BAD_RESPONSE", failureMessage(LLM_ENDPOINT, failure), failure.status);
  }
}

function toolError(code: ToolError["code"], reason: string, message: Text, status?: number): ToolError {
  return new ToolError({
    code,
    reason,
    message,
    metadata: { upstream: "llm", ...(status ? { upstream_status: String(status) } : {}) },
    hint: {
      message:
        code === "failed_precondition"
          ? text(
              "The service's LLM settings need fixing; retrying will not help.",
              "本服务的 LLM 配置需要修正；重试无济于事。",
            )
          : text("Retry in a moment.", "请稍后重试。"),
    },
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** A bounded completion: its content, or why there is none (`timedOut`: the bound, not the LLM, ended it). */
export type BoundedCompletion = { ok: true; content: string } | { ok: false; error: unknown; timedOut: boolean };

/**
 * One JSON completion of `prompt`, one attempt, within `timeoutMs` (and the
 * caller's deadline): for a step a call waits on and can go without (a query
 * rewrite, names proposed for a mention). Only the caller's own abort throws.
 */
export async function completeWithin(
  llm: LlmClient,
  ctx: CallContext,
  prompt: string,
  timeoutMs: number,
): Promise<BoundedCompletion> {
  const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
  try {
    const answer = await llm.complete({ ...ctx, signal }, [{ role: "user", content: prompt }], {
      json: true,
      retries: 0,
    });
    return { ok: true, content: answer.content };
  } catch (error) {
    ctx.signal.throwIfAborted();
    return { ok: false, error, timedOut: signal.aborted };
  }
}
