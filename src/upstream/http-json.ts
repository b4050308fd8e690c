import { randomBytes } from "node:crypto";
import { setMaxListeners } from "node:events";
import http from "node:http";
import https from "node:https";
import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { inSpan, outgoingTraceparent, type SpanNotes, tracingOn } from "../core/telemetry";
import { fromZodMessage, inBoth, type Language, type Text, text } from "../errors/text";
import { type ErrorCode, type FieldViolation, ToolError } from "../errors/tool-error";
import { safeParseBoth } from "../errors/validation";

/**
 * JSON over HTTP/1.1 to one platform service, on node:http with a keep-alive
 * pool of its own. Every call has a timeout (the configured one, or the
 * caller's remaining deadline when that is shorter), follows the caller's
 * abort signal, forwards the caller's identity and trace, and logs one line.
 * Every failure becomes a ToolError an agent can act on; a caller's abort is
 * rethrown as it came, for the server to map. What the platform said in an
 * error body is logged with the call's trace id, never passed on: the caller
 * gets the status, the platform's error code and the fields it named.
 */
export interface JsonClient {
  /** The service's name in logs and error metadata, e.g. "ontology-query". */
  readonly upstream: string;
  /** Sends one request and returns the body parsed with `schema`. */
  call<S extends z.ZodType>(ctx: CallContext, request: JsonRequest, schema: S): Promise<z.output<S>>;
  /** Closes the pooled sockets. */
  close(): void;
}

export interface JsonClientOptions {
  upstream: string;
  /** scheme://host[:port][/prefix], without a trailing slash. */
  baseUrl: string;
  timeoutMs: number;
  maxSockets: number;
  /** Sent on every call, e.g. ontology-query's `X-HTTP-Method-Override: GET`. */
  headers?: Record<string, string>;
}

export interface JsonRequest {
  method: "GET" | "POST";
  /** Below the base URL, each segment already encoded with `segment` (src/upstream/path-ids.ts). */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** What is asked for, in the caller's terms and both languages ("object type disease of kn_medical"): errors name it. */
  what?: Text;
}

/** A larger answer is refused rather than buffered. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const EXCERPT_CHARS = 200;

/** What is read of the platform's error body (its description, solution and link are free text: logged only). */
const platformErrorSchema = z.object({
  error_code: z.string().min(1),
  error_details: z.unknown().optional(),
});

const violationListSchema = z.array(z.object({ field: z.string(), description: z.string() })).min(1);

/**
 * What of an error body may reach the caller: an error code or a field name of
 * this shape (a stable identifier, no free text that could carry a secret).
 */
export const ERROR_CODE = /^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/;
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.[\]-]{0,127}$/;

