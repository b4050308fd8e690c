import * as http2 from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService, StoreMemoryRequestSchema } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { protoShape } from "../../src/server/proto-shape";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Binary request messages nested past what protobuf-es decodes (a
 * google.protobuf.Struct two levels a step) or not in the wire format at all:
 * refused INVALID_ARGUMENT before they are decoded, and logged as a call,
 * over gRPC, gRPC-web and Connect. Before, the decoder threw inside the
 * framework: INTERNAL ("maximum recursion depth"), and no log line.
 */

const STORE = "/contextloader.memrecall.v1.MemRecallService/StoreMemory";

const varint = (n: number) => {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
};
const field = (no: number, payload: Buffer) => Buffer.concat([varint((no << 3) | 2), varint(payload.length), payload]);

/** A StoreMemoryRequest whose metadata Struct nests `levels` deep, built on the wire (the client's encoder recurses). */
function deepStore(levels: number): Buffer {
  let value = field(3, Buffer.from("x"));
  for (let i = 0; i < levels; i++)
    value = field(5, field(1, Buffer.concat([field(1, Buffer.from("a")), field(2, value)])));
  const metadata = field(1, Buffer.concat([field(1, Buffer.from("a")), field(2, value)]));
  return Buffer.concat([field(2, Buffer.from("fact")), field(4, Buffer.from("content")), field(6, metadata)]);
}

const envelope = (msg: Buffer) => {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
};

/** Sends one gRPC (or gRPC-web over h2) request as raw bytes; resolves with the status and message it ended with. */
function rawGrpc(baseUrl: string, body: Buffer, web = false): Promise<{ status: string; message: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({
      ":method": "POST",
      ":path": STORE,
      "content-type": web ? "application/grpc-web+proto" : "application/grpc",
      te: "trailers",
      "x-account-id": "u-deep",
    });
    let status = "";
    let message = "";
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = String(h["grpc-status"] ?? "");
      message = String(h["grpc-message"] ?? "");
    });
    stream.on("trailers", (t) => {
      status = String(t["grpc-status"]);
      message = decodeURIComponent(String(t["grpc-message"] ?? ""));
    });
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("close", () => {
      session.close();
      if (web) {
        // gRPC-web: the trailers are the last frame of the body (flag 0x80), "name: value" lines.
        const all = Buffer.concat(chunks);
        const text = all.subarray(all.lastIndexOf(0x80) + 5).toString("utf8");
        status = /grpc-status: ?(\d+)/.exec(text)?.[1] ?? status;
        message = decodeURIComponent(/grpc-message: ?(.*)/.exec(text)?.[1]?.trim() ?? message);
      }
      resolve({ status, message });
    });
    stream.end(body);
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "info" });
});
afterAll(() => server.close());

