import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { CallContext, Caller } from "../core/call-context";
import type { Language } from "../errors/text";
import { renderIn, ToolError } from "../errors/tool-error";
import type { Admission } from "../server/admission";
import { authenticatedCaller, challengeHeaders } from "../server/auth";
import { knIdFromHeaders } from "../server/caller";
import type { HttpRoute } from "../server/http-routes";
import { headersOf, refusalStatus } from "../server/http-routes";
import { httpStatusOf } from "../server/json-route";
import { chooseLanguage, languageHeaderProblem } from "../server/language";
import type { NodeServerResponse } from "../server/node-types";
import { traceIdFromHeaders } from "../server/trace";
import { createMcpServer } from "./server";
import type { McpTool } from "./tools";

export const MCP_PATH = "/mcp";

/**
 * MCP over Streamable HTTP at POST /mcp, stateless: each POST is answered on
 * its own (a JSON body; an event stream only for a tools/call that asks for
 * progress, ending with its result; no session id), so any replica can serve
 * any call. GET and DELETE are 405 with `Allow: POST`, as the transport
 * spec allows a server that offers no stream and no sessions (the route table
 * answers them). Each tool call takes its own admission slot, so a JSON-RPC
 * batch of a hundred calls waits its turn a hundred times rather than running
 * them all in one turn of the event loop. The identity headers and `traceparent` work as for RPCs, and
 * a call is cancelled when its client goes away or the server stops.
 */