export function createJsonClient(opts: JsonClientOptions): JsonClient {
  const base = new URL(opts.baseUrl);
  const secure = base.protocol === "https:";
  const agent = secure
    ? new https.Agent({ keepAlive: true, maxSockets: opts.maxSockets })
    : new http.Agent({ keepAlive: true, maxSockets: opts.maxSockets });
  const basePath = base.pathname.replace(/\/+$/, "");

  return {
    upstream: opts.upstream,
    close: () => agent.destroy(),
    call(ctx, request, schema) {
      if (!tracingOn()) return call(ctx, request, schema);
      return inSpan(
        `${opts.upstream} ${request.method}`,
        { "upstream.service": opts.upstream, "http.request.method": request.method, "server.address": base.host },
        (span) => call(ctx, request, schema, span),
        "client",
      );
    },
  };

  async function call<S extends z.ZodType>(
    ctx: CallContext,
    request: JsonRequest,
    schema: S,
    span?: SpanNotes,
  ): Promise<z.output<S>> {
    const url = new URL(base.origin + basePath + request.path);
    for (const [k, v] of Object.entries(request.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const where: Where = {
      upstream: opts.upstream,
      method: request.method,
      path: basePath + request.path,
      what: request.what,
    };
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    ctx.signal.throwIfAborted();
    const remaining = ctx.remainingMs();
    const callerBound = remaining !== undefined && remaining < opts.timeoutMs;
    const budgetMs = Math.floor(callerBound ? remaining : opts.timeoutMs);
    if (budgetMs <= 0) {
      const err = timedOut(where, 0, true);
      ctx.log.warn({ ...logged(where), status: 0, ms: 0, reason: err.reason }, "upstream call not made: no time left");
      throw err;
    }

    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body), "utf8");
    const headers: Record<string, string> = {
      accept: "application/json",
      "x-account-type": ctx.caller.accountType,
      ...opts.headers,
    };
    if (ctx.caller.accountId !== "") headers["x-account-id"] = ctx.caller.accountId;
    const traceparent = outgoingTraceparent() ?? traceparentOf(ctx.traceId);
    if (traceparent) headers["traceparent"] = traceparent;
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
    }

    // One signal for the timeout and the caller's abort (AbortSignal.any costs more than the request itself).
    const abort = new AbortController();
    const timeout = setTimeout(() => abort.abort(), budgetMs);
    const callerGone = () => abort.abort(ctx.signal.reason);
    // A call may have dozens of requests in flight, each listening until it ends (the listener is
    // removed below): Node's leak warning at 11 listeners would be a false alarm.
    setMaxListeners(0, ctx.signal);
    ctx.signal.addEventListener("abort", callerGone, { once: true });
    let status = 0;
    try {
      const res = await send(url, { method: request.method, headers, agent, signal: abort.signal }, payload);
      status = res.status;
      span?.setAttribute("http.response.status_code", status);
      const value = readBody(where, res, schema);
      ctx.log.debug({ ...logged(where), status, ms: elapsed() }, "upstream call");
      return value;
    } catch (err) {
      if (ctx.signal.aborted) {
        ctx.log.debug({ ...logged(where), status, ms: elapsed() }, "upstream call abandoned: the caller went away");
        throw ctx.signal.reason;
      }
      const failure =
        err instanceof ToolError
          ? err
          : abort.signal.aborted
            ? timedOut(where, budgetMs, callerBound)
            : unreachable(where, err);
      ctx.log.warn(
        { ...logged(where), status, ms: elapsed(), reason: failure.reason, detail: failure.privateDetail },
        "upstream call failed",
      );
      throw failure;
    } finally {
      clearTimeout(timeout);
      ctx.signal.removeEventListener("abort", callerGone);
    }
  }
}

interface Where {
  upstream: string;
  method: string;
  path: string;
  what: Text | undefined;
}

interface RawResponse {
  status: number;
  body: Buffer;
}

/**
 * One request and its whole answer. A request written to a kept-alive socket
 * that the server had just closed for being idle (Node's and Go's servers do
 * after a few seconds) fails with ECONNRESET or EPIPE before any answer: the
 * server never read it, so it is sent once more on a new socket, as Node's
 * documentation advises. Any other failure, or one on a new socket, is the
 * caller's to see.
 */
async function send(url: URL, options: http.RequestOptions, payload: Buffer | undefined): Promise<RawResponse> {
  const first = await sendOnce(url, options, payload);
  if (first.ok) return first.response;
  if (!first.staleSocket) throw first.error;
  const second = await sendOnce(url, options, payload);
  if (second.ok) return second.response;
  throw second.error;
}

type Sent = { ok: true; response: RawResponse } | { ok: false; error: unknown; staleSocket: boolean };

function sendOnce(url: URL, options: http.RequestOptions, payload: Buffer | undefined): Promise<Sent> {
  return new Promise((resolve) => {
    const transport = url.protocol === "https:" ? https : http;
    let answered = false;
    const req = transport.request(url, options, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) req.destroy(new ResponseTooLarge());
        else chunks.push(chunk);
      });
      res.on("end", () =>
        resolve({ ok: true, response: { status: res.statusCode ?? 0, body: Buffer.concat(chunks) } }),
      );
      res.on("error", (error) => resolve({ ok: false, error, staleSocket: false }));
      res.on("close", () => {
        if (!res.complete)
          resolve({
            ok: false,
            error: new Error("the connection closed before the whole answer arrived"),
            staleSocket: false,
          });
      });
    });
    req.on("error", (error: NodeJS.ErrnoException) => {
      const staleSocket =
        req.reusedSocket &&
        !answered &&
        !options.signal?.aborted &&
        (error.code === "ECONNRESET" || error.code === "EPIPE");
      resolve({ ok: false, error, staleSocket });
    });
    req.end(payload);
  });
}

