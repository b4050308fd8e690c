import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Logger } from "pino";
import type { CallContext, Caller } from "../core/call-context";
import { ToolError } from "../errors/tool-error";
import { callerFromHeaders, knIdFromHeaders } from "../server/caller";
import type { HttpRoute } from "../server/http-routes";
import { headersOf, readBody } from "../server/json-route";
import type { NodeServerResponse } from "../server/node-types";
import { traceIdFromHeaders } from "../server/trace";
import { createMcpServer } from "./server";
import type { McpTool } from "./tools";

export const MCP_PATH = "/mcp";

/**
 * MCP over Streamable HTTP at POST /mcp, stateless: each POST is answered on
 * its own (a JSON body, no SSE stream, no session id), so any replica can
 * serve any call. GET and DELETE are 405 with `Allow: POST`, as the transport
 * spec allows a server that offers no stream and no sessions (the route table
 * answers them). The identity headers and `traceparent` work as for RPCs, and
 * a call is cancelled when its client goes away or the server stops.
 */
export function mcpRoute(opts: {
  tools: readonly McpTool[];
  log: Logger;
  maxBytes: number;
  stopping: AbortSignal;
}): HttpRoute {
  return {
    method: "POST",
    path: MCP_PATH,
    async handle(req, res) {
      const started = performance.now();
      const headers = headersOf(req);
      const traceId = traceIdFromHeaders(headers);
      const log = opts.log.child({ trace_id: traceId, route: MCP_PATH });
      let caller: Caller;
      let headerKnId: string | undefined;
      let body: Buffer;
      try {
        caller = callerFromHeaders(headers);
        headerKnId = knIdFromHeaders(headers);
        body = await readBody(req, opts.maxBytes);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        // Before any JSON-RPC message is read: a JSON-RPC error without an id, with the status the problem means.
        const status = err.code === "resource_exhausted" ? 413 : 400;
        writeJsonRpcError(res, status, err.message, traceId);
        log.info({ status, reason: err.reason }, "mcp request refused");
        return;
      }
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort(new Error("the client closed the connection"));
      });
      const callLog = log.child({ account: caller.accountId });
      const server = createMcpServer({
        tools: opts.tools,
        contextOf: (signal): CallContext => ({
          caller,
          ...(headerKnId !== undefined ? { headerKnId } : {}),
          traceId,
          log: callLog,
          signal: AbortSignal.any([signal, gone.signal, opts.stopping]),
          remainingMs: () => undefined,
        }),
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: opts.maxBytes,
      });
      try {
        await server.connect(transport);
        const answer = await transport.handleRequest(
          new Request(`http://${headers.get("host") ?? "localhost"}${MCP_PATH}`, {
            method: "POST",
            headers,
            body: new Uint8Array(body),
          }),
        );
        const text = answer.body === null ? "" : await answer.text();
        const out: Record<string, string> = { "x-trace-id": traceId };
        answer.headers.forEach((value, name) => {
          out[name] = value;
        });
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(answer.status, { ...out, "content-length": String(Buffer.byteLength(text)) });
          res.end(text);
        }
        log.info({ status: answer.status, ms: Math.round((performance.now() - started) * 10) / 10 }, "mcp");
      } finally {
        await server.close();
      }
    },
  };
}

function writeJsonRpcError(res: NodeServerResponse, status: number, message: string, traceId: string): void {
  const text = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message } });
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "x-trace-id": traceId,
  });
  res.end(text);
}
