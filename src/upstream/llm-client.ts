import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { ToolError } from "../errors/tool-error";
import { excerpt, type PostFailure, postJson } from "./post-json";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
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
    .array(z.object({ message: z.object({ content: z.string().nullable() }) }))
    .min(1, "the answer has no choices"),
});

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

  async complete(
    ctx: CallContext,
    messages: ChatMessage[],
    options: { json?: boolean; temperature?: number } = {},
  ): Promise<Completion> {
    const started = performance.now();
    const request = {
      url: `${this.opts.baseUrl}/chat/completions`,
      apiKey: this.opts.apiKey,
      timeoutMs: this.opts.timeoutMs,
      body: {
        model: this.opts.model,
        messages,
        temperature: options.temperature ?? 0,
        ...(options.json ? { response_format: { type: "json_object" } } : {}),
      },
    };
    let last: ToolError | undefined;
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      ctx.signal.throwIfAborted();
      const posted = await postJson(ctx, request, completionSchema);
      if (posted.ok) {
        const ms = performance.now() - started;
        ctx.log.debug({ llm: this.opts.model, attempt, ms: Math.round(ms) }, "llm call");
        const content = posted.value.choices[0]!.message.content ?? "";
        return { content, model: posted.value.model ?? this.opts.model, attempts: attempt, latencyMs: ms };
      }
      const retryable = isRetryable(posted.failure);
      last = llmError(posted.failure);
      ctx.log.warn({ llm: this.opts.model, attempt, reason: last.reason, retryable }, "llm call failed");
      if (!retryable || attempt > RETRY_DELAYS_MS.length) break;
      await sleep(RETRY_DELAYS_MS[attempt - 1]!, ctx.signal);
    }
    throw last!;
  }
}

/** Only 429, 5xx and timeouts are retried (the resolver spec §9.2); a refused connection is not. */
function isRetryable(failure: PostFailure): boolean {
  return failure.kind === "timeout" || (failure.kind === "status" && (failure.status === 429 || failure.status >= 500));
}

function llmError(failure: PostFailure): ToolError {
  switch (failure.kind) {
    case "timeout":
      return toolError("deadline_exceeded", "LLM_TIMEOUT", `the LLM did not answer within ${failure.budgetMs} ms`);
    case "unreachable":
      return toolError("unavailable", "LLM_UNREACHABLE", `the LLM endpoint cannot be reached: ${failure.message}`);
    case "status":
      if (isRetryable(failure)) {
        const message = `the LLM answered HTTP ${failure.status}: ${excerpt(failure.body)}`;
        return toolError("unavailable", "LLM_UNAVAILABLE", message, failure.status);
      }
      return toolError(
        "failed_precondition",
        "LLM_REJECTED",
        `the LLM refused the request with HTTP ${failure.status}: ${excerpt(failure.body)}; check LLM_BASE_URL, LLM_API_KEY and LLM_MODEL`,
        failure.status,
      );
    case "bad_body":
      return toolError(
        "unavailable",
        "LLM_BAD_RESPONSE",
        `the LLM answered with an unexpected body: ${excerpt(failure.body)} (${failure.problem})`,
      );
  }
}

function toolError(code: ToolError["code"], reason: string, message: string, status?: number): ToolError {
  return new ToolError({
    code,
    reason,
    message,
    metadata: { upstream: "llm", ...(status ? { upstream_status: String(status) } : {}) },
    hint: {
      message:
        code === "failed_precondition"
          ? "The service's LLM settings need fixing; retrying will not help."
          : "Retry in a moment.",
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
