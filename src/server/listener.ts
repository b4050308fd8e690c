import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as net from "node:net";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import type { NodeHandler, NodeServerRequest, NodeServerResponse } from "./node-types";

/** The first bytes of every HTTP/2 connection (RFC 9113 §3.4). */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
/** A connection that sends nothing this long is dropped before it is routed. */
const SNIFF_TIMEOUT_MS = 30_000;
/** Longer than the idle timeout of common load balancers (60 s), so they close first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** After the grace period and the abort, how long responses get to flush before sockets are cut. */
const FLUSH_AFTER_ABORT_MS = 1_000;

export interface ListenerOptions {
  handler: NodeHandler;
  /** With `clientCa`, every client is asked for a certificate checked against it, and let in either way (src/server/auth reads the verdict). */
  tls: { cert: Buffer; key: Buffer; clientCa?: Buffer } | undefined;
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
 */
export class Listener {
  private readonly front: net.Server;
  private readonly h1 = http.createServer({
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    headersTimeout: KEEP_ALIVE_TIMEOUT_MS + 1000,
  });
  private readonly h2 = http2.createServer();
  private readonly sockets = new Set<net.Socket>();
  private readonly h2Sockets = new WeakSet<net.Socket>();
  private readonly sessions = new Set<http2.Http2Session>();
  /** In-flight HTTP/1.x requests per socket. */
  private readonly busy = new WeakMap<net.Socket, number>();
  /** HTTP/1.x responses not finished yet: told to close their connection when shutdown begins. */
  private readonly h1Responses = new Set<NodeServerResponse>();
  private closing = false;
  private readonly allClosedWaiters = new Set<() => void>();

  constructor(private readonly opts: ListenerOptions) {
    const handler = (req: NodeServerRequest, res: NodeServerResponse) => this.onRequest(req, res);
    this.h1.on("request", handler);
    this.h2.on("request", handler);
    this.h2.on("session", (s) => this.trackSession(s));
    if (opts.tls) {
      const { cert, key, clientCa } = opts.tls;
      const clientCerts = clientCa ? { requestCert: true, rejectUnauthorized: false, ca: clientCa } : {};
      const secure = http2.createSecureServer({ cert, key, allowHTTP1: true, ...clientCerts }, handler);
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
    for (const server of [this.h1, this.h2, this.front]) {
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

  private onRequest(req: NodeServerRequest, res: NodeServerResponse): void {
    if (req.httpVersionMajor < 2) {
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
    this.opts.handler(req, res);
  }

  private sniff(socket: net.Socket): void {
    let head: Buffer = Buffer.alloc(0);
    socket.setTimeout(SNIFF_TIMEOUT_MS, () => socket.destroy());
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

  private trackSession(session: http2.Http2Session): void {
    this.sessions.add(session);
    session.once("close", () => this.sessions.delete(session));
    session.on("error", (err) => this.opts.log.debug({ err }, "http/2 session error"));
    if (this.closing) session.close();
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
