import type { z } from "zod";
import type { CallContext } from "../core/call-context";
import { type FieldViolation, ToolError } from "../errors/tool-error";
import { createJsonClient, type JsonClient, segment } from "./http-json";

/** The service's name in logs and ErrorInfo metadata. */
export const DATA_RETRIEVAL = "data-retrieval";

export interface DataRetrievalOptions {
  /** scheme://host[:port], e.g. http://data-retrieval:9100. */
  url: string;
  /** Per call, ms; a caller's shorter deadline wins. */
  timeoutMs: number;
  maxSockets: number;
}

/**
 * The platform's data-retrieval service (`POST /tools/<tool>`), over the
 * shared JSON client: keep-alive pool, timeout bounded by the caller's
 * deadline, the caller's abort signal, x-account-id / x-account-type and
 * traceparent forwarded, one log line per call, answers checked with the
 * caller's zod schema. Failures are ToolErrors carrying what data-retrieval
 * said (see readFailure); what they mean for a given tool is the caller's to
 * explain.
 */
export class DataRetrievalClient {
  constructor(private readonly http: JsonClient) {}

  async callTool<S extends z.ZodType>(ctx: CallContext, tool: string, body: unknown, schema: S): Promise<z.output<S>> {
    try {
      return await this.http.call(ctx, { method: "POST", path: `/tools/${segment(tool)}`, body }, schema);
    } catch (err) {
      throw err instanceof ToolError && err.metadata["upstream"] === DATA_RETRIEVAL ? withFailure(err) : err;
    }
  }

  close(): void {
    this.http.close();
  }
}

export function createDataRetrievalClient(opts: DataRetrievalOptions): DataRetrievalClient {
  return new DataRetrievalClient(
    createJsonClient({
      upstream: DATA_RETRIEVAL,
      baseUrl: opts.url,
      timeoutMs: opts.timeoutMs,
      maxSockets: opts.maxSockets,
    }),
  );
}

/**
 * What data-retrieval said when it refused or failed a call. Its error bodies
 * come in two shapes: its own `{"detail": {"code", "description", "detail":
 * {"error"}, "solution", "link"}}` (400 for bad parameters, 500 for a failed
 * run) and FastAPI's `{"detail": [{"loc": ["header", "x-account-id"], "msg"}]}`
 * (422, a missing header or a body that does not fit).
 */
export interface DataRetrievalFailure {
  /** The HTTP status; 0 when no answer came (timeout, connection refused). */
  status: number;
  /** data-retrieval's error code, e.g. "KnowledgeNetworkParamError". */
  code: string;
  description: string;
  /** The cause data-retrieval gave (its detail.error), possibly cut short. */
  detail: string;
  /** FastAPI's per-field complaints: `x-account-id`, `retrieval_config.concept_retrieval.top_k`, ... */
  fields: FieldViolation[];
}

/** The failure a ToolError of DataRetrievalClient.callTool carries. */
export function readFailure(err: ToolError): DataRetrievalFailure {
  return {
    status: Number(err.metadata["upstream_status"] ?? 0),
    code: err.metadata["error_code"] ?? "",
    description: err.metadata["description"] ?? "",
    detail: err.metadata["upstream_detail"] ?? "",
    fields: err.violations,
  };
}

/**
 * Adds data-retrieval's own error fields to the shared client's error. That
 * client keeps only the first 200 characters of an error body that is not in
 * the ontology services' format, in its message; the fields are read from
 * there, a cut-off string kept as far as it goes.
 */
function withFailure(err: ToolError): ToolError {
  const start = err.message.indexOf("{");
  if (err.metadata["upstream_status"] === undefined || start < 0) return err;
  const body = err.message.slice(start).replace(/…$/, "");
  const metadata: Record<string, string> = { ...err.metadata };
  const code = stringField(body, "code");
  const description = stringField(body, "description");
  // FastAPI's own errors (an unknown route) are {"detail": "Not Found"}.
  const whole = parsed(body);
  const detail = stringField(body, "error") ?? (typeof whole?.["detail"] === "string" ? whole["detail"] : undefined);
  if (code) metadata["error_code"] = code;
  if (description) metadata["description"] = description;
  if (detail) metadata["upstream_detail"] = detail;
  return new ToolError({
    code: err.code,
    reason: err.reason,
    message: err.message,
    metadata,
    violations: [...err.violations, ...fastApiFields(body)],
    ...(err.hint ? { hint: err.hint } : {}),
    cause: err,
  });
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The first JSON string value of `name` in (possibly cut-off) JSON text; a cut-off value ends in "…". */
function stringField(text: string, name: string): string | undefined {
  const m = new RegExp(`"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)(")?`).exec(text);
  if (!m) return undefined;
  const complete = m[2] !== undefined;
  // A value cut off inside an escape ("\u4e") loses that escape.
  const value = decodeString(complete ? m[1]! : m[1]!.replace(/\\u[0-9a-fA-F]{0,3}$/, ""));
  return complete ? value : `${value}…`;
}

function decodeString(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** FastAPI validation errors: `{"loc": ["body", "retrieval_config", "top_k"], "msg": "..."}` → field violations. */
function fastApiFields(text: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const entry = /"loc"\s*:\s*\[([^\]]*)\][^{}]*?"msg"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
  for (const m of text.matchAll(entry)) {
    let loc: unknown[];
    try {
      loc = JSON.parse(`[${m[1]}]`) as unknown[];
    } catch {
      continue;
    }
    const path = (["body", "header", "query"].includes(String(loc[0])) ? loc.slice(1) : loc).map(String);
    const field = path.reduce((f, p) => (/^\d+$/.test(p) ? `${f}[${p}]` : f === "" ? p : `${f}.${p}`), "");
    out.push({ field: field || "request", description: decodeString(m[2]!) });
  }
  return out;
}
