import { Code, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { CallContext, Caller } from "../core/call-context";
import { grpcCodeName, toConnectError } from "../errors/connect-mapping";
import { ToolError } from "../errors/tool-error";
import type { Admission, Release } from "./admission";
import type { AuthResult } from "./auth";
import { identityFromHeaders } from "./auth/headers";
import { knIdFromHeaders } from "./caller";
import type { Metrics } from "./metrics";
import { traceIdFromHeaders } from "./trace";

interface CallValues {
  traceId: string;
  log: Logger;
  caller: Caller;
  headerKnId: string | undefined;
}

const kCall = createContextKey<CallValues | undefined>(undefined, { description: "contextloader call" });

/**
 * A problem found with the request before it reached the handler (an
 * undecodable JSON body, see json-body.ts). The interceptor raises it, so it is
 * answered, logged and counted like every other error.
 */
export const kRequestProblem = createContextKey<ToolError | undefined>(undefined, { description: "request problem" });

/**
 * The authentication step's result for this call (src/server/auth), set by
 * the RPC handler from the raw request. A call served without one (the
 * in-memory router transport of tests, which has no connection) takes the
 * identity headers, as AUTH_MODE=headers does.
 */
export const kAuthResult = createContextKey<AuthResult | undefined>(undefined, { description: "authentication" });

/** Probes and tooling, not agent traffic: logged at debug level, and never queued by admission control. */
const toolingServices = new Set([
  "grpc.health.v1.Health",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/**
 * The one interceptor every call passes through. It reads the trace id from
 * the headers and takes the caller the authentication step verified (or
 * raises its refusal), hands them to the handler, maps whatever
 * the handler throws to the ConnectError the caller sees (src/errors), and
 * writes one log line and one metrics sample per call: rpc, code, ms, trace_id,
 * account. Streams are observed until their last message.
 */
export function callInterceptor(deps: { log: Logger; metrics: Metrics }): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const rpc = `${req.service.typeName}/${req.method.name}`;
    const traceId = traceIdFromHeaders(req.header);
    const log = deps.log.child({ trace_id: traceId, rpc });
    let account: Caller | undefined;
    let done = false;
    // A call ended from outside (client gone, deadline, shutdown) is reported when
    // it ends: a response stream whose client vanished may never be iterated again.
    const onAbort = () => finish(toConnectError(req.signal.reason, traceId, req.signal).error.code);
    req.signal.addEventListener("abort", onAbort);
    const finish = (code: number) => {
      if (done) return;
      done = true;
      req.signal.removeEventListener("abort", onAbort);
      const ms = performance.now() - started;
      const codeName = grpcCodeName(code);
      const line = {
        code: codeName,
        ms: Math.round(ms * 10) / 10,
        account: account?.accountId ?? "",
        account_type: account?.accountType ?? "",
      };
      if (toolingServices.has(req.service.typeName)) log.debug(line, "rpc");
      else log.info(line, "rpc");
      deps.metrics.observeRpc(rpc, codeName, ms / 1000);
    };
    const fail = (err: unknown) => {
      const mapped = toConnectError(err, traceId, req.signal);
      if (mapped.unexpected) log.error({ err }, "rpc failed with an unexpected error");
      else if (err instanceof ToolError && err.privateDetail)
        log.warn({ reason: err.reason, detail: err.privateDetail }, "rpc failed");
      finish(mapped.error.code);
      return mapped.error;
    };
    try {
      const auth = req.contextValues.get(kAuthResult) ?? identityFromHeaders(req.header);
      if (!auth.ok) throw auth.error;
      account = auth.caller;
      req.contextValues.set(kCall, {
        traceId,
        log: log.child({ account: account.accountId }),
        caller: account,
        headerKnId: knIdFromHeaders(req.header),
      });
      const problem = req.contextValues.get(kRequestProblem);
      if (problem) throw problem;
      const res = await next(req);
      res.header.set("x-trace-id", traceId);
      if (!res.stream) {
        finish(0);
        return res;
      }
      return { ...res, message: observeStream(res.message, req.signal, finish, fail) };
    } catch (err) {
      throw fail(err);
    }
  };
}

/**
 * Admission control for RPCs (admission.ts): a call runs once it has a slot
 * and gives it back when its handler is done (a stream: when it ends).
 * Health checks and reflection are never queued: an overloaded server must
 * still say it is alive. Placed after callInterceptor, so a refusal or a
 * deadline passed in the queue is logged, counted and mapped like any error.
 */
export function admissionInterceptor(admission: Admission): Interceptor {
  return (next) => async (req) => {
    if (toolingServices.has(req.service.typeName)) return next(req);
    // A server stream's one request message is read before the slot, as unary ones are by the framework: a slow sender holds no slot.
    if (req.stream && req.method.methodKind === "server_streaming") {
      const messages: unknown[] = [];
      for await (const m of req.message) messages.push(m);
      req = { ...req, message: replay(messages) } as typeof req;
    }
    const release = await admission.enter(req.signal);
    try {
      const res = await next(req);
      if (!res.stream) {
        release();
        return res;
      }
      return { ...res, message: releasingAtEnd(res.message, release) };
    } catch (err) {
      release();
      throw err;
    }
  };
}

async function* replay<T>(messages: readonly T[]): AsyncIterable<T> {
  yield* messages;
}

async function* releasingAtEnd<T>(messages: AsyncIterable<T>, release: Release): AsyncIterable<T> {
  try {
    yield* messages;
  } finally {
    release();
  }
}

/**
 * Passes a response stream through, reporting how it ended: OK, the mapped
 * error, or CANCELED when the client stopped reading or went away.
 */
async function* observeStream<T>(
  messages: AsyncIterable<T>,
  signal: AbortSignal,
  finish: (code: number) => void,
  onError: (err: unknown) => Error,
): AsyncIterable<T> {
  try {
    yield* messages;
    finish(signal.aborted ? Code.Canceled : 0);
  } catch (err) {
    throw onError(err);
  } finally {
    // Reached without the lines above when the consumer returned early.
    finish(Code.Canceled);
  }
}

/**
 * The CallContext of a handler's call, built from what callInterceptor stored
 * and the handler context's signal and deadline.
 */
export function callContext(ctx: HandlerContext): CallContext {
  const values = ctx.values.get(kCall);
  if (!values) throw new Error("callContext: the call did not pass through callInterceptor");
  return {
    caller: values.caller,
    ...(values.headerKnId !== undefined ? { headerKnId: values.headerKnId } : {}),
    traceId: values.traceId,
    log: values.log,
    signal: ctx.signal,
    remainingMs: () => ctx.timeoutMs(),
  };
}
