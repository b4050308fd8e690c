import * as net from "node:net";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/** Large enough for JSON nested 100,000 deep (200 KB), so the depth limit is what refuses it. */
const MAX_BYTES = 262_144;
const STORE = "/contextloader.memrecall.v1.MemRecallService/StoreMemory";
const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "x-account-id": "u-edges",
};

/** A JSON value nested `depth` arrays deep. */
const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

/** Sends `text` on a fresh connection and resolves with everything received until the server closes it (5 s at most). */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within 5 s; got ${JSON.stringify(received)}`));
    }, 5000);
    socket.on("data", (d: Buffer) => (received += d.toString("utf8")));
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(text);
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ READ_MAX_BYTES: String(MAX_BYTES), JSON_MAX_DEPTH: "64" });
});
afterAll(() => server.close());

const mcpStore = (metadata: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_memory","arguments":{"memory_key":"k","content":"c","metadata":{"x":${metadata}}}}}`;

describe("a body over READ_MAX_BYTES", () => {
  const big = JSON.stringify({ memory_key: "k", content: "x".repeat(1_000_000) });

  it("is RESOURCE_EXHAUSTED naming the limit for Connect JSON over HTTP/1.1 (fetch), and the connection is not reset", async () => {
    const res = await fetch(server.baseUrl + STORE, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-edges" },
      body: big,
    });
    expect(res.status).toBe(429);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("resource_exhausted");
    expect(body.message).toContain(`${MAX_BYTES} bytes (READ_MAX_BYTES)`);
  });

  it("is RESOURCE_EXHAUSTED for the Connect client over HTTP/1.1 and HTTP/2 alike, JSON and binary", async () => {
    for (const httpVersion of ["1.1", "2"] as const) {
      for (const useBinaryFormat of [false, true]) {
        const client = createClient(
          MemRecallService,
          createConnectTransport({ baseUrl: server.baseUrl, httpVersion, useBinaryFormat }),
        );
        const err = await failure(
          client.storeMemory(
            { memoryKey: "k", content: "x".repeat(1_000_000) },
            { headers: { "x-account-id": "u-edges" } },
          ),
        );
        const what = `HTTP/${httpVersion} ${useBinaryFormat ? "binary" : "JSON"}`;
        expect(err.code, what).toBe(Code.ResourceExhausted);
        expect(err.rawMessage, what).toContain(String(MAX_BYTES));
        if (!useBinaryFormat) expect(err.rawMessage, what).toContain("READ_MAX_BYTES");
      }
    }
  });

  it("is 413 naming READ_MAX_BYTES and its value on a REST route, in the route's own error shape", async () => {
    const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-edges" },
      body: JSON.stringify({ query: "x".repeat(1_000_000) }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: string; status_code: number; detail: { reason: string } };
    expect(body.error).toContain(`${MAX_BYTES} bytes (READ_MAX_BYTES)`);
    expect(body.status_code).toBe(413);
    expect(body.detail.reason).toBe("REQUEST_TOO_LARGE");
  });

  it("is 413 with a JSON-RPC error naming READ_MAX_BYTES on /mcp", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: mcpStore(JSON.stringify("x".repeat(1_000_000))),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { id: unknown; error: { message: string } };
    expect(body.id).toBeNull();
    expect(body.error.message).toContain(`${MAX_BYTES} bytes (READ_MAX_BYTES)`);
  });
});

describe("JSON nested 100,000 deep", () => {
  it("is 400 naming JSON_MAX_DEPTH on a REST route", async () => {
    const res = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-edges" },
      body: `{"query":"x","kn_id":${deep(100_000)}}`,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; description: string };
    expect(body.code).toBe("JSON_TOO_DEEP");
    expect(body.description).toContain("64 levels (JSON_MAX_DEPTH)");
  });

  it("is 400 naming JSON_MAX_DEPTH in MCP store_memory metadata", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: mcpStore(deep(100_000)),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("JSON_MAX_DEPTH");
  });

  it("is INVALID_ARGUMENT naming JSON_MAX_DEPTH in a Connect JSON body, and the service still answers", async () => {
    const res = await fetch(server.baseUrl + STORE, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-edges" },
      body: `{"memory_key":"k","content":"c","metadata":{"x":${deep(100_000)}}}`,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toContain("64 levels (JSON_MAX_DEPTH)");

    const ok = await fetch(server.baseUrl + STORE, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-edges" },
      body: `{"memory_key":"k","content":"c","metadata":{"x":${deep(20)}}}`,
    });
    expect(ok.status).toBe(200);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
  });

  it("brackets inside strings do not count", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: mcpStore(JSON.stringify(`${"[{".repeat(500)}\\"`)),
    });
    expect(res.status).toBe(200);
  });
});

describe("a malformed Host header", () => {
  const request = (path: string, host: string) => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nx-account-id: u-edges\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  };

  it("is 400 on /mcp and on an RPC path, and a good one is served", async () => {
    for (const host of ["a b", "x/y", "[::1", "h:port"]) {
      const mcp = await raw(server.port, request("/mcp", host));
      expect(mcp, host).toMatch(/^HTTP\/1\.1 400 /);
      expect(mcp, host).toContain("Host header");
      const rpc = await raw(server.port, request(STORE, host));
      expect(rpc, host).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(await raw(server.port, request("/mcp", "localhost:8080"))).toMatch(/^HTTP\/1\.1 200 /);
    expect(server.logs.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
  });
});

describe("bad framing", () => {
  it("answers headers over Node's size limit 431 and garbage 400, and closes the connection", async () => {
    const big = await raw(server.port, `GET /healthz HTTP/1.1\r\nHost: t\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(await raw(server.port, "NOT HTTP AT ALL\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
  });
});
