import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { Ingress } from "./ingress";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";

/** The first bytes of every HTTP/2 connection (RFC 9113 §3.4). */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** Answered at once and never held: a full server still tells Kubernetes it is alive (and whether it is ready). */
const PROBE_PATHS = new Set(["/healthz", "/readyz"]);

function isProbe(req: NodeServerRequest): boolean {
  return req.method === "GET" && PROBE_PATHS.has(req.url ?? "");
}

/** How long a caller past its share of open streams waits for its 503 (see holdRefusal). */
const REFUSAL_HOLD_MS = 500;
/** A refused HTTP/1.1 request whose body is at most this long is read and dropped, keeping its connection. */
const KEEP_ALIVE_REFUSED_BODY_BYTES = 64 * 1024;
/** After the grace period and the abort, how long responses get to flush before sockets are cut. */
const FLUSH_AFTER_ABORT_MS = 1_000;

/** How long a connection may take to send what it must, ms (the HTTP_*_TIMEOUT_MS settings). */
export interface ConnectionTimeouts {
  /** The first bytes and a request's headers; an HTTP/2 connection's first stream. */
  headersMs: number;
  /** A request whole, headers and body; the answer is not bound by it. */
  requestMs: number;
  /** An idle HTTP/1.1 keep-alive connection. */
  keepAliveMs: number;
  /** An HTTP/2 connection with no open stream. */
  http2IdleMs: number;
}

/** Streams and requests open at once (HTTP2_MAX_CONCURRENT_STREAMS, STREAMS_MAX_OPEN). */
export interface StreamLimits {
  /** Per HTTP/2 connection, advertised in its SETTINGS: the client may not open more. */
  perConnection: number;
  /** In the whole process, HTTP/1.1 requests and HTTP/2 streams together. */
  total: number;
}

export interface ListenerOptions {
  handler: NodeHandler;
  /** With `clientCa`, every client is asked for a certificate checked against it, and let in either way (src/server/auth reads the verdict). */
  tls: { cert: Buffer; key: Buffer; clientCa?: Buffer } | undefined;
  timeouts: ConnectionTimeouts;
  streams: StreamLimits;
  /** Whose turn a request waits in at the ingress (who it says it comes from); its connection when undefined. */
  callerOf?: (req: NodeServerRequest) => string | undefined;
  log: Logger;
}

/**
 * One TCP port for every protocol. Without TLS, each connection's first bytes
 * decide: the HTTP/2 preface goes to an h2c server (gRPC, Connect over h2),
 * anything else to an HTTP/1.1 server (Connect, gRPC-web, plain routes). With
 * TLS, ALPN decides (h2 or http/1.1). Both reach the same handler.
 *
 * Shutdown is graceful: stop accepting, GOAWAY to HTTP/2 sessions, close idle
 * HTTP/1.1 connections and the busy ones after their response, wait up to the
 * grace period, then abort what still runs and cut what is left.
 *
 * Slow or silent clients are cut by the timeouts: a connection that sends no
 * headers, a request body that does not arrive whole in time (HTTP/1.1 408;
 * HTTP/2 stream reset), idle keep-alive connections and HTTP/2 sessions with
 * no open stream. Answers are never cut: a long stream or a slow upstream
 * call runs as long as its own deadline allows.
 *
 * Open streams are bounded: each HTTP/2 connection advertises
 * HTTP2_MAX_CONCURRENT_STREAMS (Node's default is 2^32-1, and a thousand idle
 * streams per connection held gigabytes), and past STREAMS_MAX_OPEN in the
 * whole process a new request (but a probe) is answered 503 with Retry-After at
 * once, before any handler, so the memory held by open streams has a ceiling whatever the
 * number of connections; and one caller (who it says it is) may hold at most a
 * quarter of that, so one flooding account leaves room for the others.
 *
 * Requests reach the handler a turn's worth at a time, callers (who they
 * say they are, else their connection) taking turns (src/server/ingress.ts):
 * a read holding a hundred streams, or a thousand clients each sending one,
 * no longer makes one long turn, and another caller's request waits for one
 * of theirs, not for all.
 */
