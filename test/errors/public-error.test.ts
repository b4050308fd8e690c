import { describe, expect, it } from "vitest";
import { publicError } from "../../src/errors/public-error";
import { verbatim } from "../../src/errors/text";
import { ToolError } from "../../src/errors/tool-error";

describe("publicError (what the JSON routes and MCP may show of a failure)", () => {
  it("keeps a ToolError the caller can act on as it is", () => {
    const err = new ToolError({ code: "not_found", reason: "UNKNOWN_KN", message: verbatim("no network kn_x") });
    expect(publicError(err, "t1")).toEqual({ error: err, unexpected: false });
  });

  it("answers an INTERNAL ToolError with the trace id only, whatever its own text says", () => {
    const err = new ToolError({
      code: "internal",
      reason: "UNSAFE_PATH_SEGMENT",
      message: verbatim("segment '..' of /api/ontology-manager/in/v1/object-types"),
      privateDetail: "db.internal:5432",
    });
    const { error, unexpected } = publicError(err, "t2");
    expect(unexpected).toBe(true);
    expect(error).toMatchObject({ code: "internal", reason: "INTERNAL", privateDetail: undefined });
    expect(error.message).toBe("internal error; report trace_id t2 to the service operators");
  });

  it("answers anything that is not a ToolError with the trace id only", () => {
    const { error, unexpected } = publicError(new TypeError("Cannot read properties of undefined (reading 'x')"), "t3");
    expect(unexpected).toBe(true);
    expect(error.message).not.toContain("Cannot read");
  });
});
