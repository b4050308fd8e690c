import * as net from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb";
import { ServerReflection, ServerReflectionRequestSchema } from "../../gen/grpc/reflection/v1/reflection_pb";
import { startServer } from "../helpers/server";

/** Opens a raw TCP connection and collects everything the server sends. */
function rawConnection(port: number) {
  const socket = net.connect(port, "127.0.0.1");
  let received = "";
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("data", (d: Buffer) => (received += d.toString("utf8")));
  return {
    socket,
    ready: new Promise<void>((resolve) => socket.once("connect", () => resolve())),
    closed,
    received: () => received,
  };
}

function tryConnect(port: number): Promise<"connected" | string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve("connected");
    });
    s.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe("deadlines", () => {
  it("ends a call with DEADLINE_EXCEEDED when the caller's deadline passes", async () => {
    const server = await startServer();
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
      const started = Date.now();
      // The deadline travels only as the grpc-timeout header, so it is the server that enforces it.
      const err = await (async () => {
        for await (const _ of health.watch({ service: "" }, { headers: { "grpc-timeout": "300m" } })) {
          // SERVING arrives at once; the stream then waits for changes until the deadline.
        }
      })().then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.DeadlineExceeded);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      const line = server.logs.find((l) => l.msg === "rpc" && l.rpc === "grpc.health.v1.Health/Watch");
      expect(line?.code).toBe("DEADLINE_EXCEEDED");
    } finally {
      await server.close();
    }
  });
});

describe("graceful shutdown", () => {
  it("finishes an HTTP/1.1 call in flight, then closes its connection and refuses new ones", async () => {
    const server = await startServer({ SHUTDOWN_GRACE_MS: "5000" });
    const body = JSON.stringify({ reason: "需要更早的对话", current_size: 5, requested_size: 10 });
    const conn = rawConnection(server.port);
    await conn.ready;
    // Headers and half of the body: the call has started but cannot finish yet.
    conn.socket.write(
      [
        "POST /contextloader.memrecall.v1.MemRecallService/ExpandContextWindow HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        // Every MemRecall call needs the caller's account.
        "x-account-id: u-1",
        `Content-Length: ${Buffer.byteLength(body)}`,
        "",
        "",
      ].join("\r\n") + body.slice(0, 10),
    );
    await new Promise((r) => setTimeout(r, 100));
    const stopped = server.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(server.app.health.serving).toBe(false);
    expect(await tryConnect(server.port)).toBe("ECONNREFUSED");
    conn.socket.write(body.slice(10));
    await conn.closed;
    await stopped;
    const [head, payload] = conn.received().split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head?.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(payload ?? "{}")).toMatchObject({ approved: true, new_size: 10, iteration: 2 });
  });

  it("keeps answering a reflection stream that was open before shutdown until the client ends it", async () => {
    const server = await startServer({ SHUTDOWN_GRACE_MS: "5000" });
    const client = createClient(ServerReflection, createGrpcTransport({ baseUrl: server.baseUrl }));
    let push: ((v: string | undefined) => void) | undefined;
    async function* requests() {
      for (;;) {
        const symbol = await new Promise<string | undefined>((resolve) => (push = resolve));
        if (symbol === undefined) return;
        yield create(ServerReflectionRequestSchema, {
          messageRequest: { case: "fileContainingSymbol", value: symbol },
        });
      }
    }
    const answers = client.serverReflectionInfo(requests())[Symbol.asyncIterator]();
    const next = async () => (await answers.next()).value?.messageResponse.case;
    // Once the client pulls its first request (a fixed 10 ms was too short on a loaded machine: the first
    // symbol was pushed before anyone listened, and the stream waited for ever).
    void (async () => {
      while (push === undefined) await new Promise((r) => setTimeout(r, 5));
      push("grpc.health.v1.Health");
    })();
    expect(await next()).toBe("fileDescriptorResponse");
    const stopped = server.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(await tryConnect(server.port)).toBe("ECONNREFUSED");
    push?.("contextloader.memrecall.v1.MemRecallService");
    expect(await next()).toBe("fileDescriptorResponse");
    push?.(undefined);
    expect((await answers.next()).done).toBe(true);
    await stopped;
  });

  it("tells health watchers NOT_SERVING, then ends what still runs after the grace period", async () => {
    const server = await startServer({ SHUTDOWN_GRACE_MS: "300" });
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    const seen: Status[] = [];
    let stopped: Promise<void> | undefined;
    const err = await (async () => {
      for await (const res of health.watch({ service: "contextloader.memrecall.v1.MemRecallService" })) {
        seen.push(res.status);
        stopped ??= server.close();
      }
    })().then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    await stopped;
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.rawMessage).toContain("shutting down");
  });
});