export class Listener {
  private readonly front: net.Server;
  private readonly h1: http.Server;
  private readonly h2: http2.Http2Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly h2Sockets = new WeakSet<net.Socket>();
  private readonly sessions = new Set<http2.Http2Session>();
  /** In-flight HTTP/1.x requests per socket. */
  private readonly busy = new WeakMap<net.Socket, number>();
  /** HTTP/1.x responses not finished yet: told to close their connection when shutdown begins. */
  private readonly h1Responses = new Set<NodeServerResponse>();
  /** HTTP/2 requests whose body has not arrived whole yet, by stream, in the order they came. */
  private readonly bodiesDue = new Map<http2.ServerHttp2Stream, { req: http2.Http2ServerRequest; due: number }>();
  private bodySweep: NodeJS.Timeout | undefined;
  private closing = false;
  /** HTTP/1.x requests and HTTP/2 streams whose response has not closed yet. */
  private open = 0;
  private readonly allClosedWaiters = new Set<() => void>();
  /** Refusals of callers past their share, answered together when refusalTimer fires. */
  private heldRefusals: (() => void)[] = [];
  private refusalTimer: NodeJS.Timeout | undefined;
  /** Requests and streams open, by who they say they come from (callerOf). */
  private readonly openByCaller = new Map<string, number>();
  /** Hands requests to the handler a turn's worth at a time, callers taking turns (probes skip it). */
  private readonly ingress = new Ingress();

  constructor(private readonly opts: ListenerOptions) {
    const t = opts.timeouts;
    const h1Timeouts = {
      keepAliveTimeout: t.keepAliveMs,
      headersTimeout: t.headersMs,
      requestTimeout: t.requestMs,
      // Node checks the two timeouts above this often (30 s by default): a tenth of the shorter one.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(t.headersMs / 10))),
    };
    this.h1 = http.createServer(h1Timeouts);
    const settings = { maxConcurrentStreams: opts.streams.perConnection };
    this.h2 = http2.createServer({ settings });
    // The h1 server never listens itself (the front server hands it connections), and Node starts
    // the checks of headersTimeout and requestTimeout on 'listening': start them here.
    this.h1.emit("listening");
    const handler = (req: NodeServerRequest, res: NodeServerResponse) => this.onRequest(req, res);
    this.h1.on("request", handler);
    this.h2.on("request", handler);
    this.h2.on("session", (s) => this.trackSession(s));
    if (opts.tls) {
      const { cert, key, clientCa } = opts.tls;
      const clientCerts = clientCa ? { requestCert: true, rejectUnauthorized: false, ca: clientCa } : {};
      const secure = http2.createSecureServer({ cert, key, allowHTTP1: true, settings, ...clientCerts }, handler);
      // Its HTTP/1.1 fallback reads these as the h1 server does (createSecureServer does not take them as options).
      Object.assign(secure, h1Timeouts);
      secure.on("session", (s) => this.trackSession(s));
      secure.on("secureConnection", (socket: TLSSocket) => {
        if (socket.alpnProtocol === "h2") this.h2Sockets.add(socket);
        this.trackSocket(socket);
      });
      secure.on("tlsClientError", (err) => opts.log.debug({ err }, "tls handshake failed"));
      this.front = secure;
    } else {
      this.front = net.createServer((socket) => {
        this.trackSocket(socket);
        this.sniff(socket);
      });
    }
    this.h1.on("clientError", (err: Error & { code?: string }, socket: net.Socket) => {
      opts.log.debug({ err }, "client connection error");
      // As Node answers without a listener: 408 for a request not received in time, 431 for headers
      // over the size limit, 400 for bad framing.
      const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
      if (socket.writable && !response?.headersSent) {
        const status =
          err.code === "ERR_HTTP_REQUEST_TIMEOUT"
            ? "408 Request Timeout"
            : err.code === "HPE_HEADER_OVERFLOW"
              ? "431 Request Header Fields Too Large"
              : "400 Bad Request";
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      }
      socket.destroy();
    });
    for (const server of [this.h2, this.front]) {
      server.on("clientError", (err: Error, socket: net.Socket) => {
        opts.log.debug({ err }, "client connection error");
        socket.destroy();
      });
    }
  }

