import { ToolError } from "./tool-error";

/**
 * What a caller may see of a failure, for the edges that render errors themselves (the JSON
 * routes, MCP; connect-mapping.ts does the same for RPCs): a ToolError as it is, except an
 * INTERNAL one, whose text is ours to read, and anything that is not a ToolError; both become
 * INTERNAL carrying only the trace id. `unexpected` says the cause must be logged in full.
 */
export function publicError(err: unknown, traceId: string): { error: ToolError; unexpected: boolean } {
  if (err instanceof ToolError && err.code !== "internal") return { error: err, unexpected: false };
  return {
    error: new ToolError({
      code: "internal",
      reason: "INTERNAL",
      message: `internal error; report trace_id ${traceId} to the service operators`,
    }),
    unexpected: true,
  };
}