export function mcpRoute(opts: {
  tools: readonly McpTool[];
  log: Logger;
  maxBytes: number;
  stopping: AbortSignal;
  admission: Admission;
  /** The language of errors for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
}): HttpRoute {
  return {
    method: "POST",
    path: MCP_PATH,
    jsonBody: { maxBytes: opts.maxBytes },
    // Each tools/call and tools/list of the body waits for its own slot (createMcpServer's `admit`).
    admitsItself: true,
    // Refused before any JSON-RPC message is read: a JSON-RPC error without an id, with the status the problem means.
    renderRefusal: (err, _traceId, language) => ({
      status: refusalStatus(err),
      body: jsonRpcError(err.text[language]),
    }),
    async handle(req, res, body) {
      const started = performance.now();
      const headers = headersOf(req);
      const traceId = traceIdFromHeaders(headers);
      const language = chooseLanguage(headers.get("language"), headers.get("accept-language"), opts.defaultLanguage);
      // The request's own lines carry trace_id and route on the line; the one child logger per request,
      // made once the account is known, is the tools' (a child of a child is what pino makes slowly).
      const fields = { trace_id: traceId, route: MCP_PATH };
      let caller: Caller;
      let headerKnId: string | undefined;
      try {
        caller = authenticatedCaller(req);
        const languageProblem = languageHeaderProblem(headers.get("language"));
        if (languageProblem) throw languageProblem;
        headerKnId = knIdFromHeaders(headers);
      } catch (err) {
        if (!(err instanceof ToolError)) throw err;
        // Before any JSON-RPC message is read (the caller or its x-kn-id refused): a JSON-RPC error
        // without an id, with the status the problem means.
        const status = httpStatusOf[err.code];
        const said = renderIn(err, language);
        const message = said.hint
          ? `${said.message}${language === "zh" ? "。" : ". "}${said.hint.message}`
          : said.message;
        writeJsonRpcError(res, status, message, traceId, challengeHeaders(err));
        opts.log.info({ ...fields, status, reason: err.reason }, "mcp request refused");
        return;
      }
      const version = headers.get("mcp-protocol-version");
      if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        // Refused here rather than by the SDK, which would echo the whole header back: it comes from the caller, whatever its length.
        const shown =
          version.length > 40
            ? `${JSON.stringify(version.slice(0, 40))}… (${version.length} characters)`
            : JSON.stringify(version);
        const message =
          language === "zh"
            ? `Bad Request：不支持的 mcp-protocol-version ${shown}；本服务器支持 ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`
            : `Bad Request: unsupported mcp-protocol-version ${shown}; this server speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`;
        writeJsonRpcError(res, 400, message, traceId);
        opts.log.info({ ...fields, status: 400, reason: "UNSUPPORTED_PROTOCOL_VERSION" }, "mcp request refused");
        return;
      }
      const gone = new AbortController();
      res.once("close", () => {
        if (!res.writableFinished) gone.abort(new Error("the client closed the connection"));
      });
      const callLog = opts.log.child({ ...fields, account: caller.accountId });
      const server = createMcpServer({
        tools: opts.tools,
        admit: (signal) => opts.admission.tryEnter() ?? opts.admission.enter(signal, caller.accountId),
        contextOf: (signal): CallContext => ({
          caller,
          ...(headerKnId !== undefined ? { headerKnId } : {}),
          traceId,
          language,
          log: callLog,
          signal: AbortSignal.any([signal, gone.signal, opts.stopping]),
          remainingMs: () => undefined,
        }),
      });
      // Parsed once, here, and handed to the transport; JSON it cannot parse is left to the transport to answer.
      const parsed = parseJson(body);
      // A call that asks for progress is answered as an event stream carrying the notifications, then the result.
      const streaming = parsed !== undefined && asksForProgress(parsed.value);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: !streaming,
        maxRequestBodySize: opts.maxBytes,
      });
      try {
        await server.connect(transport);
        const answer = await transport.handleRequest(
          // http-routes refused a malformed Host, so the URL is well-formed.
          new Request(`http://${headers.get("host") ?? "localhost"}${MCP_PATH}`, {
            method: "POST",
            headers,
            body: new Uint8Array(body),
          }),
          parsed === undefined ? undefined : { parsedBody: parsed.value },
        );
        const out: Record<string, string> = { "x-trace-id": traceId };
        answer.headers.forEach((value, name) => {
          out[name] = value;
        });
        if (answer.body !== null && answer.headers.get("content-type")?.startsWith("text/event-stream")) {
          await streamTo(res, answer.status, out, answer.body);
          opts.log.info(
            { ...fields, status: answer.status, ms: Math.round((performance.now() - started) * 10) / 10 },
            "mcp",
          );
          return;
        }
        const text = answer.body === null ? "" : await answer.text();
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(answer.status, { ...out, "content-length": String(Buffer.byteLength(text)) });
          res.end(text);
        }
        opts.log.info(
          { ...fields, status: answer.status, ms: Math.round((performance.now() - started) * 10) / 10 },
          "mcp",
        );
      } finally {
        await server.close();
      }
    },
  };
}

/** The body parsed, or undefined when it is not JSON (the transport answers that with a parse error). */
function parseJson(body: Buffer): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(body.toString("utf8")) };
  } catch {
    return undefined;
  }
}

/** True when the message is a tools/call (or a batch holding one) whose `_meta` carries a progressToken. */
function asksForProgress(parsed: unknown): boolean {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  return messages.some((m: unknown) => {
    const msg = m as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null;
    return msg?.method === "tools/call" && msg.params?._meta?.progressToken !== undefined;
  });
}

/** Writes an event stream as it comes, each event when it is sent; stops reading when the client is gone. */
async function streamTo(
  res: NodeServerResponse,
  status: number,
  headers: Record<string, string>,
  body: ReadableStream<Uint8Array>,
): Promise<void> {
  const reader = body.getReader();
  try {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, headers);
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      (res as { write(chunk: Uint8Array): boolean }).write(value);
    }
    if (!res.destroyed) res.end();
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function jsonRpcError(message: string) {
  return { jsonrpc: "2.0", id: null, error: { code: -32600, message } };
}

function writeJsonRpcError(
  res: NodeServerResponse,
  status: number,
  message: string,
  traceId: string,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(jsonRpcError(message));
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "x-trace-id": traceId,
    ...headers,
  });
  res.end(text);
}
