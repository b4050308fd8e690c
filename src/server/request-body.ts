import * as http2 from "node:http2";
import { type JsonShapeLimits, JsonShapeScanner } from "../core/json-shape";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { NodeServerRequest, NodeServerResponse } from "./node-types";

/** The reason of a body over READ_MAX_BYTES: answered 413 on plain routes, RESOURCE_EXHAUSTED on RPCs. */
export const REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE";
/** The reason of a JSON body nested deeper than JSON_MAX_DEPTH. */
export const JSON_TOO_DEEP = "JSON_TOO_DEEP";
/** The reason of a JSON body holding more values than JSON_MAX_VALUES. */
export const JSON_TOO_LARGE = "JSON_TOO_LARGE";

/** What reading a body gave: the bytes, or why they are refused. */
export type BodyRead = { body: Buffer; problem?: undefined } | { body?: undefined; problem: ToolError };

/** Measures a body chunk by chunk as it arrives; the refusal of the body once it has seen enough to refuse it. */
export interface BodyMeter {
  write(chunk: Buffer): ToolError | undefined;
}

/** A meter of a JSON body: refuses it once it nests too deep or holds too many values (see JsonShapeScanner). */
export function jsonMeter(limits: JsonShapeLimits): BodyMeter {
  const scanner = new JsonShapeScanner(limits);
  return { write: (chunk) => (scanner.write(chunk) ? shapeRefusal(scanner) : undefined) };
}

/**
 * Reads a request body whole, before the call takes an admission slot, so a
 * slow sender holds a socket and not a slot (the listener's request timeout
 * ends it). Past `maxBytes` it stops keeping the bytes and resolves with
 * REQUEST_TOO_LARGE; with a `meter` (e.g. jsonMeter), each chunk is measured
 * as it comes and the body is refused the same way as soon as the meter
 * refuses it (JSON_TOO_DEEP, JSON_TOO_LARGE), before anything parses it.
 * Once refused, the rest of the body is discarded as it
 * comes (not left unread, which resets an HTTP/1.1 connection before the
 * answer is read) and the connection or stream is closed once the answer is
 * written. Rejects when the client goes away first (see isClientGone).
 */
export function readRequestBody(
  req: NodeServerRequest,
  res: NodeServerResponse,
  maxBytes: number,
  meter?: BodyMeter,
): Promise<BodyRead> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("aborted", onAborted);
      res.off("close", onClose);
    };
    const refuse = (problem: ToolError) => {
      done();
      // Keep reading (and dropping) so the client can read the answer.
      req.on("data", () => undefined);
      req.on("error", () => undefined);
      closeAfterAnswer(req, res);
      resolve({ problem });
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      const problem = size > maxBytes ? tooLarge(maxBytes) : meter?.write(chunk);
      if (problem) refuse(problem);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve({ body: Buffer.concat(chunks) });
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onAborted = () => onError(Object.assign(new Error("the client aborted the request"), { code: "ECONNRESET" }));
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onError);
    req.once("aborted", onAborted);
    res.once("close", onClose);
  });
}

/** The refusal of a body over maxBytes, naming the setting. */
export function tooLarge(maxBytes: number): ToolError {
  return new ToolError({
    code: "resource_exhausted",
    reason: REQUEST_TOO_LARGE,
    message: text(
      `the request body is larger than ${maxBytes} bytes (READ_MAX_BYTES)`,
      `请求体超过 ${maxBytes} 字节（READ_MAX_BYTES）`,
    ),
    metadata: { limit_bytes: String(maxBytes) },
    hint: {
      message: text(
        "Send less data in one call, for example fewer items or shorter texts.",
        "一次调用少发一些数据，例如更少的条目或更短的文本。",
      ),
    },
  });
}

/**
 * After the answer, ends a request whose body was not read to its end:
 * HTTP/1.1 closes the connection (its next request would start mid-body);
 * HTTP/2 resets the stream with NO_ERROR, which asks the client to stop
 * sending (RFC 9113 §8.1).
 */
