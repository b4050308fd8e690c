import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { MissingParamsSchema } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { toConnectError } from "../../src/errors/connect-mapping";
import { text, verbatim } from "../../src/errors/text";
import { ToolError } from "../../src/errors/tool-error";

const TRACE = "0123456789abcdef0123456789abcdef";

describe("toConnectError", () => {
  it("keeps a ToolError's code and message and adds ErrorInfo, BadRequest, AgentHint and MissingParams", () => {
    const err = new ToolError({
      code: "failed_precondition",
      reason: "MISSING_INPUT_PARAMS",
      message: text("dynamic_params is missing required input parameters", "dynamic_params 缺少必需的 input 参数"),
      violations: [{ field: "properties[0]", description: text("unknown", "未知") }],
      hint: {
        message: text("add additional_context", "补充 additional_context"),
        nextRpc: "x.y/Z",
        validValues: ["a"],
      },
      metadata: { upstream_error_code: "OntologyQuery.NotFound" },
      missing: [{ property: "approved_drug_count", params: [{ name: "start", type: "INTEGER", hint: "时间范围" }] }],
    });
    const { error, unexpected } = toConnectError(err, TRACE, "zh");
    expect(unexpected).toBe(false);
    expect(error.code).toBe(Code.FailedPrecondition);
    expect(error.rawMessage).toBe("dynamic_params 缺少必需的 input 参数");
    const english = toConnectError(err, TRACE, "en").error;
    expect(english.rawMessage).toBe("dynamic_params is missing required input parameters");
    expect(english.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.description).toBe("unknown");
    expect(english.findDetails(AgentHintSchema)[0]?.message).toBe("add additional_context");
    expect(error.metadata.get("x-trace-id")).toBe(TRACE);
    const [info] = error.findDetails(ErrorInfoSchema);
    expect(info).toMatchObject({
      reason: "MISSING_INPUT_PARAMS",
      domain: "contextloader",
      metadata: { trace_id: TRACE, upstream_error_code: "OntologyQuery.NotFound" },
    });
    expect(error.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field).toBe("properties[0]");
    expect(error.findDetails(AgentHintSchema)[0]).toMatchObject({
      message: "补充 additional_context",
      nextRpc: "x.y/Z",
      validValues: ["a"],
    });
    expect(error.findDetails(MissingParamsSchema)[0]).toMatchObject({
      traceId: TRACE,
      missing: [{ property: "approved_drug_count", params: [{ name: "start", type: "INTEGER", hint: "时间范围" }] }],
    });
  });

  it("turns anything else into INTERNAL without leaking its text", () => {
    const { error, unexpected } = toConnectError(new Error("password=hunter2 at db.internal:5432"), TRACE, "en");
    expect(unexpected).toBe(true);
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).not.toContain("hunter2");
    expect(error.rawMessage).toContain(TRACE);
    expect(error.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INTERNAL");
  });

  it("answers an INTERNAL ToolError with the trace id only: its words, metadata and private detail are for the log", () => {
    const err = new ToolError({
      code: "internal",
      reason: "MEMORY_STORE_FAILED",
      message: verbatim("the memory store failed at db.internal:5432"),
      metadata: { sqlstate: "42P01" },
      privateDetail: "PostgreSQL at db.internal:5432/prod: relation memories does not exist",
    });
    const { error, unexpected } = toConnectError(err, TRACE, "en");
    expect(unexpected).toBe(true);
    expect(error.code).toBe(Code.Internal);
    expect(error.rawMessage).toBe(`internal error; report trace_id ${TRACE} to the service operators`);
    expect(error.details).toHaveLength(1);
    expect(error.findDetails(ErrorInfoSchema)[0]).toMatchObject({ reason: "INTERNAL", metadata: { trace_id: TRACE } });
    expect(JSON.stringify(error.findDetails(ErrorInfoSchema))).not.toMatch(/db\.internal|42P01/);
  });

  it("never renders a ToolError's private detail", () => {
    const err = new ToolError({
      code: "unavailable",
      reason: "LLM_UNAVAILABLE",
      message: verbatim("the LLM endpoint answered HTTP 503"),
      privateDetail: "HTTP 503: Bearer sk-secret",
    });
    const { error } = toConnectError(err, TRACE, "en");
    const told = [error.rawMessage, ...error.findDetails(ErrorInfoSchema).map((i) => JSON.stringify(i.metadata))].join(
      " ",
    );
    expect(told).not.toContain("sk-secret");
  });

  it("reports a call ended from outside by why it ended, not as our bug", () => {
    const deadline = new AbortController();
    deadline.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded));
    expect(toConnectError(new Error("aborted"), TRACE, "en", deadline.signal)).toMatchObject({
      error: { code: Code.DeadlineExceeded },
      unexpected: false,
    });
    const reset = new AbortController();
    reset.abort(new ConnectError("http/2 stream closed with error code INTERNAL_ERROR (0x2)", Code.Internal));
    const mapped = toConnectError(reset.signal.reason, TRACE, "en", reset.signal);
    expect(mapped.unexpected).toBe(false);
    expect(mapped.error.code).toBe(Code.Canceled);
  });

  it("keeps the code of a framework ConnectError such as RESOURCE_EXHAUSTED", () => {
    const { error, unexpected } = toConnectError(
      new ConnectError("message too large", Code.ResourceExhausted),
      TRACE,
      "en",
    );
    expect(unexpected).toBe(false);
    expect(error.code).toBe(Code.ResourceExhausted);
    expect(error.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RESOURCE_EXHAUSTED");
  });
});