describe("binary request messages are looked at before they are decoded", () => {
  it("refuses a Struct nested 1,500 deep over gRPC with INVALID_ARGUMENT MESSAGE_TOO_DEEP, and logs the call", async () => {
    const before = server.logs.length;
    const answer = await rawGrpc(server.baseUrl, envelope(deepStore(1500)));
    expect(answer.status).toBe(String(Code.InvalidArgument));
    expect(answer.message).toMatch(/nests messages deeper than 136 levels/);
    const lines = server.logs.slice(before).filter((l) => l.msg === "rpc");
    expect(lines).toContainEqual(expect.objectContaining({ rpc: STORE.slice(1), code: "INVALID_ARGUMENT" }));
    expect(server.logs.slice(before).filter((l) => (l.level ?? 0) >= 50)).toEqual([]);
  });

  it("refuses it over gRPC-web and Connect binary too", async () => {
    const web = await rawGrpc(server.baseUrl, envelope(deepStore(1500)), true);
    expect(web.status).toBe(String(Code.InvalidArgument));
    const res = await fetch(`${server.baseUrl}${STORE}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "x-account-id": "u-deep" },
      body: new Uint8Array(deepStore(1500)),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/136 levels/) });
  });

  it("decodes a Struct as deep as JSON_MAX_DEPTH allows over JSON (60 levels), where protobuf-es alone stopped at 50", async () => {
    const answer = await rawGrpc(server.baseUrl, envelope(deepStore(60)));
    // Decoded: the call reached the service's own checks (a memory key is required), not the decoder's limit.
    expect(answer.status).toBe(String(Code.InvalidArgument));
    expect(answer.message).toMatch(/memory_key/);
  });

  it("refuses bytes that are not the wire format with INVALID_ARGUMENT MALFORMED_MESSAGE, not INTERNAL", async () => {
    const cut = deepStore(3).subarray(0, 20);
    const answer = await rawGrpc(server.baseUrl, envelope(cut));
    expect(answer.status).toBe(String(Code.InvalidArgument));
    expect(answer.message).toMatch(/not a binary protobuf message/);
  });

  it("refuses a field sent as another wire type (sensitive, a bool, as a string) with INVALID_ARGUMENT naming it, not INTERNAL", async () => {
    const wrong = Buffer.concat([
      field(1, Buffer.from("k-wrong")),
      field(4, Buffer.from("c")),
      field(8, Buffer.from("yes")),
    ]);
    const answer = await rawGrpc(server.baseUrl, envelope(wrong));
    expect(answer.status).toBe(String(Code.InvalidArgument));
    expect(answer.message).toMatch(/sensitive: wrong type for this field/);
    const res = await fetch(`${server.baseUrl}${STORE}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "x-account-id": "u-deep" },
      body: new Uint8Array(wrong),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      details: { type: string; debug: { field_violations?: { field: string }[] } }[];
    };
    const badRequest = body.details.find((d) => d.type === "google.rpc.BadRequest");
    expect(badRequest?.debug.field_violations?.map((v) => v.field)).toEqual(["sensitive"]);
    // A nested message's field is named with its message: keywords[0].weight (a float) sent as a varint.
    const nested = Buffer.concat([
      field(1, Buffer.from("k-wrong")),
      field(5, Buffer.concat([field(1, Buffer.from("a")), varint((2 << 3) | 0), varint(1)])),
    ]);
    const inner = await rawGrpc(server.baseUrl, envelope(nested));
    expect(inner.status).toBe(String(Code.InvalidArgument));
    expect(inner.message).toMatch(/WeightedKeyword\.weight: wrong type/);
  });

  it("lets well-formed calls through on every binary protocol", async () => {
    for (const transport of [
      createGrpcTransport({ baseUrl: server.baseUrl }),
      createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
    ]) {
      const client = createClient(MemRecallService, transport);
      const stored = await client.storeMemory(
        {
          memoryKey: "fact-deep-ok",
          memoryType: "fact",
          content: "the staging cluster is in Frankfurt",
          metadata: { a: { b: [1, { c: "d" }] } },
        },
        { headers: { "x-account-id": "u-deep" } },
      );
      expect(stored.memoryKey).toBe("fact-deep-ok");
    }
    const err = await createClient(MemRecallService, createGrpcTransport({ baseUrl: server.baseUrl }))
      .storeMemory({ memoryKey: "" }, { headers: { "x-account-id": "u-deep" } })
      .catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
  });
});

describe("protoShape", () => {
  it("says ok for every message the encoder writes, and malformed for each of its cut prefixes that is not whole", () => {
    const msg = toBinary(
      StoreMemoryRequestSchema,
      create(StoreMemoryRequestSchema, {
        memoryKey: "k",
        memoryType: "fact",
        content: "c".repeat(300),
        keywords: [{ keyword: "a", weight: 0.5 }],
        metadata: { list: [1, "two", { three: true }], nested: { deeper: { deepest: null } } },
      }),
    );
    expect(protoShape(StoreMemoryRequestSchema, msg, 136)).toBe("ok");
    let malformed = 0;
    for (let cut = 1; cut < msg.length; cut++) {
      if (protoShape(StoreMemoryRequestSchema, msg.subarray(0, cut), 136) === "malformed") malformed++;
    }
    // A prefix ending between two top-level fields is itself a whole message; every other one is cut.
    expect(malformed).toBeGreaterThan(msg.length - 10);
  });

  it("counts levels as protobuf-es does: a Struct level is two (Struct, Value), a map entry none", () => {
    const store = deepStore(10);
    // StoreMemoryRequest, then metadata's Struct, then 11 Values and 10 Structs below it.
    expect(protoShape(StoreMemoryRequestSchema, store, 23)).toBe("ok");
    expect(protoShape(StoreMemoryRequestSchema, store, 22)).toBe("too_deep");
  });
});
