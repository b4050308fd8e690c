import type { z } from "zod";
import type { CallContext } from "../core/call-context";
import { inSpan, outgoingTraceparent } from "../core/telemetry";
import { type Text, text } from "../errors/text";

/** One JSON POST to an AI endpoint (LLM, embeddings, reranker). */
export interface PostJsonRequest {
  /** Which endpoint this is, for the call's span: "llm", "embeddings" or "reranker". */
  service: string;
  url: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey: string | undefined;
  /** Sent as JSON. */
  body: unknown;
  /** The most this call may take, ms; the caller's remaining deadline shortens it. */
  timeoutMs: number;
}

/**
 * Why a POST gave no usable answer. Each client turns this into its own
 * ToolError (its reasons, its words) and decides what is worth retrying. The
 * bodies and messages here are the endpoint's own text: postJson logs them
 * (with the call's trace id); they never go into a ToolError, since an
 * endpoint's error may echo anything, its caller's Authorization header
 * included.
 */
export type PostFailure =
  /** No answer within `budgetMs`: the configured timeout or, when shorter, what was left of the caller's deadline. */
  | { kind: "timeout"; budgetMs: number }
  /** The connection failed (refused, reset, DNS) before or while the answer arrived; `code` as ECONNREFUSED, when known. */
  | { kind: "unreachable"; code: string | undefined; message: string }
  /** A status outside 2xx; `body` as it came. */
  | { kind: "status"; status: number; body: string }
  /** A 2xx whose body is not JSON or not of the expected shape; `problem` is the parser's message. */
  | { kind: "bad_body"; status: number; body: string; problem: string };

export type Posted<T> = { ok: true; value: T } | { ok: false; failure: PostFailure };

/**
 * POSTs `request.body` as JSON and reads the answer with `schema`. The call
 * follows the caller's abort signal and times out after `timeoutMs` or the
 * caller's remaining deadline, whichever is shorter. A caller's abort is
 * rethrown as it came (the server maps it); every other failure is logged
 * and returned as a value, never thrown, so the client can map and retry it.
 */
export function postJson<S extends z.ZodType>(
  ctx: CallContext,
  request: PostJsonRequest,
  schema: S,
): Promise<Posted<z.output<S>>> {
  return inSpan(
    `${request.service} POST`,
    { "upstream.service": request.service, "http.request.method": "POST" },
    async (span) => {
      const posted = await post(ctx, request, schema);
      if (!posted.ok) {
        span.setAttribute("upstream.failure", posted.failure.kind);
        if ("status" in posted.failure) span.setAttribute("http.response.status_code", posted.failure.status);
      } else span.setAttribute("http.response.status_code", 200);
      return posted;
    },
    "client",
  );
}

async function post<S extends z.ZodType>(
  ctx: CallContext,
  request: PostJsonRequest,
  schema: S,
): Promise<Posted<z.output<S>>> {
  ctx.signal.throwIfAborted();
  const budgetMs = Math.max(1, Math.min(request.timeoutMs, ctx.remainingMs() ?? Infinity));
  const timeout = AbortSignal.timeout(budgetMs);
  let status: number;
  let body: string;
  try {
    const res = await fetch(request.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}),
        ...traceHeader(),
      },
      body: JSON.stringify(request.body),
      signal: AbortSignal.any([ctx.signal, timeout]),
    });
    status = res.status;
    body = await res.text();
  } catch (err) {
    ctx.signal.throwIfAborted();
    const failure: PostFailure = timeout.aborted
      ? { kind: "timeout", budgetMs }
      : { kind: "unreachable", code: networkCode(err), message: messageWithCauses(err) };
    return failed(ctx, request, failure);
  }
  if (status < 200 || status > 299) return failed(ctx, request, { kind: "status", status, body });
  try {
    return { ok: true, value: schema.parse(JSON.parse(body)) };
  } catch (err) {
    return failed(ctx, request, { kind: "bad_body", status, body, problem: (err as Error).message });
  }
}

function failed(ctx: CallContext, request: PostJsonRequest, failure: PostFailure): { ok: false; failure: PostFailure } {
  const detail =
    failure.kind === "timeout"
      ? `no answer within ${failure.budgetMs} ms`
      : failure.kind === "unreachable"
        ? failure.message
        : failure.kind === "status"
          ? `HTTP ${failure.status}: ${excerpt(failure.body)}`
          : `HTTP ${failure.status}, ${failure.problem}: ${excerpt(failure.body)}`;
  ctx.log.warn({ url: request.url, kind: failure.kind, detail }, "upstream POST failed");
  return { ok: false, failure };
}

/** The error and its causes: fetch says "fetch failed", and what happened (ECONNREFUSED, the address) is its cause. */
function chain(err: unknown): (Error & { code?: unknown })[] {
  const out: (Error & { code?: unknown })[] = [];
  for (let e = err; e instanceof Error && out.length < 4; e = e.cause) out.push(e);
  return out;
}

function messageWithCauses(err: unknown): string {
  return (
    chain(err)
      .map((e) => e.message)
      .join(": ") || String(err)
  );
}

/** The network error's code (ECONNREFUSED, ETIMEDOUT): says what happened without naming where. */
function networkCode(err: unknown): string | undefined {
  const code = chain(err).find((e) => typeof e.code === "string" && /^[A-Z][A-Z0-9_]{1,63}$/.test(e.code))?.code;
  return code as string | undefined;
}

/** A body shortened for an error message: whitespace collapsed, at most 200 characters. */
export function excerpt(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? `${t.slice(0, 200)}…` : t || "(empty body)";
}

/**
 * The failure in plain words about `subject` ("the reranker timed out", "the
 * reranker answered HTTP 503"), for clients that need no words of their own:
 * the status class and the network error's code, never the endpoint's text.
 */
export function failureMessage(subject: Text, failure: PostFailure): Text {
  switch (failure.kind) {
    case "timeout":
      return text(
        `${subject.en} timed out after ${failure.budgetMs} ms`,
        `${subject.zh}在 ${failure.budgetMs} ms 后超时`,
      );
    case "unreachable":
      return text(
        `${subject.en} cannot be reached${failure.code ? ` (${failure.code})` : ""}`,
        `无法连接${subject.zh}${failure.code ? `（${failure.code}）` : ""}`,
      );
    case "status":
      return text(`${subject.en} answered HTTP ${failure.status}`, `${subject.zh}返回了 HTTP ${failure.status}`);
    case "bad_body":
      return text(
        `${subject.en} answered HTTP ${failure.status} with a body this service cannot read`,
        `${subject.zh}返回了 HTTP ${failure.status}，其返回体本服务无法读取`,
      );
  }
}

/** The call span's traceparent, when tracing is on: the endpoint's own tracing joins the trace. */
function traceHeader(): Record<string, string> {
  const traceparent = outgoingTraceparent();
  return traceparent === undefined ? {} : { traceparent };
}