  /** Starts listening; resolves with the bound port (useful with port 0). */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.front.once("error", reject);
      this.front.listen(port, host, () => {
        this.front.off("error", reject);
        resolve((this.front.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting and drains. `abortInFlight` is called when the grace period
   * ends with calls still running, so their handlers can stop.
   */
  async shutdown(graceMs: number, abortInFlight: () => void): Promise<void> {
    this.closing = true;
    this.front.close();
    // Stops the h1 server's timeout checks (it holds no listening socket).
    this.h1.close();
    for (const res of this.h1Responses) if (!res.headersSent) res.setHeader("connection", "close");
    for (const session of this.sessions) session.close();
    for (const socket of this.sockets) {
      if (!this.h2Sockets.has(socket) && (this.busy.get(socket) ?? 0) === 0) socket.destroy();
    }
    if (await this.allClosedWithin(graceMs)) return;
    this.opts.log.warn({ open_connections: this.sockets.size }, "grace period over: aborting in-flight calls");
    abortInFlight();
    if (await this.allClosedWithin(FLUSH_AFTER_ABORT_MS)) return;
    for (const session of this.sessions) session.destroy();
    for (const socket of this.sockets) socket.destroy();
  }

  /** Requests and streams open now, over every connection. */
  get openStreams(): number {
    return this.open;
  }

  private onRequest(req: NodeServerRequest, res: NodeServerResponse): void {
    const probe = isProbe(req);
    const caller = probe ? undefined : this.opts.callerOf?.(req);
    if (!probe && this.open >= this.opts.streams.total) {
      this.refuseOverCap(req, res, `the server has ${this.opts.streams.total} requests and streams open, its limit`);
      return;
    }
    const callerOpen = caller === undefined ? 0 : (this.openByCaller.get(caller) ?? 0);
    if (caller !== undefined && callerOpen >= this.perCaller) {
      const why = `this caller has ${this.perCaller} requests and streams open, a quarter of the limit`;
      let gone = false;
      res.once("close", () => {
        gone = true;
      });
      this.holdRefusal(() => {
        if (!gone) this.refuseOverCap(req, res, why);
      });
      return;
    }
    this.open++;
    if (caller !== undefined) this.openByCaller.set(caller, callerOpen + 1);
    // One listener for what every request's end undoes: the open counts, and the flag the ingress reads.
    let gone = false;
    res.once("close", () => {
      gone = true;
      this.open--;
      if (caller === undefined) return;
      const left = (this.openByCaller.get(caller) ?? 1) - 1;
      if (left === 0) this.openByCaller.delete(caller);
      else this.openByCaller.set(caller, left);
    });
    if ("stream" in req) this.limitBodyTime(req);
    else {
      const socket = req.socket;
      this.busy.set(socket, (this.busy.get(socket) ?? 0) + 1);
      this.h1Responses.add(res);
      if (this.closing && !res.headersSent) res.setHeader("connection", "close");
      res.once("close", () => {
        this.h1Responses.delete(res);
        const left = (this.busy.get(socket) ?? 1) - 1;
        this.busy.set(socket, left);
        if (this.closing && left === 0) socket.end();
      });
    }
    if (probe) {
      this.opts.handler(req, res);
      return;
    }
    this.ingress.admit(caller ?? ("stream" in req ? (req.stream.session ?? req.socket) : req.socket), () => {
      if (!gone) this.opts.handler(req, res);
    });
  }

  /**
   * Answers a caller past its share after REFUSAL_HOLD_MS, all held ones in one
   * timer callback: a refusal answered at once was sent again at once, and a
   * flood of them kept both the client's and the service's loops busy with
   * nothing but refusals. Held, they cost a socket each and nothing else.
   */
  private holdRefusal(answer: () => void): void {
    this.heldRefusals.push(answer);
    if (this.refusalTimer !== undefined) return;
    this.refusalTimer = setTimeout(() => {
      this.refusalTimer = undefined;
      const due = this.heldRefusals;
      this.heldRefusals = [];
      for (const refuse of due) refuse();
    }, REFUSAL_HOLD_MS);
  }

  /** The most requests and streams one caller (who they say they are) may have open: a quarter of STREAMS_MAX_OPEN. */
  private get perCaller(): number {
    return Math.max(1, Math.floor(this.opts.streams.total / 4));
  }

  /**
   * 503 with Retry-After, as cheap as an answer gets: no handler, no body read.
   * gRPC clients see UNAVAILABLE (retryable), Connect and plain HTTP clients the
   * status and a JSON line naming the setting. The body is dropped (an HTTP/2
   * stream is reset after the answer; an HTTP/1.1 connection closes when the
   * body is large or unsized, and is kept when it is small).
   */
  private refuseOverCap(req: NodeServerRequest, res: NodeServerResponse, why: string): void {
    this.opts.log.debug({ path: req.url, open: this.open }, "request refused: STREAMS_MAX_OPEN reached");
    const text = JSON.stringify({
      error: `${why} (STREAMS_MAX_OPEN); retry in a second`,
      reason: "TOO_MANY_STREAMS",
    });
    req.resume();
    if ("stream" in req) {
      res.once("finish", () => {
        if (!req.stream.destroyed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
      });
    } else if (!(Number(req.headers["content-length"] ?? 0) <= KEEP_ALIVE_REFUSED_BODY_BYTES)) {
      // A large or unsized body is not read to keep the connection: it closes. A small one is read and
      // dropped, and the connection stays: a flood refused with "connection: close" reconnected at once,
      // and its new connections filled the accept queue ahead of everyone else's.
      res.setHeader("connection", "close");
    }
    res.writeHead(503, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      "retry-after": "1",
    });
    res.end(text);
  }

  /**
   * HTTP/2's counterpart of the HTTP/1.1 request timeout: a stream whose
   * body has not arrived whole in time is reset (CANCEL), so its call ends
   * before it took a slot. The answer is not timed. One timer for all
   * streams, checking every tenth of the timeout (as Node checks HTTP/1.1's),
   * rather than a timer and a listener per request.
   */
  private limitBodyTime(req: http2.Http2ServerRequest): void {
    if (req.complete) return;
    this.bodiesDue.set(req.stream, { req, due: performance.now() + this.opts.timeouts.requestMs });
    if (this.bodySweep === undefined) {
      const every = Math.max(10, Math.min(1000, Math.floor(this.opts.timeouts.requestMs / 10)));
      this.bodySweep = setInterval(() => this.cutSlowBodies(), every);
      this.bodySweep.unref();
    }
  }

  private cutSlowBodies(): void {
    const now = performance.now();
    // In the order the requests came, so in the order they are due.
    for (const [stream, { req, due }] of this.bodiesDue) {
      if (req.complete || stream.destroyed) {
        this.bodiesDue.delete(stream);
        continue;
      }
      if (due > now) break;
      this.bodiesDue.delete(stream);
      this.opts.log.debug({ path: req.url }, "request body not received in time: stream reset");
      stream.close(http2.constants.NGHTTP2_CANCEL);
    }
    if (this.bodiesDue.size === 0) {
      clearInterval(this.bodySweep);
      this.bodySweep = undefined;
    }
  }

  private sniff(socket: net.Socket): void {
    let head: Buffer = Buffer.alloc(0);
    socket.setTimeout(this.opts.timeouts.headersMs, () => socket.destroy());
    const onData = (chunk: Buffer) => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const n = Math.min(head.length, H2_PREFACE.length);
      const isH2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && head.length < H2_PREFACE.length) return;
      socket.off("data", onData);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(head);
      if (isH2) {
        this.h2Sockets.add(socket);
        // The h2 session reads what is already buffered on the socket itself.
        this.h2.emit("connection", socket);
      } else {
        this.h1.emit("connection", socket);
        // The HTTP/1 parser takes the buffered bytes from 'data' events, before anything new.
        socket.resume();
      }
    };
    socket.on("data", onData);
  }

  private trackSocket(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.once("close", () => {
      this.sockets.delete(socket);
      if (this.sockets.size === 0) for (const wake of this.allClosedWaiters) wake();
    });
  }

  /**
   * Follows a session until it closes, and closes it (GOAWAY) once it has had
   * no open stream for HTTP2_IDLE_TIMEOUT_MS, or opened none within the
   * headers timeout (a client that sent SETTINGS and nothing else).
   */
  private trackSession(session: http2.Http2Session): void {
    this.sessions.add(session);
    session.on("error", (err) => this.opts.log.debug({ err }, "http/2 session error"));
    if (this.closing) session.close();
    let open = 0;
    let timer: NodeJS.Timeout | undefined;
    const idleAfter = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (open === 0 && !session.closed) session.close();
      }, ms);
      timer.unref();
    };
    idleAfter(this.opts.timeouts.headersMs);
    session.on("stream", (stream: http2.ServerHttp2Stream) => {
      open++;
      clearTimeout(timer);
      stream.once("close", () => {
        this.bodiesDue.delete(stream);
        open--;
        if (open === 0) idleAfter(this.opts.timeouts.http2IdleMs);
      });
    });
    session.once("close", () => {
      clearTimeout(timer);
      this.sessions.delete(session);
    });
  }

  private allClosedWithin(ms: number): Promise<boolean> {
    if (this.sockets.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.allClosedWaiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.allClosedWaiters.delete(wake);
        resolve(this.sockets.size === 0);
      }, ms);
      this.allClosedWaiters.add(wake);
    });
  }
}
