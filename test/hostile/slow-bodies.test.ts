import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tls from "node:tls";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { handoffJson } from "../helpers/fixtures";
import { startServer, type TestServer } from "../helpers/server";

const HANDOFF = "/contextloader.memrecall.v1.MemRecallService/Handoff";
const REST = "/tools/knowledge_retrieve";
const KN_IDS = [{ knowledge_network_id: "kn_medical" }];
const ACCOUNT = { "x-account-id": "u-slow" };
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", ...ACCOUNT };

/** Every socket a test opened: destroyed after each test. */
const sockets = new Set<net.Socket>();
afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.clear();
});

/** A connection that sends a POST's headers and then its body one byte every `everyMs`; resolves once the headers are written. */
function slowPost(
  port: number,
  path: string,
  everyMs: number,
  contentType = "application/json",
): Promise<{ socket: net.Socket; received: () => string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    sockets.add(socket);
    let received = "";
    socket.on("data", (d: Buffer) => (received += d.toString("utf8")));
    socket.on("error", () => undefined);
    const timer = setInterval(() => socket.writable && socket.write(" "), everyMs);
    socket.once("close", () => clearInterval(timer));
    socket.once("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nAccept: application/json, text/event-stream\r\nx-account-id: u-slow\r\nContent-Length: 1000\r\n\r\n{`,
        () => resolve({ socket, received: () => received }),
      );
    });
  });
}

