import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * Spans, when tracing is on (an OTLP endpoint configured, src/telemetry.ts),
 * and nothing at all when it is off: every function here first checks for the
 * tracer and otherwise only runs what it was given, so a service without
 * tracing pays one comparison per call site, not a no-op span.
 *
 * The current span travels with the async context (the SDK's
 * AsyncLocalStorage context manager), so the spans of upstream calls, store
 * queries and Recall steps find their parent without it being passed down.
 * Attributes name what ran (method, service, operation, status), never ids or
 * content: a trace backend is not where callers' data should end up.
 */

let tracer: Tracer | undefined;
const propagator = new W3CTraceContextPropagator();

/** Turns spans on (a tracer) or off (undefined) for this process: the composition root's choice. */
export function setTracer(next: Tracer | undefined): void {
  tracer = next;
}

export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** A span a call arriving opens: the RPC, the route, the MCP request. */
export interface ServerSpan {
  /** The span's trace id: the caller's when it sent a traceparent, else a new one (the call's trace id). */
  readonly traceId: string;
  /**
   * The span as a `traceparent` header value: written into the request's own
   * headers, it makes the code that reads the trace id there (logs,
   * x-trace-id) name this span's trace.
   */
  readonly traceparent: string;
  /** Runs `fn` with this span current, so what it starts (upstream calls, store queries…) are its children. */
  run<T>(fn: () => T): T;
  setAttributes(attributes: Attributes): void;
  /** Ends the span with the call's outcome: `error` set when the call failed (its gRPC code or reason). */
  end(error?: string): void;
}

const headersGetter: TextMapGetter<Headers> = {
  get: (carrier, key) => carrier.get(key) ?? undefined,
  keys: (carrier) => {
    const names: string[] = [];
    carrier.forEach((_value, name) => {
      names.push(name);
    });
    return names;
  },
};

/**
 * The span of a call arriving with these request headers, a child of the
 * caller's `traceparent` when it sent a valid one; undefined when tracing is off.
 */
export function startServerSpan(name: string, attributes: Attributes, headers: Headers): ServerSpan | undefined {
  if (!tracer) return undefined;
  const parent = propagator.extract(ROOT_CONTEXT, headers, headersGetter);
  const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return handle(span, trace.setSpan(parent, span));
}

/** A span for a part of the current call (an MCP tool call, a Recall iteration), or undefined when off. */
export function startChildSpan(name: string, attributes: Attributes): ServerSpan | undefined {
  if (!tracer) return undefined;
  const parent = context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  return handle(span, trace.setSpan(parent, span));
}

function handle(span: Span, ctx: Context): ServerSpan {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return {
    traceId,
    traceparent: `00-${traceId}-${spanId}-0${traceFlags & 1}`,
    run: (fn) => context.with(ctx, fn),
    setAttributes: (attributes) => span.setAttributes(attributes),
    end(error) {
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}

/**
 * Runs `fn` in a span of its own, a child of the current one: an upstream
 * call (kind client, `traceparent` its own span), a store query, a step. When
 * tracing is off it only runs `fn`. A throw marks the span an error with the
 * thrown value's reason (a ToolError's) or name, never its message.
 */
/**
 * inSpan, only within a span already open (a call's): work no call asked for,
 * such as a readiness probe's store ping, makes no trace of its own.
 */
export function inChildSpan<T>(name: string, attributes: Attributes, fn: (span: SpanNotes) => Promise<T>): Promise<T> {
  if (!tracer || trace.getSpan(context.active()) === undefined) return fn(NO_NOTES);
  return inSpan(name, attributes, fn);
}

export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: SpanNotes) => Promise<T>,
  kind: "client" | "internal" = "internal",
): Promise<T> {
  if (!tracer) return fn(NO_NOTES);
  const parent = context.active();
  const span = tracer.startSpan(
    name,
    { kind: kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorName(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** What a span's work may add once it knows more (a status code, a count). */
export interface SpanNotes {
  setAttribute(key: string, value: string | number | boolean): unknown;
}

const NO_NOTES: SpanNotes = { setAttribute: () => undefined };

/** The `traceparent` an outgoing request carries from the current span, or undefined when tracing is off. */
export function outgoingTraceparent(): string | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(context.active(), carrier, { set: (c, k, v) => void (c[k] = v) });
  return carrier["traceparent"];
}

function errorName(err: unknown): string {
  if (err !== null && typeof err === "object") {
    const reason = (err as { reason?: unknown }).reason;
    if (typeof reason === "string" && reason !== "") return reason;
    const name = (err as { name?: unknown }).name;
    if (typeof name === "string") return name;
  }
  return "error";
}
