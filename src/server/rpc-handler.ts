import type { OutgoingHttpHeaders } from "node:http";
import type { DescMessage } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ConnectRouter,
  type ConnectRouterOptions,
  createConnectRouter,
  createContextValues,
} from "@connectrpc/connect";
import { createAsyncIterable, type UniversalServerResponse } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
} from "@connectrpc/connect-node";
import type { Logger } from "pino";
import type { Language } from "../errors/text";
import type { ToolError } from "../errors/tool-error";
import { authResultOf } from "./auth";
import { EMPTY_JSON_ENVELOPE, EnvelopedJsonMeter } from "./enveloped-json";
import { hostRefusal, sendJson } from "./http-routes";
import { kAuthResult, kRequestProblem } from "./interceptors";
import { type JsonBodyEncoding, readUnaryJson } from "./json-body";
import { requestLanguage } from "./language";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";
import { protoShape, protoShapeProblem } from "./proto-shape";
import { isClientGone, malformedHost, readRequestBody } from "./request-body";
import type { ToolingStreams } from "./tooling-streams";

/** gRPC, gRPC-web and Connect streaming bodies of JSON messages. */
const ENVELOPED_JSON = /^application\/(grpc|grpc-web|connect)\+json(;|$)/i;
const RPC_PATH = /^\/[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+\/[A-Za-z_]\w*$/;

/**
 * The Node request listener for every RPC path, with `fallback` for any other
 * path. It does what connectNodeAdapter does, and also:
 * - checks a Connect unary JSON body before decoding (see json-body.ts), so a
 *   misspelt field gets the same detailed INVALID_ARGUMENT as any bad request;
 * - measures every JSON body it can while it arrives (Connect unary JSON,
 *   gzip or br included; the one message of a gRPC, gRPC-web or Connect
 *   streaming `+json` unary or server-streaming call), so one nested too
 *   deep or holding too many values is refused before it is parsed;
 * - answers curl-style mistakes on an RPC path (wrong method, wrong
 *   content-type, unknown RPC) with a JSON body that says what to send;
 * - writes grpc-message as the gRPC spec encodes it, which every gRPC client decodes;
 * - logs a response that cannot be written through pino, not console.error.
 */
export function createRpcHandler(opts: {
  routes: (router: ConnectRouter) => void;
  routerOptions: ConnectRouterOptions & { readMaxBytes: number };
  fallback: NodeHandler;
  /** Connect JSON bodies nested deeper than this are refused (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
  /** Connect JSON bodies holding more values than this are refused (JSON_MAX_VALUES). */
  jsonMaxValues: number;
  /** Binary unary request messages nested deeper than this are refused (see proto-shape.ts). */
  protoMaxDepth: number;
  /** Health watches and reflection streams; past their budget a gRPC one is refused here, before the framework. */
  toolingStreams: ToolingStreams;
  log: Logger;
  /** The language of refusals for a caller that asks for none (DEFAULT_LANGUAGE). */
  defaultLanguage: Language;
}): NodeHandler {
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    ...opts.routerOptions,
  });
  opts.routes(router);
  const byPath = new Map(router.handlers.map((h) => [h.requestPath, h]));
  const services = [...new Set(router.handlers.map((h) => h.service.typeName))].sort();

  return (req: NodeServerRequest, res: NodeServerResponse) => {
    const path = pathOf(req.url);
    if (opts.toolingStreams.full && TOOLING_STREAM_PATHS.has(path) && GRPC.test(String(req.headers["content-type"]))) {
      const refusal = opts.toolingStreams.refusal(path.slice(path.lastIndexOf("/") + 1));
      refuseToolingStream(req, res, refusal[requestLanguage(req.headers, opts.defaultLanguage)]);
      return;
    }
    const handler = byPath.get(path);
    const badHost = handler ? malformedHost(req) : undefined;
    if (badHost !== undefined) {
      // connect-node builds the call's URL from the Host: answer before it throws.
      sendJson(res, 400, { error: hostRefusal(badHost).message });
      return;
    }
    if (!handler) {
      if (req.method === "POST" && RPC_PATH.test(path)) {
        sendJson(res, 404, {
          error: `unknown RPC ${path.slice(1)}`,
          detail: "list the RPCs with server reflection (buf curl --reflect --list-methods, grpcurl list)",
          services,
        });
        return;
      }
      opts.fallback(req, res);
      return;
    }
    const contentType = String(req.headers["content-type"] ?? "");
    if (!handler.allowedMethods.includes(req.method ?? "")) {
      sendJson(
        res,
        405,
        { error: `use ${handler.allowedMethods.join(" or ")} for ${path.slice(1)}` },
        { allow: handler.allowedMethods.join(", ") },
      );
      return;
    }
    if (!handler.supportedContentType(contentType)) {
      sendJson(res, 415, {
        error: `unsupported content-type ${JSON.stringify(contentType)}`,
        detail:
          "send application/json or application/proto (Connect), application/grpc[+proto|+json] (gRPC) or application/grpc-web[+proto|+json] (gRPC-web)",
      });
      return;
    }
    if (contentType.startsWith("application/grpc") && !contentType.startsWith("application/grpc-web")) {
      encodeGrpcMessageBySpec(res);
    }
    const contextValues = createContextValues();
    contextValues.set(kAuthResult, authResultOf(req));
    const encoding = jsonBodyEncoding(req.headers["content-encoding"]);
    const { methodKind } = handler.method;
    const limits = {
      maxBytes: opts.routerOptions.readMaxBytes,
      maxDepth: opts.jsonMaxDepth,
      maxValues: opts.jsonMaxValues,
    };
    const binary = methodKind === "unary" && encoding === undefined ? binaryFraming(contentType) : undefined;
    let answered: Promise<UniversalServerResponse>;
    if (methodKind === "unary" && /^application\/json(;|$)/i.test(contentType) && encoding !== null) {
      answered = readUnaryJson(req, res, handler.method.input, limits, encoding).then(({ body, problem }) => {
        if (problem) contextValues.set(kRequestProblem, problem);
        return handler(universalRequestFromNodeRequest(req, res, body, contextValues));
      });
    } else if ((methodKind === "unary" || methodKind === "server_streaming") && ENVELOPED_JSON.test(contentType)) {
      // One enveloped message (a flag byte and a 4-byte length before it: the 5 bytes over maxBytes), measured as it
      // arrives; the router then reads it from memory. Client and bidi streams are left to the router: read whole,
      // they would never start.
      answered = readRequestBody(req, res, limits.maxBytes + 5, new EnvelopedJsonMeter(limits)).then((read) => {
        if (read.problem) contextValues.set(kRequestProblem, read.problem);
        const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
        return handler({ ...uReq, body: createAsyncIterable([read.body ?? EMPTY_JSON_ENVELOPE]) });
      });
    } else if (binary !== undefined) {
      // Read whole and walked (proto-shape.ts) before the router decodes it; the router then reads it from memory.
      const maxBytes = binary === "raw" ? limits.maxBytes : limits.maxBytes + 5;
      answered = readRequestBody(req, res, maxBytes).then((read) => {
        const problem = read.problem ?? binaryProblem(read.body, binary, handler.method.input, opts.protoMaxDepth);
        if (problem) contextValues.set(kRequestProblem, problem);
        const uReq = universalRequestFromNodeRequest(req, res, undefined, contextValues);
        return handler({
          ...uReq,
          // A body refused is replaced by an empty message, which must not be held to the content-length sent.
          header: problem && binary === "raw" ? withoutContentLength(uReq.header) : uReq.header,
          body: createAsyncIterable([problem || read.body === undefined ? EMPTY[binary] : read.body]),
        });
      });
    } else {
      // The framework reads other bodies itself: called at once, not a turn of the microtask queue later.
      try {
        answered = handler(universalRequestFromNodeRequest(req, res, undefined, contextValues));
      } catch (err) {
        answered = Promise.reject(err);
      }
    }
    answered
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((reason: unknown) => {
        const rpc = `${handler.service.typeName}/${handler.method.name}`;
        // The client went away: nothing to answer and nothing wrong with us.
        if (isClientGone(reason) || res.destroyed || ConnectError.from(reason).code === Code.Aborted) {
          opts.log.debug({ err: reason, rpc }, "the client went away before the rpc was answered");
          return;
        }
        opts.log.warn({ err: reason, rpc }, "could not write the rpc response");
        if (!res.headersSent) res.destroy();
      });
  };
}

