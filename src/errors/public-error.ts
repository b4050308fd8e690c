import { ToolError } from "./tool-error";

/** gRPC's UNAVAILABLE: the code of the reason the server's stop signal carries (app.ts). */
const UNAVAILABLE = 14;

/**
 * What a caller may see of a failure, for the edges that render errors themselves (the JSON
 * routes, MCP; connect-mapping.ts does the same for RPCs): a ToolError as it is, except an
 * INTERNAL one, whose text is ours to read, and anything that is not a ToolError; both become
 * INTERNAL carrying only the trace id. `unexpected` says the cause must be logged in full.
 * With the call's `signal` aborted, whatever the work threw on its way out is the abort: the
 * client went away (CANCELLED) or the server is stopping (UNAVAILABLE), neither our bug.
 */
export function publicError(
  err: unknown,
  traceId: string,
  signal?: AbortSignal,
): { error: ToolError; unexpected: boolean } {
  if (err instanceof ToolError && err.code !== "internal") return { error: err, unexpected: false };
  if (signal?.aborted) {
    const stopping = (signal.reason as { code?: unknown } | null)?.code === UNAVAILABLE;
    return {
      error: stopping
        ? new ToolError({
            code: "unavailable",
            reason: "SHUTTING_DOWN",
            message: {
              en: "the server is shutting down; retry on another replica",
              zh: "服务正在停止；请在另一个副本上重试",
            },
          })
        : new ToolError({
            code: "cancelled",
            reason: "CANCELLED",
            message: { en: "the client ended the call", zh: "客户端结束了调用" },
          }),
      unexpected: false,
    };
  }
  return {
    error: new ToolError({
      code: "internal",
      reason: "INTERNAL",
      message: {
        en: `internal error; report trace_id ${traceId} to the service operators`,
        zh: `内部错误；请把 trace_id ${traceId} 报告给服务的运维人员`,
      },
    }),
    unexpected: true,
  };
}