class ResponseTooLarge extends Error {
  override name = "ResponseTooLarge";
  constructor() {
    super(`the answer is larger than ${MAX_RESPONSE_BYTES} bytes`);
  }
}

function readBody<S extends z.ZodType>(where: Where, res: RawResponse, schema: S): z.output<S> {
  const body = res.body.toString("utf8");
  if (res.status < 200 || res.status > 299) throw fromStatus(where, res.status, body);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw badResponse(
      where.upstream,
      `${where.method} ${where.path} answered HTTP ${res.status} with a body that is not JSON: ${excerpt(body)}`,
      res.status,
      text("a body that is not JSON", "返回体不是 JSON"),
    );
  }
  const parsed = safeParseBoth(schema, json);
  if (!parsed.success) {
    const issues = inBoth((l) => issuesIn(parsed.error, l));
    throw badResponse(
      where.upstream,
      `${where.method} ${where.path} answered with a body of an unexpected shape (${issues.en}): ${excerpt(body)}`,
      res.status,
      // The issues are the schema's words and the answer's structure (paths), never its values.
      text(`a body of an unexpected shape: ${issues.en}`, `返回体的结构不符合预期：${issues.zh}`),
    );
  }
  return parsed.data;
}

/** A failed parse in one line and one language: its first three issues, each with the path it is at. */
function issuesIn(error: z.ZodError, language: Language): string {
  return error.issues
    .slice(0, 3)
    .map(
      (i) =>
        `${i.path.join(".") || (language === "en" ? "(top level)" : "（顶层）")}: ${fromZodMessage(i.message)[language]}`,
    )
    .join(language === "en" ? "; " : "；");
}

/** Where a call went, as the log says it (in English, like every log line). */
function logged(where: Where) {
  return { upstream: where.upstream, method: where.method, path: where.path, what: where.what?.en };
}

interface StatusMapping {
  code: ErrorCode;
  reason: string;
  what: Text;
  hint: Text;
}

const RETRY_LATER = text(
  "Retrying in a moment may help; if it keeps failing, the platform needs attention.",
  "稍后重试可能成功；若一直失败，平台需要处理。",
);
const DO_NOT_RETRY = text("Retrying the same request will fail again.", "原样重试仍会失败。");

/** `first` followed by DO_NOT_RETRY, in each language. */
const thenDoNotRetry = (first: Text): Text => text(`${first.en} ${DO_NOT_RETRY.en}`, `${first.zh}${DO_NOT_RETRY.zh}`);

