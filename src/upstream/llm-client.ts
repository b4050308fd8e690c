import { z } from "zod";
import { ToolError } from "../errors/tool-error";
import type { CallContext } from "../core/call-context";

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

  async complete(ctx: CallContext, messages: ChatMessage[], options: { json?: boolean; temperature?: number } = {}): Promise<Completion> {
    const started = performance.now();
    const body = JSON.stringify({
      model: this.opts.model,
      messages,
      temperature: options.temperature ?? 0,
      ...(options.json ? { response_format: { type: "json_object" } } : {}),
    });
    let last: ToolError | undefined;
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      ctx.signal.throwIfAborted();
      const outcome = await this.attempt(ctx, body);
      if ("content" in outcome) {
        ctx.log.debug({ llm: this.opts.model, attempt, ms: Math.round(performance.now() - started) }, "llm call");
        return { content: outcome.content, model: outcome.model, attempts: attempt, latencyMs: performance.now() - started };
      }
      last = outcome.error;
      ctx.log.warn({ llm: this.opts.model, attempt, reason: outcome.error.reason, retryable: outcome.retryable }, "llm call failed");
      if (!outcome.retryable || attempt > RETRY_DELAYS_MS.length) break;
      await sleep(RETRY_DELAYS_MS[attempt - 1]!, ctx.signal);
    }
    throw last!;
  }

  private async attempt(ctx: CallContext, body: string): Promise<{ content: string; model: string } | { error: ToolError; retryable: boolean }> {
    const remaining = ctx.remainingMs();
    const timeoutMs = Math.max(1, Math.min(this.opts.timeoutMs, remaining ?? Infinity));
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${this.opts.baseUrl}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body,
        signal: AbortSignal.any([ctx.signal, timeout]),
      });
    } catch (err) {
      ctx.signal.throwIfAborted();
      if (timeout.aborted) {
        return { error: llmError("deadline_exceeded", "LLM_TIMEOUT", `the LLM did not answer within ${timeoutMs} ms`), retryable: true };
      }
      // Only 429, 5xx and timeouts are retried (the resolver spec §9.2); a refused connection is not.
      return { error: llmError("unavailable", "LLM_UNREACHABLE", `the LLM endpoint cannot be reached: ${(err as Error).message}`), retryable: false };
    }
    const text = await res.text().catch(() => "");
    if (res.status === 429 || res.status >= 500) {
      return { error: llmError("unavailable", "LLM_UNAVAILABLE", `the LLM answered HTTP ${res.status}: ${excerpt(text)}`, res.status), retryable: true };
    }
    if (!res.ok) {
      return {
        error: llmError("failed_precondition", "LLM_REJECTED", `the LLM refused the request with HTTP ${res.status}: ${excerpt(text)}; check LLM_BASE_URL, LLM_API_KEY and LLM_MODEL`, res.status),
        retryable: false,
      };
    }
    let parsed: z.output<typeof completionSchema>;
    try {
      parsed = completionSchema.parse(JSON.parse(text));
    } catch (err) {
      return { error: llmError("unavailable", "LLM_BAD_RESPONSE", `the LLM answered with an unexpected body: ${excerpt(text)} (${(err as Error).message})`), retryable: false };
    }
    return { content: parsed.choices[0]!.message.content ?? "", model: parsed.model ?? this.opts.model };
  }
}

function llmError(code: ToolError["code"], reason: string, message: string, status?: number): ToolError {
  return new ToolError({
    code,
    reason,
    message,
    metadata: { upstream: "llm", ...(status ? { upstream_status: String(status) } : {}) },
    hint: { message: code === "failed_precondition" ? "The service's LLM settings need fixing; retrying will not help." : "Retry in a moment." },
  });
}

function excerpt(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? `${t.slice(0, 200)}…` : t || "(empty body)";
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
