import { createRegistry, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { type Code, ConnectError } from "@connectrpc/connect";
import { type AgentHint, AgentHintSchema } from "../../../gen/contextloader/common/v1/errors_pb";
import { type MissingParams, MissingParamsSchema } from "../../../gen/contextloader/resolver/v1/resolver_pb";
import {
  BadRequestSchema,
  type ErrorInfo,
  ErrorInfoSchema,
  HelpSchema,
  RetryInfoSchema,
} from "../../../gen/google/rpc/error_details_pb";

/** Every detail type the service puts in its errors (docs/errors.md); for `findDetails(registry)` and JSON printing. */
export const errorDetailRegistry = createRegistry(
  ErrorInfoSchema,
  BadRequestSchema,
  AgentHintSchema,
  MissingParamsSchema,
  RetryInfoSchema,
  HelpSchema,
);

/**
 * The details of type `desc` that a failed call carried: `findDetails(err, BadRequestSchema)`.
 * Takes whatever a call threw (a ConnectError, or anything else, which carries none).
 */
export function findDetails<Desc extends DescMessage>(err: unknown, desc: Desc): MessageShape<Desc>[] {
  return ConnectError.from(err).findDetails(desc);
}

/** What the service said about a failed call, read from its status and details. */
export interface ErrorDetails {
  /** The gRPC code; `Code[code]` names it. */
  code: Code;
  /** The message for the agent, without connect-es's `[code]` prefix. */
  message: string;
  /** ErrorInfo's reason, stable: `INVALID_ARGUMENT`, `SCHEMA_NOT_IN_SESSION`, `ACCOUNT_REQUIRED`, …; empty without one. */
  reason: string;
  /** The call's trace id: quote it to the service's operators. Empty when the call never reached the service. */
  traceId: string;
  /** ErrorInfo's metadata (trace_id included), e.g. an upstream's `error_code`. */
  metadata: Record<string, string>;
  /** One per invalid or missing request field (BadRequest), named as in the proto, e.g. `kn_ids[0].knowledge_network_id`. */
  fieldViolations: { field: string; description: string }[];
  /** The next step for an agent (AgentHint): `message`, `nextRpc`, `validValues`. */
  hint: AgentHint | undefined;
  /** The resolver's missing parameters (MISSING_INPUT_PARAMS). */
  missingParams: MissingParams | undefined;
  /** When to retry an overloaded server (RetryInfo), in milliseconds. */
  retryAfterMs: number | undefined;
}

/** Reads everything the service's error details say about a failed call (whatever the call threw). */
export function errorDetails(err: unknown): ErrorDetails {
  const e = ConnectError.from(err);
  const info: ErrorInfo | undefined = e.findDetails(ErrorInfoSchema)[0];
  const retry = e.findDetails(RetryInfoSchema)[0]?.retryDelay;
  return {
    code: e.code,
    message: e.rawMessage,
    reason: info?.reason ?? "",
    traceId: info?.metadata["trace_id"] ?? e.metadata.get("x-trace-id") ?? "",
    metadata: { ...info?.metadata },
    fieldViolations: e
      .findDetails(BadRequestSchema)
      .flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, description: v.description }))),
    hint: e.findDetails(AgentHintSchema)[0],
    missingParams: e.findDetails(MissingParamsSchema)[0],
    retryAfterMs: retry === undefined ? undefined : Number(retry.seconds) * 1000 + Math.round(retry.nanos / 1e6),
  };
}
