import { Code, ConnectError } from "@connectrpc/connect";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { MissingParamsSchema } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../gen/google/rpc/error_details_pb";
import type { Language } from "./text";
import { type ErrorCode, renderIn, ToolError } from "./tool-error";

/** The ErrorInfo domain of every error this service returns. */
export const ERROR_DOMAIN = "contextloader";

const codes: Record<ErrorCode, Code> = {
  cancelled: Code.Canceled,
  invalid_argument: Code.InvalidArgument,
  deadline_exceeded: Code.DeadlineExceeded,
  not_found: Code.NotFound,
  already_exists: Code.AlreadyExists,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  unimplemented: Code.Unimplemented,
  internal: Code.Internal,
  unavailable: Code.Unavailable,
  unauthenticated: Code.Unauthenticated,
};

/** The result of mapping: what the caller gets, and whether it was our own bug. */
export interface MappedError {
  error: ConnectError;
  /** True when the cause was not a ToolError or a deliberate ConnectError: log it with its stack. */
  unexpected: boolean;
}

/**
 * Turns anything a handler threw into the ConnectError the caller receives.
 * ToolErrors keep their code and message and gain ErrorInfo (+ BadRequest,
 * AgentHint, MissingParams, RetryInfo with a Retry-After header). ConnectErrors from the framework (deadline,
 * cancellation, size limits) keep their code. Anything else, an INTERNAL
 * ToolError included, is our bug: the caller gets INTERNAL with the trace id,
 * never the original text.
 */
export function toConnectError(err: unknown, traceId: string, language: Language, signal?: AbortSignal): MappedError {
  const headers = { "x-trace-id": traceId };
  // An INTERNAL ToolError is our bug too: its words are for the log, the caller gets the trace id.
  if (err instanceof ToolError && err.code !== "internal") {
    return { error: fromToolError(err, traceId, headers, language), unexpected: false };
  }
  // The call was ended from outside while the handler ran: its deadline passed,
  // the server is shutting down, or the client went away (cancel, stream reset).
  if (signal?.aborted) {
    const reason = ConnectError.from(signal.reason);
    const ended =
      reason.code === Code.DeadlineExceeded || reason.code === Code.Unavailable
        ? reason
        : new ConnectError(
            language === "zh"
              ? `客户端结束了调用：${reason.rawMessage}`
              : `the client ended the call: ${reason.rawMessage}`,
            Code.Canceled,
          );
    return { error: withInfo(ended, grpcCodeName(ended.code), traceId, headers), unexpected: false };
  }
  // The client closed its side of a stream mid-call (seen before the signal fires).
  if (isClientGone(err)) {
    const gone = new ConnectError(language === "zh" ? "客户端结束了调用" : "the client ended the call", Code.Canceled);
    return { error: withInfo(gone, grpcCodeName(gone.code), traceId, headers), unexpected: false };
  }
  if (err instanceof ConnectError && err.code !== Code.Unknown && err.code !== Code.Internal) {
    return { error: withInfo(err, grpcCodeName(err.code), traceId, headers), unexpected: false };
  }
  const internal = new ConnectError(
    language === "zh"
      ? `内部错误；请把 trace_id ${traceId} 报告给服务的运维人员`
      : `internal error; report trace_id ${traceId} to the service operators`,
    Code.Internal,
    headers,
    [errorInfo("INTERNAL", traceId, {})],
  );
  return { error: internal, unexpected: true };
}

function fromToolError(
  err: ToolError,
  traceId: string,
  headers: Record<string, string>,
  language: Language,
): ConnectError {
  const said = renderIn(err, language);
  const info =
    said.detail["message"] === undefined ? err.metadata : { ...err.metadata, detail: said.detail["message"] };
  const details: ConstructorParameters<typeof ConnectError>[3] = [errorInfo(err.reason, traceId, info)];
  if (err.violations.length > 0) {
    details.push({
      desc: BadRequestSchema,
      value: { fieldViolations: said.violations },
    });
  }
  if (said.hint) {
    details.push({
      desc: AgentHintSchema,
      value: { message: said.hint.message, nextRpc: said.hint.nextRpc ?? "", validValues: said.hint.validValues ?? [] },
    });
  }
  if (err.missing.length > 0) {
    details.push({ desc: MissingParamsSchema, value: { missing: err.missing, traceId } });
  }
  if (err.retryAfterMs !== undefined) {
    const ms = Math.max(0, Math.round(err.retryAfterMs));
    details.push({
      desc: RetryInfoSchema,
      value: { retryDelay: { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 } },
    });
    // Connect answers it as an HTTP header (with status 429), gRPC as a trailer: clients that read no details still see it.
    return new ConnectError(
      said.message,
      codes[err.code],
      { ...headers, "retry-after": retryAfterSeconds(ms) },
      details,
      err,
    );
  }
  return new ConnectError(said.message, codes[err.code], headers, details, err);
}

function withInfo(err: ConnectError, reason: string, traceId: string, headers: Record<string, string>): ConnectError {
  return new ConnectError(err.rawMessage, err.code, headers, [errorInfo(reason, traceId, {})], err);
}

function errorInfo(reason: string, traceId: string, metadata: Record<string, string>) {
  return {
    desc: ErrorInfoSchema,
    value: { reason, domain: ERROR_DOMAIN, metadata: { ...metadata, trace_id: traceId } },
  };
}

const clientGoneCodes = new Set(["ERR_STREAM_PREMATURE_CLOSE", "ECONNRESET", "EPIPE", "ERR_HTTP2_STREAM_CANCEL"]);

function isClientGone(err: unknown): boolean {
  if (err instanceof ConnectError)
    return err.code === Code.Canceled || err.code === Code.Aborted || isClientGone(err.cause);
  return err instanceof Error && clientGoneCodes.has((err as NodeJS.ErrnoException).code ?? "");
}

/** Retry-After's value for a delay: whole seconds, rounded up, at least 1 (RFC 9110 §10.2.3). */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/** "OK", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", ...: the names gRPC tooling prints. */
export function grpcCodeName(code: number): string {
  if (code === 0) return "OK";
  const name = Code[code as Code];
  return name === undefined ? `CODE_${code}` : name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}
