import * as http from "node:http";
import * as http2 from "node:http2";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb";
import { startServer, type TestServer } from "../helpers/server";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The SETTINGS the server sent on a fresh HTTP/2 connection. */
function remoteSettings(port: number): Promise<http2.Settings> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.once("error", reject);
    session.once("remoteSettings", (settings) => {
      session.close();
      resolve(settings);
    });
  });
}

/** Opens a Health/Watch and resolves with its first status; `rest` resolves with how the stream ended. */
function openWatch(
  port: number,
  controller: AbortController,
  transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
) {
  const health = createClient(Health, transport);
  const stream = health.watch({ service: "" }, { signal: controller.signal })[Symbol.asyncIterator]();
  const first = stream.next();
  const statuses: Status[] = [];
  const rest = first.then(async () => {
    for (;;) {
      const next = await stream.next();
      if (next.done) return { statuses, error: undefined };
      statuses.push(next.value.status);
    }
  });
  return {
    first,
    rest: rest.catch((err: unknown) => ({ statuses, error: ConnectError.from(err) })),
  };
}

/** A POST whose body never ends: an open request until the socket is destroyed. */
function heldRequest(port: number, account = "holder"): { socket: Promise<http.ClientRequest> } {
  const req = http.request({
    host: "127.0.0.1",
    port,
    method: "POST",
    path: "/contextloader.memrecall.v1.MemRecallService/SearchMemories",
    headers: { "content-type": "application/json", "content-length": "1000", "x-account-id": account },
    agent: false,
  });
  req.on("error", () => undefined);
  req.write("{");
  return { socket: new Promise((resolve) => req.once("socket", () => resolve(req))) };
}

describe("open streams are bounded", () => {
  it("advertises HTTP2_MAX_CONCURRENT_STREAMS in its SETTINGS (Node's default is 2^32-1)", async () => {
    server = await startServer({ HTTP2_MAX_CONCURRENT_STREAMS: "7" });
    expect((await remoteSettings(server.port)).maxConcurrentStreams).toBe(7);
    await server.close();
    server = await startServer();
    expect((await remoteSettings(server.port)).maxConcurrentStreams).toBe(100);
  });

  it("refuses health watches past a quarter of STREAMS_MAX_OPEN with RESOURCE_EXHAUSTED, and takes new ones when others close", async () => {
    server = await startServer({ STREAMS_MAX_OPEN: "12" });
    const port = server.port;
    const controllers = [0, 1, 2].map(() => new AbortController());
    const watches = controllers.map((c) => openWatch(port, c));
    for (const w of watches.slice(0, 3)) expect((await w.first).value?.status).toBe(Status.SERVING);
    const over = new AbortController();
    const refused = openWatch(port, over);
    const err = await refused.first.then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.ResourceExhausted);
    expect(err?.rawMessage).toMatch(/3 health watches and reflection streams are open.*STREAMS_MAX_OPEN/);
    // A one-off Check still answers, and so does an agent's call.
    const health = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    expect((await health.check({ service: "" })).status).toBe(Status.SERVING);
    controllers[0]!.abort();
    await watches[0]!.rest;
    await expect
      .poll(async () => (await openWatch(port, over).first).value?.status, { timeout: 5000 })
      .toBe(Status.SERVING);
    over.abort();
    for (const c of controllers) c.abort();
  });

  it("lets one caller hold at most a quarter of STREAMS_MAX_OPEN, and serves another caller meanwhile", async () => {
    server = await startServer({ STREAMS_MAX_OPEN: "8", HTTP_REQUEST_TIMEOUT_MS: "30000" });
    const port = server.port;
    const held = await Promise.all([0, 1].map(async () => await heldRequest(port, "flooder").socket));
    const search = (account: string) =>
      fetch(`${server!.baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": account },
        body: JSON.stringify({ query: "anything" }),
      });
    let refused = await search("flooder");
    await expect.poll(async () => (refused = await search("flooder")).status).toBe(503);
    expect(await refused.json()).toMatchObject({
      reason: "TOO_MANY_STREAMS",
      error: expect.stringMatching(/this caller has 2 requests and streams open.*STREAMS_MAX_OPEN/),
    });
    // The small refused body is read and dropped: the connection stays (a flood refused with "close" reconnected at once).
    const kept = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(`${server!.baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": "flooder" },
      });
      req.once("response", resolve).once("error", reject);
      req.end(JSON.stringify({ query: "anything" }));
    });
    kept.resume();
    expect(kept.statusCode).toBe(503);
    expect(kept.headers.connection).toBe("keep-alive");
    expect((await search("someone-else")).status).toBe(200);
    for (const req of held) req.destroy();
    await expect.poll(async () => (await search("flooder")).status, { timeout: 5000 }).toBe(200);
  });

  it("answers 503 with Retry-After past STREAMS_MAX_OPEN, before any handler, and serves again once requests close; probes still answer", async () => {
    server = await startServer({ STREAMS_MAX_OPEN: "4", HTTP_REQUEST_TIMEOUT_MS: "30000" });
    const port = server.port;
    // Four callers, one request each: no caller is past its quarter.
    const held = await Promise.all([0, 1, 2, 3].map(async (i) => await heldRequest(port, `holder-${i}`).socket));
    const search = () =>
      fetch(`${server!.baseUrl}/contextloader.memrecall.v1.MemRecallService/SearchMemories`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-account-id": "other" },
        body: JSON.stringify({ query: "anything" }),
      });
    // Once the four held bodies have reached the server, a fifth request is one too many.
    let refused = await search();
    await expect.poll(async () => (refused = await search()).status).toBe(503);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await refused.json()).toMatchObject({
      reason: "TOO_MANY_STREAMS",
      error: expect.stringMatching(/STREAMS_MAX_OPEN/),
    });
    // Over HTTP/2 a gRPC client sees UNAVAILABLE, which it may retry.
    const grpc = createClient(Health, createGrpcTransport({ baseUrl: server.baseUrl }));
    const err = await grpc.check({ service: "" }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.Unavailable);
    // Kubernetes' probes are not turned away by a full server: a failing liveness probe would restart it.
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    for (const req of held) req.destroy();
    await expect
      .poll(async () => (await grpc.check({ service: "" }).catch(() => undefined))?.status, { timeout: 5000 })
      .toBe(Status.SERVING);
  });

  it("ends a health watch that saw no change for HEALTH_WATCH_IDLE_MS with OK", async () => {
    server = await startServer({ HEALTH_WATCH_IDLE_MS: "1000" });
    const controller = new AbortController();
    const watch = openWatch(server.port, controller);
    expect((await watch.first).value?.status).toBe(Status.SERVING);
    const started = performance.now();
    const ended = await watch.rest;
    expect(ended).toEqual({ statuses: [], error: undefined });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("tells a watch of the shutdown before its idle end", async () => {
    server = await startServer({ HEALTH_WATCH_IDLE_MS: "60000" });
    const controller = new AbortController();
    const watch = openWatch(server.port, controller);
    expect((await watch.first).value?.status).toBe(Status.SERVING);
    const closing = server.close();
    const ended = await watch.rest;
    expect(ended.statuses).toEqual([Status.NOT_SERVING]);
    controller.abort();
    await closing;
  });
});
