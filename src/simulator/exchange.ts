import type http from "node:http";
import type { Logger } from "pino";
import type { CallContext } from "../core/call-context";
import type { Json } from "../core/json";
import { callerFromHeaders } from "../server/caller";
import { traceIdFromHeaders } from "../server/trace";

/**
 * One HTTP exchange as the simulator handles it: the request read whole, the
 * answer written at once, and the call context the platform would derive from
 * the request's headers.
 */

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** One request to the simulator, body included. */
export interface IncomingRequest {
  method: string;
  url: URL;
  /** Path and query string, as sent. */
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body's text; undefined when empty. */
  text: string | undefined;
  /** The JSON body; its text when it is not JSON; undefined when empty. */
  body: unknown;
  /** The client's port: the same across calls that reused one keep-alive connection. */
  remotePort: number;
}

/** An answer: a JSON value, or a text sent as it is (a fault's body that is not JSON). */
export interface Reply {
  status: number;
  body: Json | string;
}

/** Reads the request and its body (at most 16 MiB; a larger one fails the request). */
export async function readRequest(req: http.IncomingMessage): Promise<IncomingRequest> {
  const url = new URL(req.url ?? "/", "http://simulator");
  const text = await readBody(req);
  return {
    method: req.method ?? "GET",
    url,
    path: url.pathname + url.search,
    headers: req.headers,
    text,
    body: text === undefined ? undefined : parseOrText(text),
    remotePort: req.socket.remotePort ?? 0,
  };
}

/** Writes the answer as JSON (a text body as it is); returns its status for the request log. */
export function writeReply(res: http.ServerResponse, reply: Reply): number {
  const payload = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(payload),
  });
  res.end(payload);
  return reply.status;
}

/** Aborted when the client goes away before the answer is written: the backend stops work for it. */
export function abortOnClose(res: http.ServerResponse): AbortSignal {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the client closed the connection"));
  });
  return abort.signal;
}

/** What the platform knows of a caller: the identity and trace headers. Bad identity headers throw INVALID_ARGUMENT. */
export function callContextOf(request: IncomingRequest, log: Logger, signal: AbortSignal): CallContext {
  const headers = new Headers();
  for (const [k, v] of Object.entries(request.headers))
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  const traceId = traceIdFromHeaders(headers);
  return {
    caller: callerFromHeaders(headers),
    traceId,
    // The platform's words (its error bodies) are English: so are the backend's answers to it.
    language: "en",
    log: log.child({ trace_id: traceId }),
    signal,
    remainingMs: () => undefined,
  };
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function readBody(req: http.IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(size === 0 ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