export function closeAfterAnswer(req: NodeServerRequest, res: NodeServerResponse): void {
  if ("stream" in req) {
    res.once("finish", () => {
      if (!req.complete && !req.stream.destroyed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
    });
    return;
  }
  if (!res.headersSent) res.setHeader("connection", "close");
}

/** The refusal of a JSON body nested deeper than maxDepth, naming the setting. */
export function tooDeep(maxDepth: number): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: JSON_TOO_DEEP,
    message: text(
      `the JSON body nests arrays or objects deeper than ${maxDepth} levels (JSON_MAX_DEPTH)`,
      `JSON 请求体中数组或对象的嵌套超过 ${maxDepth} 层（JSON_MAX_DEPTH）`,
    ),
    metadata: { limit_depth: String(maxDepth) },
    violations: [
      { field: "request", description: text(`nested deeper than ${maxDepth} levels`, `嵌套超过 ${maxDepth} 层`) },
    ],
    hint: {
      message: text(
        `Flatten the data so no value nests more than ${maxDepth} levels deep.`,
        `把数据展平，使任何值的嵌套都不超过 ${maxDepth} 层。`,
      ),
    },
  });
}

/** The refusal of a JSON body the scanner stopped at: too deep or too many values. */
export function shapeRefusal(scanner: JsonShapeScanner): ToolError {
  return scanner.over === "depth" ? tooDeep(scanner.limits.maxDepth) : tooManyValues(scanner.limits.maxValues);
}

/**
 * The refusal of a JSON body holding more than maxValues values, naming the
 * setting. INVALID_ARGUMENT, like a body nested too deep: the same body is
 * refused however idle the server is, so it is not worth retrying as
 * RESOURCE_EXHAUSTED (which clients read as "overloaded") would suggest.
 */
export function tooManyValues(maxValues: number): ToolError {
  return new ToolError({
    code: "invalid_argument",
    reason: JSON_TOO_LARGE,
    message: text(
      `the JSON body holds more than ${maxValues} values (object members and array items; JSON_MAX_VALUES)`,
      `JSON 请求体含有超过 ${maxValues} 个值（对象成员和数组元素；JSON_MAX_VALUES）`,
    ),
    metadata: { limit_values: String(maxValues) },
    violations: [{ field: "request", description: text(`more than ${maxValues} values`, `超过 ${maxValues} 个值`) }],
    hint: {
      message: text(
        "Send fewer items or fields in one call, for example split a long list over several calls.",
        "一次调用少发一些条目或字段，例如把长列表分到几次调用中。",
      ),
    },
  });
}

/**
 * True for the ways a client going away shows up on the server (reset,
 * aborted body, stream closed early): not our failure, logged at debug.
 */
export function isClientGone(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    code === "ECONNRESET" ||
    code === "EPIPE" ||
    code === "ECONNABORTED" ||
    code === "ERR_STREAM_PREMATURE_CLOSE" ||
    code === "ERR_STREAM_DESTROYED" ||
    code === "ERR_HTTP2_STREAM_ERROR" ||
    code === "ERR_HTTP2_INVALID_STREAM" ||
    code === "ERR_STREAM_WRITE_AFTER_END"
  );
}

/**
 * The Host (HTTP/1.1) or :authority (HTTP/2) when it is not a host name or
 * address with an optional port, which no URL can be built from; undefined
 * when it is well-formed or absent (Node refuses an HTTP/1.1 request without one).
 */
export function malformedHost(req: NodeServerRequest): string | undefined {
  const host = "authority" in req ? req.authority : req.headers.host;
  if (host === undefined || host === "") return undefined;
  return HOST.test(host) ? undefined : host;
}

const HOST = /^(?:[A-Za-z0-9._~!$&'()*+,;=-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