/** The long-lived streams that take no admission slot (tooling-streams.ts). */
const TOOLING_STREAM_PATHS = new Set([
  "/grpc.health.v1.Health/Watch",
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
]);
const GRPC = /^application\/grpc(\+proto)?(;|$)/i;

/**
 * RESOURCE_EXHAUSTED as a gRPC trailers-only answer, written at once: a flood
 * of watches past the budget would otherwise cost the framework's whole call
 * set-up (errors with stacks, abort signals) for each one refused, about 2 ms
 * of CPU apiece, and health calls never wait for a slot. The body is dropped.
 */
function refuseToolingStream(req: NodeServerRequest, res: NodeServerResponse, message: string): void {
  req.resume();
  answerGrpcTrailersOnly(res, { "content-type": "application/grpc" }, Code.ResourceExhausted, message);
}

/**
 * A gRPC call ended with `code` before any handler, as a gRPC server refuses
 * one: trailers-only, the status in the one HEADERS frame, which ends the
 * stream. gRPC clients show its status and message; a client still sending
 * its request is reset after it, and grpc-js would take that reset as the
 * answer if the status came in a frame of its own.
 */
export function answerGrpcTrailersOnly(
  res: NodeServerResponse,
  headers: Record<string, string>,
  code: Code,
  message: string,
): void {
  const all = { ...headers, "grpc-status": String(code), "grpc-message": specPercentEncode(message) };
  if ("stream" in res) {
    // A stream the client already reset cannot be answered (respond would throw).
    if (!res.stream.destroyed) res.stream.respond({ ":status": 200, ...all }, { endStream: true });
    return;
  }
  res.writeHead(200, all);
  res.end();
}

