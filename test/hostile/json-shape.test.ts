import * as net from "node:net";
import { gzipSync } from "node:zlib";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { loadConfig } from "../../src/config";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/** The default JSON_MAX_VALUES: these tests run the server with its default settings. */
const LIMIT = loadConfig({}).server.jsonMaxValues;
const STORE = "/contextloader.memrecall.v1.MemRecallService/StoreMemory";
const RERANK = "/contextloader.knowledge.v1.KnowledgeRetrievalService/RerankConcepts";
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "x-account-id": "u-shape",
};

/** 200,000 metadata keys: 3.4 MB, under READ_MAX_BYTES, and seconds of parsing and decoding. */
const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, i]));
const bigMetadata = manyKeys(200_000);

const mcpStore = (metadata: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "store_memory", arguments: { memory_key: "k", content: "c", metadata } },
  });

/** Object members plus array items of a parsed value. */
function countValues(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.reduce((sum: number, child) => sum + countValues(child), children.length);
}

/** A knowledge_rerank body (vector: no LLM) holding exactly `values` values, its strings full of JSON punctuation. */
function rerank(values: number) {
  const concepts = Math.floor((values - 5) / 5);
  const body = {
    query_understanding: { origin_query: "查询用户信息", processed_query: "查询用户信息" },
    concepts: Array.from({ length: concepts }, (_, i) => ({
      concept_type: "object_type",
      concept_id: `c${i}`,
      concept_name: `概念 "[${i}]", {x: \\}`,
      concept_detail: {} as Record<string, number>,
    })),
    action: "vector",
  };
  for (let i = 5 * concepts + 5; i < values; i++) body.concepts[0]!.concept_detail[`pad${i}`] = i;
  expect(countValues(body)).toBe(values);
  return body;
}

/**
 * Sends the headers of a POST whose body is `total` bytes long and only its
 * first part, `head`, and resolves with what the server answers before the
 * rest is sent (5 s at most).
 */
