import { Code, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { CallContext, Caller } from "../core/call-context";
import { grpcCodeName, toConnectError } from "../errors/connect-mapping";
import type { Language } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { Admission, Release } from "./admission";
import type { AuthResult } from "./auth";
import { identityFromHeaders } from "./auth/headers";
import { knIdFromHeaders } from "./caller";
import { chooseLanguage, languageHeaderProblem } from "./language";
import type { Metrics } from "./metrics";
import { traceIdFromHeaders } from "./trace";

interface CallValues {
  traceId: string;
  log: Logger;
  caller: Caller;
  headerKnId: string | undefined;
  language: Language;
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

/** What callInterceptor knows of a method, computed on its first call. */
interface MethodFacts {
  /** "package.Service/Method", as logs and metrics name it. */
  rpc: string;
  /** Health and reflection: logged at debug level, never queued. */
  tooling: boolean;
}

const methodFacts = new WeakMap<object, MethodFacts>();

function factsOf(req: { service: { typeName: string }; method: { name: string } }): MethodFacts {
  let facts = methodFacts.get(req.method);
  if (facts === undefined) {
    facts = { rpc: `${req.service.typeName}/${req.method.name}`, tooling: toolingServices.has(req.service.typeName) };
    methodFacts.set(req.method, facts);
  }
  return facts;
}

/**
 * The one interceptor every call passes through. It reads the trace id from
 * the headers and takes the caller the authentication step verified (or
 * raises its refusal), hands them to the handler, maps whatever
 * the handler throws to the ConnectError the caller sees (src/errors), and
 * writes one log line and one metrics sample per call: rpc, code, ms, trace_id,
 * account. Streams are observed until their last message.
 *
 * With `admission` (admission.ts), a call runs once it has a slot and gives
 * it back when its handler is done (a stream: when it ends); a refusal or a
 * deadline passed in the queue is logged, counted and mapped like any error.
 * Health checks and reflection are never queued: an overloaded server must
 * still say it is alive. One interceptor rather than two: a layer of
 * interceptor is a closure, an async function and its promise per call.
 */
export function callInterceptor(deps: {
  log: Logger;
  metrics: Metrics;
  admission?: Admission;
  /** The language of answers for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
}): Interceptor {
  const { admission } = deps;
  return (next) => async (req) => {
    const facts = factsOf(req);
    const languageHeader = req.header.get("language");
    const language = chooseLanguage(languageHeader, req.header.get("accept-language"), deps.defaultLanguage);
    const call = new CallRecord(deps, facts, traceIdFromHeaders(req.header), req.signal, language);
    // A call ended from outside (client gone, deadline, shutdown) is reported when
    // it ends: a response stream whose client vanished may never be iterated again.
    req.signal.addEventListener("abort", call);
    let release: Release | undefined;
    try {
      const auth = req.contextValues.get(kAuthResult) ?? identityFromHeaders(req.header);
      if (!auth.ok) throw auth.error;
      const log = call.identified(auth.caller);
      req.contextValues.set(kCall, {
        traceId: call.traceId,
        log,
        caller: auth.caller,
        headerKnId: knIdFromHeaders(req.header),
        language,
      });
      // The language first: the request's own problem is then answered in the language the caller asked for.
      const problem = languageHeaderProblem(languageHeader) ?? req.contextValues.get(kRequestProblem);
      if (problem) throw problem;
      if (admission !== undefined && !facts.tooling) {
        // A server stream's one request message is read before the slot, as unary ones are by the framework: a slow sender holds no slot.
        if (req.stream && req.method.methodKind === "server_streaming") {
          const messages: unknown[] = [];
          for await (const m of req.message) messages.push(m);
          req = { ...req, message: replay(messages) } as typeof req;
        }
        release =
          (req.signal.aborted ? undefined : admission.tryEnter()) ??
          (await admission.enter(req.signal, auth.caller.accountId));
      }
      const res = await next(req);
      res.header.set("x-trace-id", call.traceId);
      if (!res.stream) {
        release?.();
        call.finish(0);
        return res;
      }
      const message = release === undefined ? res.message : releasingAtEnd(res.message, release);
      return { ...res, message: observeStream(message, call) };
    } catch (err) {
      release?.();
      throw call.fail(err);
    }
  };
}

/**
 * One call seen by callInterceptor, from its start to its one log line and
 * metrics sample. Its methods are the per-call callbacks (it listens to the
 * abort signal itself, as an EventListener object), so a call allocates this
 * object rather than a closure per callback.
 */
class CallRecord {
  private readonly started = performance.now();
  private done = false;
  private account: Caller | undefined;
  /** Bound to trace_id and rpc, and to account once the caller is known; made when first needed. */
  private log: Logger | undefined;

  constructor(
    private readonly deps: { log: Logger; metrics: Metrics },
    private readonly facts: MethodFacts,
    readonly traceId: string,
    private readonly signal: AbortSignal,
    private readonly language: Language,
  ) {}

  /** The caller is known: the logger the handler gets (trace_id, rpc, account), which writes the call's line too. */
  identified(caller: Caller): Logger {
    this.account = caller;
    this.log = this.deps.log.child({ trace_id: this.traceId, rpc: this.facts.rpc, account: caller.accountId });
    return this.log;
  }

  private logger(): Logger {
    this.log ??= this.deps.log.child({ trace_id: this.traceId, rpc: this.facts.rpc });
    return this.log;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** The abort signal fired. */
  handleEvent(): void {
    this.finish(toConnectError(this.signal.reason, this.traceId, this.language, this.signal).error.code);
  }

  /** Writes the call's log line and metrics sample, once. */
  finish(code: number): void {
    if (this.done) return;
    this.done = true;
    this.signal.removeEventListener("abort", this);
    const ms = performance.now() - this.started;
    const codeName = grpcCodeName(code);
    const rounded = Math.round(ms * 10) / 10;
    // Once the caller is known the logger carries `account` already.
    const line =
      this.account === undefined
        ? { code: codeName, ms: rounded, account: "", account_type: "" }
        : { code: codeName, ms: rounded, account_type: this.account.accountType };
    if (this.facts.tooling) this.logger().debug(line, "rpc");
    else this.logger().info(line, "rpc");
    this.deps.metrics.observeRpc(this.facts.rpc, codeName, ms / 1000);
  }

  /** Maps what a handler threw to the error the caller sees, logs what needs it, and finishes the call. */
  fail(err: unknown): Error {
    const mapped = toConnectError(err, this.traceId, this.language, this.signal);
    if (mapped.unexpected) this.logger().error({ err }, "rpc failed with an unexpected error");
    else if (err instanceof ToolError && err.privateDetail)
      this.logger().warn({ reason: err.reason, detail: err.privateDetail }, "rpc failed");
    this.finish(mapped.error.code);
    return mapped.error;
  }
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
async function* observeStream<T>(messages: AsyncIterable<T>, call: CallRecord): AsyncIterable<T> {
  try {
    yield* messages;
    call.finish(call.aborted ? Code.Canceled : 0);
  } catch (err) {
    throw call.fail(err);
  } finally {
    // Reached without the lines above when the consumer returned early.
    call.finish(Code.Canceled);
  }
}

/**
 * The CallContext of a handler's call, built from what callInterceptor stored
 * and the handler context's signal and deadline.
 */
export function callContext(ctx: HandlerContext): CallContext {
  const values = ctx.values.get(kCall);
  if (!values) throw new Error("callContext: the call did not pass through callInterceptor");
  const call: CallContext = {
    caller: values.caller,
    traceId: values.traceId,
    log: values.log,
    signal: ctx.signal,
    language: values.language,
    // A function property of the context (it reads no `this`): no closure of ours per call.
    remainingMs: ctx.timeoutMs,
  };
  if (values.headerKnId !== undefined) call.headerKnId = values.headerKnId;
  return call;
}
