import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolError } from "../../src/errors/tool-error";
import { createJsonClient } from "../../src/upstream/http-json";
import { testContext } from "../helpers/call-context";

/**
 * A platform server written on raw sockets, so what happens to each
 * connection is exact: it answers the first `answered` requests of a
 * connection (and at most `total` in all), then resets the connection when
 * the next one arrives, as a server does that closed a kept-alive connection
 * for being idle just as the client reused it.
 */
async function resettingServer(
  answered: number,
  total = Number.POSITIVE_INFINITY,
): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let served = 0;
    let buffered = "";
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      while (buffered.includes("\r\n\r\n")) {
        buffered = buffered.slice(buffered.indexOf("\r\n\r\n") + 4);
        requests++;
        if (served === answered || requests > total) {
          socket.resetAndDestroy();
          return;
        }
        served++;
        const body = JSON.stringify({ ok: true, n: requests });
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const answer = z.object({ ok: z.literal(true), n: z.number() });
const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function clientOf(answered: number, total?: number) {
  const server = await resettingServer(answered, total);
  const client = createJsonClient({
    upstream: "ontology-manager",
    baseUrl: server.url,
    timeoutMs: 5000,
    maxSockets: 1,
  });
  closers.push(server.close, client.close);
  return { server, client };
}

describe("an upstream connection the server closed while it sat idle", () => {
  it("is retried once on a new connection, and the call succeeds", async () => {
    const { server, client } = await clientOf(1);
    const first = await client.call(testContext(), { method: "GET", path: "/a" }, answer);
    // The second call reuses the kept-alive connection, which the server resets: sent again on a new one.
    const second = await client.call(testContext(), { method: "POST", path: "/b", body: { q: 1 } }, answer);
    expect(first.n).toBe(1);
    expect(second.n).toBe(3);
    expect(server.requests()).toBe(3);
  });

  it("is not retried when the connection was new: the server refused the request itself", async () => {
    const { server, client } = await clientOf(0);
    const failure = await client.call(testContext(), { method: "GET", path: "/a" }, answer).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ToolError);
    expect((failure as ToolError).code).toBe("unavailable");
    expect(server.requests()).toBe(1);
  });

  it("is retried once only: when the new connection fails too, the caller sees it", async () => {
    const { server, client } = await clientOf(1, 1);
    await client.call(testContext(), { method: "GET", path: "/a" }, answer);
    const failure = await client.call(testContext(), { method: "GET", path: "/b" }, answer).catch((e: unknown) => e);
    expect((failure as ToolError).code).toBe("unavailable");
    expect(server.requests()).toBe(3);
  });
});