function mappingOf(status: number): StatusMapping {
  switch (status) {
    case 400:
    case 422:
      return {
        code: "invalid_argument",
        reason: "UPSTREAM_INVALID_ARGUMENT",
        what: text("rejected the request", "拒绝了请求"),
        hint: thenDoNotRetry(text("Correct the request.", "请改正请求。")),
      };
    case 401:
      return {
        code: "unauthenticated",
        reason: "UPSTREAM_UNAUTHENTICATED",
        what: text("did not accept the caller's identity", "不接受调用方的身份"),
        hint: thenDoNotRetry(
          text(
            "Call with a valid x-account-id and x-account-type.",
            "请使用有效的 x-account-id 和 x-account-type 调用。",
          ),
        ),
      };
    case 403:
      return {
        code: "permission_denied",
        reason: "UPSTREAM_PERMISSION_DENIED",
        what: text("denied the caller access", "拒绝了调用方的访问"),
        hint: thenDoNotRetry(text("The account lacks access to this resource.", "该账户无权访问此资源。")),
      };
    case 404:
      return {
        code: "not_found",
        reason: "UPSTREAM_NOT_FOUND",
        what: text("does not have it", "没有所请求的内容"),
        hint: thenDoNotRetry(text("Check the ids in the request.", "请检查请求中的 id。")),
      };
    case 408:
    case 504:
      return {
        code: "deadline_exceeded",
        reason: "UPSTREAM_TIMEOUT",
        what: text("timed out", "超时"),
        hint: RETRY_LATER,
      };
    case 409:
      return {
        code: "failed_precondition",
        reason: "UPSTREAM_FAILED_PRECONDITION",
        what: text("cannot do this in its current state", "在当前状态下无法执行此操作"),
        hint: DO_NOT_RETRY,
      };
    case 429:
      return {
        code: "unavailable",
        reason: "UPSTREAM_RATE_LIMITED",
        what: text("is rate limiting calls", "正在限制调用频率"),
        hint: text("Wait a little, then retry.", "稍等片刻再重试。"),
      };
  }
  if (status >= 500)
    return { code: "unavailable", reason: "UPSTREAM_UNAVAILABLE", what: text("failed", "出错"), hint: RETRY_LATER };
  // Other 4xx (405, 413, 415, ...) and anything unexpected: this service and the platform disagree.
  return {
    code: "failed_precondition",
    reason: "UPSTREAM_REJECTED",
    what: text("refused the call", "拒绝了调用"),
    hint: thenDoNotRetry(
      text(
        "The platform's version or address may not match this service's settings.",
        "平台的版本或地址可能与本服务的配置不符。",
      ),
    ),
  };
}

/**
 * The ToolError for a non-2xx answer. The caller learns the status, the
 * platform's error_code and the fields its error_details named (identifiers
 * of a bounded shape: they tell an agent what to fix); the description,
 * solution and the rest of the body are free text that may carry anything
 * (addresses, tokens echoed back) and go only to the log, as privateDetail.
 */
function fromStatus(where: Where, status: number, body: string): ToolError {
  const m = mappingOf(status);
  let platform: z.output<typeof platformErrorSchema> | undefined;
  try {
    const parsed = platformErrorSchema.safeParse(JSON.parse(body));
    if (parsed.success) platform = parsed.data;
  } catch {
    // Not JSON: a proxy's page or an empty body; the log has its excerpt.
  }
  const errorCode = platform && ERROR_CODE.test(platform.error_code) ? platform.error_code : undefined;
  const metadata: Record<string, string> = { upstream: where.upstream, upstream_status: String(status) };
  if (errorCode) metadata["error_code"] = errorCode;
  // error_details is free-form; when it lists fields, the agent learns which (in our words, not the platform's).
  const listed = violationListSchema.safeParse(platform?.error_details);
  const fields = listed.success ? [...new Set(listed.data.map((v) => v.field).filter((f) => FIELD_NAME.test(f)))] : [];
  const code = errorCode ? ` (${errorCode})` : "";
  const violations: FieldViolation[] = fields.map((field) => ({
    field,
    description: text(`${where.upstream} rejected this field${code}`, `${where.upstream} 拒绝了这个字段${code}`),
  }));
  const retryable = m.code === "unavailable" || m.code === "deadline_exceeded";
  const message = inBoth((l) => {
    const en = l === "en";
    const said = [
      errorCode ? `error_code ${errorCode}` : "",
      fields.length > 0 ? `${en ? "fields" : "字段"} ${fields.join(", ")}` : "",
    ].filter((p) => p !== "");
    const asked = where.what ? (en ? `asked for ${where.what.en}; ` : `请求的是${where.what.zh}；`) : "";
    const retry = retryable
      ? en
        ? "retrying in a moment may help"
        : "稍后重试可能成功"
      : en
        ? "retrying will not help"
        : "重试无济于事";
    return en
      ? `${where.upstream} ${m.what.en} (${asked}HTTP ${status}${said.length > 0 ? `; ${said.join("; ")}` : ""}; ${retry})`
      : `${where.upstream} ${m.what.zh}（${asked}HTTP ${status}${said.length > 0 ? `；${said.join("；")}` : ""}；${retry}）`;
  });
  return new ToolError({
    code: m.code,
    reason: m.reason,
    message,
    metadata,
    violations,
    hint: { message: m.hint },
    privateDetail: `${where.method} ${where.path} answered HTTP ${status}: ${excerpt(body)}`,
  });
}

