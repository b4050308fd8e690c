import type { z } from "zod";
import type { CallContext } from "../core/call-context";
import { text } from "../errors/text";
import { type FieldViolation, ToolError } from "../errors/tool-error";
import { createJsonClient, ERROR_CODE, FIELD_NAME, type JsonClient } from "./http-json";
import { segment } from "./path-ids";

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
 * What data-retrieval said when it refused or failed a call, as far as it may
 * reach the caller. Its error bodies come in two shapes: its own
 * `{"detail": {"code", "description", "detail": {"error"}, "solution",
 * "link"}}` (400 for bad parameters, 500 for a failed run) and FastAPI's
 * `{"detail": [{"loc": ["header", "x-account-id"], "msg"}]}` (422, a missing
 * header or a body that does not fit). Only the identifiers are kept (the
 * code, the fields named); the free text (description, cause, msg) may carry
 * anything and stays in the log.
 */
export interface DataRetrievalFailure {
  /** The HTTP status; 0 when no answer came (timeout, connection refused). */
  status: number;
  /** data-retrieval's error code, e.g. "KnowledgeNetworkParamError". */
  code: string;
  /** The fields FastAPI complained of: `x-account-id`, `retrieval_config.concept_retrieval.top_k`, ... */
  fields: FieldViolation[];
}

/** The failure a ToolError of DataRetrievalClient.callTool carries. */
export function readFailure(err: ToolError): DataRetrievalFailure {
  return {
    status: Number(err.metadata["upstream_status"] ?? 0),
    code: err.metadata["error_code"] ?? "",
    fields: err.violations,
  };
}

/**
 * Adds data-retrieval's own error code and the fields it named to the shared
 * client's error, read from the body excerpt that client keeps for the log
 * (a cut-off body is read as far as it goes).
 */
function withFailure(err: ToolError): ToolError {
  const logged = err.privateDetail ?? "";
  const start = logged.indexOf("{");
  if (err.metadata["upstream_status"] === undefined || start < 0) return err;
  const body = logged.slice(start).replace(/…$/, "");
  const metadata: Record<string, string> = { ...err.metadata };
  const code = stringField(body, "code");
  if (code && ERROR_CODE.test(code)) metadata["error_code"] = code;
  return new ToolError({
    code: err.code,
    reason: err.reason,
    message: err.text,
    metadata,
    violations: [...err.violations, ...fastApiFields(body)],
    ...(err.hint ? { hint: err.hint } : {}),
    ...(err.privateDetail ? { privateDetail: err.privateDetail } : {}),
    cause: err,
  });
}

/** The first JSON string value of `name` in (possibly cut-off) JSON text, when it is complete. */
function stringField(json: string, name: string): string | undefined {
  const m = new RegExp(`"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(json);
  return m ? decodeString(m[1]!) : undefined;
}

function decodeString(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** FastAPI validation errors: `{"loc": ["body", "retrieval_config", "top_k"], "msg": "..."}` → the fields, in our words. */
function fastApiFields(json: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const entry = /"loc"\s*:\s*\[([^\]]*)\]/g;
  for (const m of json.matchAll(entry)) {
    let loc: unknown[];
    try {
      loc = JSON.parse(`[${m[1]}]`) as unknown[];
    } catch {
      continue;
    }
    const path = (["body", "header", "query"].includes(String(loc[0])) ? loc.slice(1) : loc).map(String);
    const field = path.reduce((f, p) => (/^\d+$/.test(p) ? `${f}[${p}]` : f === "" ? p : `${f}.${p}`), "");
    if (field !== "" && !FIELD_NAME.test(field)) continue;
    out.push({
      field: field || "request",
      description: text("data-retrieval rejected this field", "data-retrieval 拒绝了这个字段"),
    });
  }
  return out;
}
