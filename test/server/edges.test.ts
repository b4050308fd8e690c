import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { HealthCheckRequestSchema } from "../../gen/grpc/health/v1/health_pb";
import type { NodeServerRequest } from "../../src/server/node-types";
import { malformedHost } from "../../src/server/request-body";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

const HANDOFF = "/contextloader.memrecall.v1.MemRecallService/Handoff";
const handoffBody = { reason: "完成", search_summary: "找到了", confidence: 0.9 };
/** Every MemRecall call needs the caller's account. */
const ACCOUNT_ID = "u-1";
const account = { headers: { "x-account-id": ACCOUNT_ID } };

describe("CORS", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ CORS_ALLOWED_ORIGINS: "http://agent.example:3000" });
  });
  afterAll(() => server.close());

  it("answers a preflight from an allowed origin with the protocols' headers and ours", async () => {
    const res = await fetch(server.baseUrl + HANDOFF, {
      method: "OPTIONS",
      headers: {
        origin: "http://agent.example:3000",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,connect-protocol-version,x-account-id",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://agent.example:3000");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/,\s*/);
    for (const h of [
      "content-type",
      "connect-protocol-version",
      "connect-timeout-ms",
      "grpc-timeout",
      "x-grpc-web",
      "x-account-id",
      "x-account-type",
    ]) {
      expect(allowed).toContain(h);
    }
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
  });

  it("refuses a preflight from an origin that is not configured", async () => {
    const res = await fetch(server.baseUrl + HANDOFF, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("lets an allowed origin read the answer and the trace id", async () => {
    const res = await fetch(server.baseUrl + HANDOFF, {
      method: "POST",
      headers: { origin: "http://agent.example:3000", "content-type": "application/json", "x-account-id": ACCOUNT_ID },
      body: JSON.stringify(handoffBody),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("http://agent.example:3000");
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("x-trace-id");
  });
});

describe("limits and framing", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ READ_MAX_BYTES: "65536" });
  });
  afterAll(() => server.close());

  it("refuses a request larger than READ_MAX_BYTES with RESOURCE_EXHAUSTED", async () => {
    for (const transport of [
      createGrpcTransport({ baseUrl: server.baseUrl }),
      createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1" }),
    ]) {
      const client = createClient(MemRecallService, transport);
      const err = await failure(
        client.handoff({ reason: "r", searchSummary: "长".repeat(40_000), confidence: 0.5 }, account),
      );
      expect(err.code).toBe(Code.ResourceExhausted);
    }
  });

  it("reads a large body and pipelined requests intact on a sniffed HTTP/1.1 connection", async () => {
    // 60 KB of summary: under the byte limit, over the field's length limit.
    const big = JSON.stringify({ ...handoffBody, search_summary: "x".repeat(60_000) });
    const small = JSON.stringify(handoffBody);
    const request = (body: string) =>
      `POST ${HANDOFF} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nx-account-id: ${ACCOUNT_ID}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = net.connect(server.port, "127.0.0.1");
    let received = "";
    socket.on("data", (d: Buffer) => (received += d.toString("utf8")));
    // Both requests in one write, the first split across many TCP segments.
    socket.write(request(big) + request(small).replace("Host: localhost", "Host: localhost\r\nConnection: close"));
    await new Promise((resolve) => socket.once("close", resolve));
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
    expect(statuses).toEqual(["400", "200"]);
    expect(received).toContain("search_summary: must be at most 20000 characters");
    expect(received).toContain("Memory search complete");
  });
});

describe("curl-style mistakes on an RPC path", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("say what to send: the method, the content-type, the RPC's name", async () => {
    const get = await fetch(server.baseUrl + HANDOFF);
    expect(get.status).toBe(405);
    expect(await get.json()).toEqual({ error: "use POST for contextloader.memrecall.v1.MemRecallService/Handoff" });
    const form = await fetch(server.baseUrl + HANDOFF, { method: "POST", body: "reason=x" });
    expect(form.status).toBe(415);
    expect(((await form.json()) as { detail: string }).detail).toContain("application/json");
    const typo = await fetch(`${server.baseUrl}/contextloader.memrecall.v1.MemRecallService/HandOf`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(typo.status).toBe(404);
    expect(((await typo.json()) as { services: string[] }).services).toContain(
      "contextloader.memrecall.v1.MemRecallService",
    );
  });

  it("logs a client that resets a stream mid-call as CANCELED, not as our error", async () => {
    const session = http2.connect(server.baseUrl);
    const stream = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Watch",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const request = toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, { service: "" }));
    const frame = Buffer.alloc(5 + request.length);
    frame.writeUInt32BE(request.length, 1);
    frame.set(request, 5);
    stream.end(frame);
    await new Promise((resolve) => stream.once("data", resolve));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => setTimeout(r, 200));
    session.destroy();
    const line = server.logs.find((l) => l.msg === "rpc" && l.rpc === "grpc.health.v1.Health/Watch");
    expect(line?.code).toBe("CANCELED");
    expect(server.logs.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
  });
});

describe("a method the service does not have", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("answers 404 naming the RPC and listing the services, in any protocol", async () => {
    for (const type of ["application/json", "application/grpc-web+proto", "application/proto"]) {
      const res = await fetch(`${server.baseUrl}/contextloader.knowledge.v1.KnowledgeRetrievalService/NoSuchMethod`, {
        method: "POST",
        headers: { "content-type": type },
        body: "{}",
      });
      expect(res.status, type).toBe(404);
      const body = (await res.json()) as { error: string; services: string[] };
      expect(body.error).toBe("unknown RPC contextloader.knowledge.v1.KnowledgeRetrievalService/NoSuchMethod");
      expect(body.services).toEqual(
        expect.arrayContaining([
          "contextloader.knowledge.v1.KnowledgeRetrievalService",
          "contextloader.memrecall.v1.MemRecallService",
        ]),
      );
    }
  });
});

describe("TLS", () => {
  let dir: string;
  let server: TestServer;
  let cert: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cl-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=DNS:localhost,IP:127.0.0.1",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    cert = readFileSync(join(dir, "cert.pem"));
    server = await startServer({ TLS_CERT: join(dir, "cert.pem"), TLS_KEY: join(dir, "key.pem") });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves gRPC over h2 and Connect over HTTP/1.1 on the same TLS port, chosen by ALPN", async () => {
    const baseUrl = `https://localhost:${server.port}`;
    const grpc = createClient(MemRecallService, createGrpcTransport({ baseUrl, nodeOptions: { ca: cert } }));
    const connect = createClient(
      MemRecallService,
      createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions: { ca: cert } }),
    );
    const req = { reason: "完成", searchSummary: "找到了", confidence: 0.9 };
    const [a, b] = await Promise.all([grpc.handoff(req, account), connect.handoff(req, account)]);
    expect(a.message).toBe(b.message);
    expect(a.message).toContain("confidence: 90%");
  });
});

describe("request checks", () => {
  it("takes host names, IPv4 and IPv6 addresses with an optional port as Host, nothing else", () => {
    const host = (value: string) => malformedHost({ headers: { host: value } } as unknown as NodeServerRequest);
    for (const ok of ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:8080", "a-b.example.com", ""]) {
      expect(host(ok), ok).toBeUndefined();
    }
    for (const bad of ["a b", "x/y", "[::1", "h:port", "a@b", "h:123456", "a%20b"]) expect(host(bad), bad).toBe(bad);
  });
});