function answerBeforeTheEnd(port: number, path: string, head: string, total: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s while the body was unfinished; got ${JSON.stringify(received)}`));
    }, 5000);
    socket.on("error", () => undefined);
    socket.on("data", (d: Buffer) => {
      received += d.toString("utf8");
      const headerEnd = received.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(received)?.[1];
      if (headerEnd === -1 || length === undefined) return;
      if (Buffer.byteLength(received.slice(headerEnd + 4)) < Number(length)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    });
    const headers = Object.entries({ ...HEADERS, host: "127.0.0.1", "content-length": String(total) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    socket.write(`POST ${path} HTTP/1.1\r\n${headers}\r\n${head}`);
  });
}

let server: TestServer;
beforeAll(async () => {
  expect(JSON.stringify(bigMetadata).length).toBeLessThan(loadConfig({}).server.readMaxBytes);
  server = await startServer();
});
afterAll(() => server.close());

describe(`a JSON body holding more than JSON_MAX_VALUES (${LIMIT}) values`, () => {
  it("is INVALID_ARGUMENT JSON_TOO_LARGE naming the setting on Connect JSON (200,000 metadata keys)", async () => {
    const transport = createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1", useBinaryFormat: false });
    const client = createClient(MemRecallService, transport);
    const err = await failure(
      client.storeMemory(
        { memoryKey: "k", content: "c", metadata: bigMetadata },
        { headers: { "x-account-id": "u-shape" } },
      ),
    );
    expect(err.code, err.message).toBe(Code.InvalidArgument);
    expect(err.rawMessage).toContain(`more than ${LIMIT} values`);
    expect(err.rawMessage).toContain("JSON_MAX_VALUES");
    const info = err.findDetails(ErrorInfoSchema)[0];
    expect(info?.reason).toBe("JSON_TOO_LARGE");
    expect(info?.metadata["limit_values"]).toBe(String(LIMIT));
  });

  it("is 400 JSON_TOO_LARGE in the route's own shape on a REST route", async () => {
    const res = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ query: "x", kn_id: "kn_medical", retrieval_config: bigMetadata }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; description: string };
    expect(body.code).toBe("JSON_TOO_LARGE");
    expect(body.description).toContain(`more than ${LIMIT} values`);
    expect(body.description).toContain("JSON_MAX_VALUES");
  });

  it("is 400 with a JSON-RPC error naming JSON_MAX_VALUES on /mcp (store_memory metadata)", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, { method: "POST", headers: HEADERS, body: mcpStore(bigMetadata) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { id: unknown; error: { message: string } };
    expect(body.id).toBeNull();
    expect(body.error.message).toContain(`more than ${LIMIT} values (object members and array items; JSON_MAX_VALUES)`);
  });

  it("is refused while the body is still arriving, before anything parses it, on Connect, REST and /mcp", async () => {
    const bodies: Record<string, string> = {
      [STORE]: JSON.stringify({ memory_key: "k", content: "c", metadata: bigMetadata }),
      "/kn/kn_search": JSON.stringify({ query: "x", kn_id: "kn_medical", retrieval_config: bigMetadata }),
      "/mcp": mcpStore(bigMetadata),
    };
    for (const [path, body] of Object.entries(bodies)) {
      // The first 300 KB hold more than enough values; the other 3 MB are never sent.
      const answer = await answerBeforeTheEnd(server.port, path, body.slice(0, 300_000), Buffer.byteLength(body));
      expect(answer, path).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer, path).toContain("JSON_MAX_VALUES");
      expect(answer.toLowerCase(), path).toContain("connection: close");
    }
  });

  it("is JSON_TOO_LARGE, not a parse error, when the body is also not JSON at its end", async () => {
    const body = `${JSON.stringify({ memory_key: "k", content: "c", metadata: manyKeys(LIMIT + 10) }).slice(0, -1)}, nonsense`;
    const res = await fetch(server.baseUrl + STORE, { method: "POST", headers: HEADERS, body });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("JSON_MAX_VALUES");
    expect(text).not.toContain("not valid JSON");
  });

  it("accepts an honest body of exactly JSON_MAX_VALUES values, strings full of brackets included, and refuses one more", async () => {
    for (const path of ["/tools/knowledge_rerank", RERANK]) {
      const ok = await fetch(server.baseUrl + path, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify(rerank(LIMIT)),
      });
      expect(ok.status, path).toBe(200);
      const over = await fetch(server.baseUrl + path, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify(rerank(LIMIT + 1)),
      });
      expect(over.status, path).toBe(400);
      expect(await over.text(), path).toContain("JSON_MAX_VALUES");
    }
  });

  it("is measured after inflating when the Connect JSON body is compressed; a gzip bomb is refused at READ_MAX_BYTES", async () => {
    const gzipped = (body: unknown) => ({
      method: "POST",
      headers: { ...HEADERS, "content-encoding": "gzip" },
      body: gzipSync(typeof body === "string" ? body : JSON.stringify(body)),
    });
    const big = await fetch(server.baseUrl + STORE, gzipped({ memory_key: "k", content: "c", metadata: bigMetadata }));
    expect(big.status).toBe(400);
    expect(await big.text()).toContain("JSON_MAX_VALUES");
    expect((await fetch(server.baseUrl + RERANK, gzipped(rerank(LIMIT)))).status).toBe(200);
    const bomb = await fetch(server.baseUrl + STORE, gzipped(`{"content":"${" ".repeat(8 << 20)}"}`));
    expect(bomb.status).toBe(429);
    expect(await bomb.text()).toContain("(READ_MAX_BYTES)");
  });

  it("is INVALID_ARGUMENT JSON_TOO_LARGE over gRPC+json, gRPC-web+json and Connect streaming JSON too; honest calls are served", async () => {
    const transports = {
      "gRPC+json": createGrpcTransport({ baseUrl: server.baseUrl, useBinaryFormat: false }),
      "gRPC-web+json": createGrpcWebTransport({ baseUrl: server.baseUrl, httpVersion: "1.1", useBinaryFormat: false }),
      "Connect streaming JSON": createConnectTransport({
        baseUrl: server.baseUrl,
        httpVersion: "2",
        useBinaryFormat: false,
      }),
    };
    const headers = { "x-account-id": "u-shape" };
    const tooMany = Array.from({ length: LIMIT }, (_, i) => ({ role: "user", content: `消息 "${i}" [,]` }));
    for (const [name, transport] of Object.entries(transports)) {
      const client = createClient(MemRecallService, transport);
      const refusals = [
        await failure(client.storeMemory({ memoryKey: "k", content: "c", metadata: bigMetadata }, { headers })),
        await failure(
          (async () => {
            for await (const _ of client.recall({ messages: tooMany, strategy: "deterministic" }, { headers })) {
              // The refusal comes before any event.
            }
          })(),
        ),
      ];
      for (const err of refusals) {
        expect(err.code, `${name}: ${err.message}`).toBe(Code.InvalidArgument);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason, name).toBe("JSON_TOO_LARGE");
      }
      const stored = await client.storeMemory(
        { memoryKey: `k-${name}`, content: "用户喜欢简洁的回答", metadata: { source: name } },
        { headers },
      );
      expect(stored.memoryKey, name).toBe(`k-${name}`);
      const kinds: string[] = [];
      const honest = tooMany.slice(0, 50);
      for await (const event of client.recall({ messages: honest, strategy: "deterministic" }, { headers })) {
        kinds.push(event.event.case ?? "");
      }
      expect(kinds.at(-1), name).toBe("handoff");
    }
  });

  it("leaves the service answering others meanwhile", async () => {
    const refusals = Array.from({ length: 4 }, () =>
      fetch(server.baseUrl + STORE, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify({ memory_key: "k", content: "c", metadata: bigMetadata }),
      }).then((r) => r.status),
    );
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    expect(await Promise.all(refusals)).toEqual([400, 400, 400, 400]);
    expect(server.logs.filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
  });
});