/** Resolves with how long the socket stayed open, ms (rejects past `withinMs`). */
function closedWithin(socket: net.Socket, withinMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${withinMs} ms`)), withinMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(performance.now() - started);
    });
  });
}

/**
 * How soon other calls are answered beside the slow bodies: 1.5 s is the
 * issue's figure on an idle machine, doubled for a loaded one (two cores shared
 * with other work). A slow body holding a slot is caught by the status first.
 */
const ANSWERED_MS = 3000;

/** Runs `call` and resolves with its HTTP status and how long it took, ms. */
async function timed(call: () => Promise<Response>): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await call();
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

describe("70 slow-body connections", () => {
  let server: TestServer;
  beforeAll(async () => {
    // Four slots: with a slot held per slow body, every other call would wait and be refused.
    server = await startServer({ ADMISSION_MAX_IN_FLIGHT: "4", ADMISSION_MAX_WAIT_MS: "1000" });
  });
  afterAll(() => server.close());

  it("hold no admission slot: Connect, REST and /mcp calls are answered promptly, none refused; aborting them logs no error", async () => {
    const slow = await Promise.all(
      Array.from({ length: 70 }, (_, i) => slowPost(server.port, i % 2 === 0 ? "/mcp" : REST, 2000)),
    );
    const metrics = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^contextloader_calls_in_flight 0$/m);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([
        timed(() =>
          fetch(server.baseUrl + HANDOFF, {
            method: "POST",
            headers: { "content-type": "application/json", ...ACCOUNT },
            body: JSON.stringify(handoffJson),
          }),
        ),
        timed(() =>
          fetch(server.baseUrl + REST, {
            method: "POST",
            headers: { "content-type": "application/json", ...ACCOUNT },
            body: JSON.stringify({ query: "上气道梗阻有哪些症状", kn_ids: KN_IDS }),
          }),
        ),
        timed(() =>
          fetch(`${server.baseUrl}/mcp`, {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          }),
        ),
      ]);
      for (const a of answers) {
        // A call waiting behind slots held by slow bodies would be refused (429) after ADMISSION_MAX_WAIT_MS.
        expect(a.status).toBe(200);
        expect(a.ms).toBeLessThan(ANSWERED_MS);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(slow.every((s) => s.received() === "")).toBe(true);
    for (const s of slow) s.socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect(server.logs.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
    expect(server.logs.some((l) => l.msg === "the client went away while sending its body")).toBe(true);
  });
});

describe("slow RPC bodies", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ADMISSION_MAX_IN_FLIGHT: "4", ADMISSION_MAX_WAIT_MS: "1000" });
  });
  afterAll(() => server.close());

  it("hold no admission slot either: gRPC unary and server-streaming, Connect binary and JSON", async () => {
    const session = http2.connect(server.baseUrl);
    session.on("error", () => undefined);
    try {
      // A gRPC frame header announcing 100 bytes, then one of them.
      const partial = Buffer.from([0, 0, 0, 0, 100, 0x0a]);
      const streams = ["Recall", "Handoff"].flatMap((method) =>
        Array.from({ length: 5 }, () => {
          const stream = session.request({
            ":method": "POST",
            ":path": `/contextloader.memrecall.v1.MemRecallService/${method}`,
            "content-type": "application/grpc",
            te: "trailers",
            ...ACCOUNT,
          });
          stream.on("error", () => undefined);
          stream.write(partial);
          return stream;
        }),
      );
      const connect = await Promise.all(
        ["application/proto", "application/json"].flatMap((type) =>
          Array.from({ length: 5 }, () => slowPost(server.port, HANDOFF, 2000, type)),
        ),
      );
      await new Promise((r) => setTimeout(r, 300));
      const metrics = await fetch(`${server.baseUrl}/metrics`).then((r) => r.text());
      expect(metrics).toMatch(/^contextloader_calls_in_flight 0$/m);
      const answer = await timed(() =>
        fetch(server.baseUrl + HANDOFF, {
          method: "POST",
          headers: { "content-type": "application/json", ...ACCOUNT },
          body: JSON.stringify(handoffJson),
        }),
      );
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(ANSWERED_MS);
      for (const s of streams) s.close(http2.constants.NGHTTP2_CANCEL);
      for (const c of connect) c.socket.destroy();
      await new Promise((r) => setTimeout(r, 300));
      expect(server.logs.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
    } finally {
      session.destroy();
    }
  });
});

describe("connection timeouts", () => {
  const SIM_LATENCY_MS = 1500;
  let sim: Simulator;
  let server: TestServer;
  beforeAll(async () => {
    sim = await startSimulator({
      backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
      faults: { latencyMs: SIM_LATENCY_MS },
    });
    server = await startServer({
      ONTOLOGY_MANAGER_URL: sim.url,
      ONTOLOGY_QUERY_URL: sim.url,
      HTTP_HEADERS_TIMEOUT_MS: "500",
      HTTP_REQUEST_TIMEOUT_MS: "1000",
      HTTP2_IDLE_TIMEOUT_MS: "1000",
    });
  });
  afterAll(async () => {
    await server?.close();
    await sim?.close();
  });

  it("answers a body not received within HTTP_REQUEST_TIMEOUT_MS over HTTP/1.1 with 408 and closes the connection", async () => {
    for (const path of ["/mcp", REST, HANDOFF]) {
      const slow = await slowPost(server.port, path, 200);
      const ms = await closedWithin(slow.socket, 4000);
      expect(ms, path).toBeGreaterThan(700);
      expect(slow.received(), path).toMatch(/^HTTP\/1\.1 408 /);
    }
  });

  it("resets an HTTP/2 stream whose body does not arrive within HTTP_REQUEST_TIMEOUT_MS", async () => {
    const session = http2.connect(server.baseUrl);
    try {
      for (const path of ["/mcp", REST]) {
        const stream = session.request({
          ":method": "POST",
          ":path": path,
          "content-type": "application/json",
          ...ACCOUNT,
        });
        stream.on("error", () => undefined);
        stream.write("{");
        const started = performance.now();
        await new Promise((resolve) => stream.once("close", resolve));
        expect(performance.now() - started, path).toBeLessThan(4000);
        expect(stream.rstCode, path).toBe(http2.constants.NGHTTP2_CANCEL);
      }
    } finally {
      session.destroy();
    }
  });

  it("closes an HTTP/2 connection that sent its SETTINGS and nothing else", async () => {
    const socket = net.connect(server.port, "127.0.0.1");
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("data", () => undefined);
    // The preface, then an empty SETTINGS frame (length 0, type 4, no flags, stream 0).
    socket.write(
      Buffer.concat([
        Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1"),
        Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]),
      ]),
    );
    await closedWithin(socket, 4000);
  });

  it("closes an HTTP/1.1 connection whose headers stop half-way, and one that sends nothing", async () => {
    const half = net.connect(server.port, "127.0.0.1");
    const silent = net.connect(server.port, "127.0.0.1");
    for (const s of [half, silent]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("data", () => undefined);
    }
    half.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await Promise.all([closedWithin(half, 4000), closedWithin(silent, 4000)]);
  });

  it("does not cut answers that take longer than the request timeout, over HTTP/1.1 and HTTP/2", async () => {
    const started = performance.now();
    const rest = fetch(server.baseUrl + REST, {
      method: "POST",
      headers: { "content-type": "application/json", ...ACCOUNT },
      body: JSON.stringify({ query: "上气道梗阻有哪些症状", kn_ids: KN_IDS }),
    });
    const grpc = createClient(
      KnowledgeRetrievalService,
      createGrpcTransport({ baseUrl: server.baseUrl }),
    ).retrieveSchema(
      { query: "上气道梗阻有哪些症状", knIds: [{ knowledgeNetworkId: "kn_medical" }] },
      { headers: ACCOUNT },
    );
    const [res, schema] = await Promise.all([rest, grpc]);
    expect(performance.now() - started).toBeGreaterThan(SIM_LATENCY_MS);
    expect(res.status).toBe(200);
    expect(schema.sessionId).not.toBe("");
  });
});

describe("connection timeouts with TLS", () => {
  let dir: string;
  let server: TestServer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cl-slow-tls-"));
    execFileSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
      { stdio: "ignore" },
    );
    server = await startServer({
      TLS_CERT: join(dir, "cert.pem"),
      TLS_KEY: join(dir, "key.pem"),
      HTTP_HEADERS_TIMEOUT_MS: "500",
      HTTP_REQUEST_TIMEOUT_MS: "1000",
    });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("closes an HTTP/1.1-over-TLS connection whose headers stop half-way", async () => {
    const socket = tls.connect({
      port: server.port,
      host: "127.0.0.1",
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("data", () => undefined);
    await new Promise((resolve) => socket.once("secureConnect", resolve));
    socket.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await closedWithin(socket, 4000);
  });
});
