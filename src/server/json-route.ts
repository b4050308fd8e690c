import type { Logger } from "pino";
import type { CallContext } from "../core/call-context";
import { retryAfterSeconds } from "../errors/connect-mapping";
import { publicError } from "../errors/public-error";
import { type Language, text } from "../errors/text";
import { type ErrorCode, ToolError } from "../errors/tool-error";
import { authenticatedCaller, challengeHeaders } from "./auth";
import { knIdFromHeaders } from "./caller";
import { type HttpRoute, headersOf, sendJson } from "./http-routes";
import { chooseLanguage, languageHeaderProblem } from "./language";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";
import { REQUEST_TOO_LARGE } from "./request-body";
import { traceIdFromHeaders } from "./trace";

/** The HTTP status a JSON route answers for each error code. */
export const httpStatusOf: Record<ErrorCode, number> = {
  cancelled: 499,
  invalid_argument: 400,
  failed_precondition: 400,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  aborted: 409,
  unimplemented: 501,
  deadline_exceeded: 504,
  unavailable: 503,
  internal: 500,
};

/** The HTTP status of an error: httpStatusOf its code, except a body over READ_MAX_BYTES, 413 (429 would say "retry later"; the same body never fits). */
export function httpStatusFor(err: ToolError): number {
  return err.reason === REQUEST_TOO_LARGE ? 413 : httpStatusOf[err.code];
}

/** An answer written as text with its own content type (TOON, YAML) instead of JSON. */
export class TextAnswer {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

export interface JsonRouteOptions {
  path: string;
  log: Logger;
  /** The largest body taken, bytes (READ_MAX_BYTES): read before the call waits for a slot (http-routes.ts). */
  maxBytes: number;
  /** Aborted when the server shuts down past its grace period. */
  stopping: AbortSignal;
  /** The language of errors for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
  /** The route's work: the parsed body and the query string in, the answer's JSON (or a TextAnswer) out. */
  handle(body: unknown, ctx: CallContext, query: URLSearchParams): Promise<unknown>;
  /** The route's error shape (each spec has its own), in the caller's language. */
  renderError(err: ToolError, traceId: string, language: Language): unknown;
  /** The HTTP status for an error when the route's contract differs from httpStatusOf. */
  statusOf?(err: ToolError): number | undefined;
}

/**
 * A POST route taking and answering JSON, for the specs' REST aliases: the
 * same identity headers, trace id, cancellation and one log line per call as
 * the RPCs, and every failure rendered in the route's own JSON shape with the
 * status its code means. An error that is not a ToolError is our bug: 500
 * with the trace id only.
 */
export function jsonRoute(opts: JsonRouteOptions): HttpRoute {
  const statusOf = (err: ToolError) => opts.statusOf?.(err) ?? httpStatusFor(err);
  return {
    method: "POST",
    path: opts.path,
    jsonBody: { maxBytes: opts.maxBytes },
    renderRefusal: (err, traceId, language) => ({
      status: statusOf(err),
      body: opts.renderError(err, traceId, language),
    }),
    async handle(req, res, raw) {
      const started = performance.now();
      const headers = headersOf(req);
      const traceId = traceIdFromHeaders(headers);
      const language = chooseLanguage(headers.get("language"), headers.get("accept-language"), opts.defaultLanguage);
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished)
          gone.abort(
            new ToolError({
              code: "cancelled",
              reason: "CANCELLED",
              message: text("the client closed the connection", "客户端关闭了连接"),
            }),
          );
      });
      // One child logger per call, made once the account is known (a child of a child makes the first a
      // prototype, which cost ten times as much); without an account, the call's failure is logged without.
      let log: Logger | undefined;
      const callLog = () => {
        log ??= opts.log.child({ trace_id: traceId, route: opts.path });
        return log;
      };
      let status = 200;
      try {
        const identity = authenticatedCaller(req);
        const languageProblem = languageHeaderProblem(headers.get("language"));
        if (languageProblem) throw languageProblem;
        const headerKnId = knIdFromHeaders(headers);
        log = opts.log.child({ trace_id: traceId, route: opts.path, account: identity.accountId });
        const ctx: CallContext = {
          caller: identity,
          ...(headerKnId !== undefined ? { headerKnId } : {}),
          traceId,
          language,
          log,
          signal: AbortSignal.any([gone.signal, opts.stopping]),
          remainingMs: () => undefined,
        };
        const body = parseJson(req, raw);
        const query = new URL(req.url ?? "/", "http://localhost").searchParams;
        const answer = await opts.handle(body, ctx, query);
        if (answer instanceof TextAnswer) sendText(res, answer, traceId);
        else sendJson(res, 200, answer, { "x-trace-id": traceId });
      } catch (err) {
        const { error: toolError, unexpected } = publicError(err, traceId);
        if (unexpected) callLog().error({ err }, "route failed with an unexpected error");
        else if (toolError.privateDetail)
          callLog().warn({ reason: toolError.reason, detail: toolError.privateDetail }, "route failed");
        status = statusOf(toolError);
        const headers: Record<string, string> = { "x-trace-id": traceId, ...challengeHeaders(toolError) };
        if (toolError.retryAfterMs !== undefined) headers["retry-after"] = retryAfterSeconds(toolError.retryAfterMs);
        if (!res.headersSent && !res.destroyed)
          sendJson(res, status, opts.renderError(toolError, traceId, language), headers);
      } finally {
        callLog().info({ status, ms: Math.round((performance.now() - started) * 10) / 10 }, "route");
      }
    },
  };
}

function parseJson(req: NodeServerRequest, raw: Buffer): unknown {
  const type = String(req.headers["content-type"] ?? "").trim();
  // No content-type means JSON (spec kn-search-proxy: Content-Type 可选, 默认 application/json).
  if (type !== "" && !/^application\/json(;|$)/i.test(type)) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "UNSUPPORTED_CONTENT_TYPE",
      message: text(
        `send the body as JSON with content-type: application/json (got ${JSON.stringify(type)})`,
        `请以 content-type: application/json 发送 JSON 请求体（收到的是 ${JSON.stringify(type)}）`,
      ),
      hint: {
        message: text(
          "Send content-type: application/json (or no content-type) with a JSON body.",
          "发送 content-type: application/json（或不带 content-type）和 JSON 请求体。",
        ),
      },
    });
  }
  try {
    return JSON.parse(raw.toString("utf8") || "null");
  } catch (err) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_JSON",
      message: text(
        `the body is not valid JSON: ${(err as Error).message}`,
        `请求体不是有效的 JSON：${(err as Error).message}`,
      ),
      violations: [{ field: "request", description: text("not valid JSON", "不是有效的 JSON") }],
    });
  }
}

function sendText(res: NodeServerResponse, answer: TextAnswer, traceId: string): void {
  res.writeHead(200, {
    "content-type": answer.contentType,
    "content-length": String(Buffer.byteLength(answer.text)),
    "x-trace-id": traceId,
  });
  res.end(answer.text);
}
