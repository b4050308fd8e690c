/**
 * ToolError is how domain code reports a failure: a value with a gRPC-style
 * code, a stable reason, a message an LLM agent can act on, and optional
 * structure (field violations, a next-step hint, missing parameters). It never
 * carries transport types; one edge (src/errors/connect-mapping.ts for RPCs,
 * the REST routes for JSON aliases) turns it into what the caller sees.
 */

import { type Language, type Text, verbatim } from "./text";

/** The gRPC status codes domain code may use (Connect's lower-case names). */
export type ErrorCode =
  | "cancelled"
  | "invalid_argument"
  | "deadline_exceeded"
  | "not_found"
  | "already_exists"
  | "permission_denied"
  | "resource_exhausted"
  | "failed_precondition"
  | "aborted"
  | "unimplemented"
  | "internal"
  | "unavailable"
  | "unauthenticated";

/** One invalid or missing request field; `field` is the proto path, e.g. `kn_ids[0].knowledge_network_id`. */
export interface FieldViolation {
  field: string;
  /** What is wrong with the field; it does not repeat the field's name (the field is named beside it). */
  description: Text;
}

/** The next step for the agent. */
export interface Hint {
  message: Text;
  /** Fully qualified RPC to call next, e.g. "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema". */
  nextRpc?: string;
  /** Values the agent may pick from. */
  validValues?: string[];
}

/** The resolver's missing-parameter list (spec logic-property-resolver §9.1). */
export interface MissingPropertyParams {
  property: string;
  params: { name: string; type: string; hint: string }[];
}

export interface ToolErrorInit {
  code: ErrorCode;
  /** Stable, UPPER_SNAKE reason for google.rpc.ErrorInfo, e.g. "SCHEMA_NOT_IN_SESSION". */
  reason: string;
  /** What went wrong, written for the agent, in both languages (the spec's text as the Chinese where the spec gives one). */
  message: Text;
  hint?: Hint;
  violations?: FieldViolation[];
  /** Extra ErrorInfo metadata, e.g. the upstream error_code. */
  metadata?: Record<string, string>;
  missing?: MissingPropertyParams[];
  /**
   * A longer explanation for the JSON routes' `detail` object (e.g. the spec's `detail.message`, `session_id`):
   * words in both languages, values (an id) as verbatim(…).
   */
  detail?: Record<string, Text>;
  /** When a retry may succeed (an overloaded server): google.rpc.RetryInfo, and Retry-After on HTTP answers. */
  retryAfterMs?: number;
  /**
   * What the operators need and the caller must not see (an upstream's error
   * body, a database's message and address): the edges log it with the trace
   * id; no rendering of the error ever includes it.
   */
  privateDetail?: string;
  cause?: unknown;
}

export class ToolError extends Error {
  override name = "ToolError";
  readonly code: ErrorCode;
  readonly reason: string;
  /** The message in both languages; `message` is its English, for logs. */
  readonly text: Text;
  readonly hint: Hint | undefined;
  readonly violations: FieldViolation[];
  readonly metadata: Record<string, string>;
  readonly missing: MissingPropertyParams[];
  readonly detail: Record<string, Text>;
  readonly retryAfterMs: number | undefined;
  readonly privateDetail: string | undefined;

  constructor(init: ToolErrorInit) {
    super(init.message.en, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.text = init.message;
    this.reason = init.reason;
    this.hint = init.hint;
    this.violations = init.violations ?? [];
    this.metadata = init.metadata ?? {};
    this.missing = init.missing ?? [];
    this.detail = init.detail ?? {};
    this.retryAfterMs = init.retryAfterMs;
    this.privateDetail = init.privateDetail;
  }
}

/** INVALID_ARGUMENT for request fields, with one violation per field. */
export function invalidArgument(violations: FieldViolation[], hint?: Hint): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: "INVALID_ARGUMENT",
    message: {
      en: `invalid request: ${violations.map((v) => `${v.field}: ${v.description.en}`).join("; ")}`,
      zh: `请求无效：${violations.map((v) => `${v.field}：${v.description.zh}`).join("；")}`,
    },
    violations,
    hint: hint ?? {
      message: {
        en: "Correct the fields named in the violations and call again.",
        zh: "按字段错误（violations）中列出的字段改正后再调用。",
      },
    },
  });
}

/** The caller's view of an error in one language: the message, the hint's words and each violation's description. */
export interface RenderedError {
  message: string;
  detail: Record<string, string>;
  hint: { message: string; nextRpc?: string; validValues?: string[] } | undefined;
  violations: { field: string; description: string }[];
}

export function renderIn(err: ToolError, language: Language): RenderedError {
  return {
    message: err.text[language],
    detail: Object.fromEntries(Object.entries(err.detail).map(([k, v]) => [k, v[language]])),
    hint: err.hint === undefined ? undefined : { ...err.hint, message: err.hint.message[language] },
    violations: err.violations.map((v) => ({ field: v.field, description: v.description[language] })),
  };
}

export { verbatim };