/** How a binary unary request body holds its message: as it is (Connect), or in one 5-byte envelope (gRPC, gRPC-web). */
function binaryFraming(contentType: string): "raw" | "enveloped" | undefined {
  if (/^application\/proto(;|$)/i.test(contentType)) return "raw";
  if (/^application\/grpc(-web)?(\+proto)?(;|$)/i.test(contentType)) return "enveloped";
  return undefined;
}

function withoutContentLength(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.delete("content-length");
  return copy;
}

/** An empty request message, in each framing: what the framework decodes when the real one was refused. */
const EMPTY = { raw: new Uint8Array(0), enveloped: new Uint8Array(5) };

/**
 * Why a binary unary body must not reach the decoder (protoShape: nested too
 * deep, or not the wire format), or undefined. A compressed envelope, or other
 * than one whole envelope, is left to the router, which refuses those itself.
 */
function binaryProblem(
  bytes: Buffer,
  framing: "raw" | "enveloped",
  input: DescMessage,
  maxDepth: number,
): ToolError | undefined {
  let message: Uint8Array | undefined = bytes;
  if (framing === "enveloped") {
    const whole = bytes.length >= 5 && (bytes[0]! & 1) === 0 && bytes.readUInt32BE(1) === bytes.length - 5;
    message = whole ? bytes.subarray(5) : undefined;
  }
  const shape = message === undefined ? "ok" : protoShape(input, message, maxDepth);
  return shape === "ok" ? undefined : protoShapeProblem(shape, maxDepth);
}

/**
 * connect-es percent-encodes grpc-message with encodeURIComponent; grpc-js
 * decodes it with decodeURI and so shows "%3A" for every ":". The gRPC spec
 * encodes only bytes outside 0x20..0x7E and "%", which both decode correctly.
 */
function encodeGrpcMessageBySpec(res: NodeServerResponse): void {
  // Own properties calling the prototype's methods: no bound copies and closures per call.
  (res as { writeHead: unknown }).writeHead = writeHeadBySpec;
  (res as { addTrailers: unknown }).addTrailers = addTrailersBySpec;
}

function writeHeadBySpec(this: NodeServerResponse, status: number, headers?: OutgoingHttpHeaders): NodeServerResponse {
  fixGrpcMessage(headers);
  const proto = Object.getPrototypeOf(this) as {
    writeHead(status: number, headers?: OutgoingHttpHeaders): NodeServerResponse;
  };
  return proto.writeHead.call(this, status, headers);
}

function addTrailersBySpec(this: NodeServerResponse, headers: OutgoingHttpHeaders): void {
  fixGrpcMessage(headers);
  const proto = Object.getPrototypeOf(this) as { addTrailers(headers: OutgoingHttpHeaders): void };
  proto.addTrailers.call(this, headers);
}

function fixGrpcMessage(headers: OutgoingHttpHeaders | undefined): void {
  const value = headers?.["grpc-message"];
  if (headers && typeof value === "string") headers["grpc-message"] = specPercentEncode(decodeURIComponentSafe(value));
}

/**
 * The encoding of a Connect unary JSON body that readUnaryJson reads:
 * undefined for none, null for one it leaves to the router (which answers an
 * encoding it does not accept).
 */
function jsonBodyEncoding(header: string | string[] | undefined): JsonBodyEncoding | undefined | null {
  const value = String(header ?? "identity").toLowerCase();
  if (value === "identity" || value === "") return undefined;
  return value === "gzip" || value === "br" ? value : null;
}

/** The path of a request URL, without its query. */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return "";
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Percent-encodes the UTF-8 bytes outside 0x20..0x7E, and "%" (gRPC over HTTP/2, "Status-Message"). */
export function specPercentEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}