function timedOut(where: Where, budgetMs: number, callerBound: boolean): ToolError {
  return new ToolError({
    code: "deadline_exceeded",
    reason: "UPSTREAM_TIMEOUT",
    message: callerBound
      ? text(
          `${where.upstream} did not answer within the ${budgetMs} ms left of the caller's deadline; retrying needs a longer deadline`,
          `${where.upstream} 未在调用方截止时间剩余的 ${budgetMs} ms 内作答；重试需要更长的截止时间`,
        )
      : text(
          `${where.upstream} did not answer within ${budgetMs} ms; retrying in a moment may help`,
          `${where.upstream} 未在 ${budgetMs} ms 内作答；稍后重试可能成功`,
        ),
    metadata: {
      upstream: where.upstream,
      timeout_ms: String(budgetMs),
      limited_by: callerBound ? "caller_deadline" : "upstream_timeout",
    },
    hint: {
      message: callerBound ? text("Call again with a longer deadline.", "用更长的截止时间重新调用。") : RETRY_LATER,
    },
  });
}

function unreachable(where: Where, err: unknown): ToolError {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof ResponseTooLarge)
    return badResponse(
      where.upstream,
      `${where.method} ${where.path}: ${e.message}`,
      undefined,
      text("an answer too large", "返回体过大"),
    );
  const cause = [e?.code, e?.message].filter(Boolean).join(" ") || String(err);
  // The network error's code (ECONNREFUSED) says what happened; its message names the address.
  const network = typeof e?.code === "string" && /^[A-Z][A-Z0-9_]{1,63}$/.test(e.code) ? e.code : undefined;
  return new ToolError({
    code: "unavailable",
    reason: "UPSTREAM_UNREACHABLE",
    message: text(
      `${where.upstream} cannot be reached${network ? ` (${network})` : ""}; retrying in a moment may help`,
      `无法连接 ${where.upstream}${network ? `（${network}）` : ""}；稍后重试可能成功`,
    ),
    metadata: { upstream: where.upstream, ...(network ? { network_error: network } : {}) },
    hint: { message: RETRY_LATER },
    privateDetail: `${where.method} ${where.path}: ${cause}`,
    cause: err,
  });
}

/**
 * UNAVAILABLE for an answer this service cannot read (not JSON, or not the
 * shape the platform documents); `detail` says what was wrong, with an
 * excerpt, for the log only; `what` ("a body that is not JSON") is what the
 * caller is told.
 */
export function badResponse(upstream: string, detail: string, status?: number, what?: Text): ToolError {
  const httpStatus = text(
    status === undefined ? "" : `, HTTP ${status}`,
    status === undefined ? "" : `，HTTP ${status}`,
  );
  return new ToolError({
    code: "unavailable",
    reason: "UPSTREAM_BAD_RESPONSE",
    message: text(
      `${upstream} gave an answer this service cannot read${what ? ` (${what.en}${httpStatus.en})` : ""}; retrying may help if it was restarting`,
      `${upstream} 的返回本服务无法读取${what ? `（${what.zh}${httpStatus.zh}）` : ""}；若它当时正在重启，重试可能成功`,
    ),
    metadata: { upstream, ...(status === undefined ? {} : { upstream_status: String(status) }) },
    privateDetail: detail,
    hint: {
      message: text(
        "Retrying may help if the platform was restarting; otherwise its version does not match this service.",
        "若平台当时正在重启，重试可能成功；否则是平台的版本与本服务不匹配。",
      ),
    },
  });
}

function excerpt(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t === "") return "(empty body)";
  return t.length > EXCERPT_CHARS ? `${t.slice(0, EXCERPT_CHARS)}…` : t;
}

/** A W3C traceparent continuing the caller's trace with a new span, or undefined when the trace id is not one. */
function traceparentOf(traceId: string): string | undefined {
  if (!/^[0-9a-f]{32}$/.test(traceId) || /^0+$/.test(traceId)) return undefined;
  return `00-${traceId}-${randomBytes(8).toString("hex")}-01`;
}
