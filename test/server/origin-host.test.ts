import * as http from "node:http";
import * as http2 from "node:http2";
import type { LookupFunction } from "node:net";
import { fileURLToPath } from "node:url";
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

// DNS rebinding (the MCP specification's Streamable HTTP "Security Warning"):
// a page on evil.attacker.example has its name re-resolved to the service's
// address and, being same-origin with it, reads the answers. Here a lookup
// that answers 127.0.0.1 for every name plays the rebound DNS, so each
// request carries the Host (or :authority) and Origin a browser would send.

const EVIL = "evil.attacker.example";
const DETAIL = "/contextloader.memrecall.v1.MemRecallService/GetMemoryDetail";
// Private, not a credential: StoreMemory refuses a credential in a memory not marked sensitive.
const SECRET = "the victim's private note: hunter2 is the name of the cat";
const VICTIM = "u-victim";

/** A unary method of a grpc-js dynamic client. */
type UnaryMethod = (
  request: object,
  metadata: grpc.Metadata,
  callback: (err: grpc.ServiceError | null) => void,
) => grpc.ClientUnaryCall;

/** The rebound DNS: every name is 127.0.0.1 (as one address, or as a list when Node asks for all). */
const rebound: LookupFunction = (_hostname, options, callback) => {
  const all = callback as (err: null, addresses: { address: string; family: number }[]) => void;
  if (options.all) all(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A POST over HTTP/1.1 to `host`:port (resolved to loopback), with these headers. */
function post1(
  host: string,
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = http.request(
      {
        host,
        port,
        path,
        method: "POST",
        lookup: rebound,
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers },
      },
      (res) => {
        let out = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (out += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: out }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

/** A request over HTTP/2 (h2c) with this :authority. */
function request2(
  authority: string,
  port: number,
  path: string,
  body: unknown,
  headers: Record<string, string>,
  method = "POST",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const stream = session.request({
      ":method": method,
      ":path": path,
      ":authority": authority,
      "content-type": "application/json",
      ...headers,
    });
    let out = "";
    let status = 0;
    let answerHeaders: Answer["headers"] = {};
    stream.setEncoding("utf8");
    stream.on("response", (h) => {
      status = Number(h[":status"]);
      answerHeaders = h;
    });
    stream.on("data", (d: string) => (out += d));
    stream.on("end", () => {
      session.close();
      resolve({ status, headers: answerHeaders, text: out });
    });
    stream.on("error", reject);
    stream.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const mcpHeaders = { accept: "application/json, text/event-stream", "x-account-id": VICTIM };
const readSecret = {
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "get_memory_detail", arguments: { memory_key: "db" } },
};
const readSecretRpc = { memory_key: "db" };

/** Stores the victim's memory through a loopback name, as its owner would. */
async function storeVictimMemory(server: TestServer): Promise<void> {
  const client = createClient(
    MemRecallService,
    createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1" }),
  );
  await client.storeMemory({ memoryKey: "db", content: SECRET }, { headers: { "x-account-id": VICTIM } });
}

/** A JSON-RPC error without an id (MCP's refusal before any message is read). */
function jsonRpcErrorOf(text: string): { jsonrpc: string; id: unknown; error: { code: number; message: string } } {
  return JSON.parse(text) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
}

describe("a DNS-rebinding page against a loopback service (the default HOST)", () => {
  let server: TestServer;
  let evil: string;
  beforeAll(async () => {
    server = await startServer();
    evil = `http://${EVIL}:${server.port}`;
    await storeVictimMemory(server);
  });
  afterAll(() => server.close());

  const attack = () => ({ ...mcpHeaders, origin: evil });

  it("gets 421 and a JSON-RPC error naming ALLOWED_HOSTS on /mcp and the public MCP path, over HTTP/1.1", async () => {
    for (const path of ["/mcp", "/api/agent-retrieval/v1/mcp"]) {
      const res = await post1(EVIL, server.port, path, readSecret, attack());
      expect(res.status, path).toBe(421);
      expect(res.text).not.toContain("hunter2");
      const body = jsonRpcErrorOf(res.text);
      expect(body).toMatchObject({ jsonrpc: "2.0", id: null });
      expect(body.error.message).toContain(`"${EVIL}"`);
      expect(body.error.message).toContain("ALLOWED_HOSTS");
      expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    }
  });

  it("gets 421 on /mcp and Connect JSON over HTTP/2", async () => {
    const authority = `${EVIL}:${server.port}`;
    const mcp = await request2(authority, server.port, "/mcp", readSecret, attack());
    expect(mcp.status).toBe(421);
    expect(jsonRpcErrorOf(mcp.text).error.message).toContain("ALLOWED_HOSTS");
    const rpc = await request2(authority, server.port, DETAIL, readSecretRpc, attack());
    expect(rpc.status).toBe(421);
    expect(rpc.text).not.toContain("hunter2");
    expect(JSON.parse(rpc.text)).toMatchObject({ code: "permission_denied", reason: "HOST_NOT_ALLOWED" });
  });

  it("gets 421 with the Connect error body on Connect JSON over HTTP/1.1, which a Connect client shows", async () => {
    const res = await post1(EVIL, server.port, DETAIL, readSecretRpc, attack());
    expect(res.status).toBe(421);
    expect(res.text).not.toContain("hunter2");
    const body = JSON.parse(res.text) as { code: string; message: string; error: string };
    expect(body.code).toBe("permission_denied");
    expect(body.message).toContain("ALLOWED_HOSTS");
    expect(body.error).toBe(body.message);

    const client = createClient(
      MemRecallService,
      createConnectTransport({ baseUrl: evil, httpVersion: "1.1", nodeOptions: { lookup: rebound } }),
    );
    const err = await failure(client.getMemoryDetail({ memoryKey: "db" }, { headers: { "x-account-id": VICTIM } }));
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toContain("ALLOWED_HOSTS");
  });

  it("is refused as a gRPC status that grpc-js and connect-es show, not a bare HTTP status", async () => {
    const connectGrpc = createClient(
      MemRecallService,
      createGrpcTransport({ baseUrl: evil, nodeOptions: { lookup: rebound } as http2.ClientSessionOptions }),
    );
    const viaConnect = await failure(
      connectGrpc.getMemoryDetail({ memoryKey: "db" }, { headers: { "x-account-id": VICTIM } }),
    );
    expect(viaConnect.code).toBe(Code.PermissionDenied);
    expect(viaConnect.rawMessage).toContain("ALLOWED_HOSTS");

    const definition = protoLoader.loadSync("contextloader/memrecall/v1/memrecall.proto", {
      includeDirs: [fileURLToPath(new URL("../../proto", import.meta.url))],
      keepCase: true,
    });
    const packages = grpc.loadPackageDefinition(definition) as unknown as {
      contextloader: { memrecall: { v1: { MemRecallService: grpc.ServiceClientConstructor } } };
    };
    const client = new packages.contextloader.memrecall.v1.MemRecallService(
      `127.0.0.1:${server.port}`,
      grpc.credentials.createInsecure(),
      { "grpc.default_authority": `${EVIL}:${server.port}` },
    );
    const metadata = new grpc.Metadata();
    metadata.set("x-account-id", VICTIM);
    const getMemoryDetail = (client as unknown as Record<string, UnaryMethod>)["GetMemoryDetail"]!;
    const err = await new Promise<grpc.ServiceError>((resolve, reject) => {
      getMemoryDetail.call(client, readSecretRpc, metadata, (e) => (e ? resolve(e) : reject(new Error("answered"))));
    });
    client.close();
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.details).toContain("ALLOWED_HOSTS");
  });

  it("is refused before authentication and the route: probes and unknown paths too", async () => {
    const probe = await request2(`${EVIL}:${server.port}`, server.port, "/healthz", undefined, {}, "GET");
    expect(probe.status).toBe(421);
    const unknown = await post1(EVIL, server.port, "/nowhere", {}, {});
    expect(unknown.status).toBe(421);
  });

  it("is refused on a REST route in that route's own error shape, with the status sent", async () => {
    const res = await post1(
      EVIL,
      server.port,
      "/tools/knowledge_retrieve",
      { query: "药品" },
      { "x-account-id": VICTIM },
    );
    expect(res.status).toBe(421);
    expect(JSON.parse(res.text)).toMatchObject({
      status_code: 421,
      error: expect.stringContaining("ALLOWED_HOSTS"),
      detail: { reason: "HOST_NOT_ALLOWED" },
    });
    const foreign = await post1("localhost", server.port, "/api/kn/logic-property-resolver", {}, { origin: "null" });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.text)).toMatchObject({
      error_code: "ORIGIN_NOT_ALLOWED",
      message: expect.stringContaining("CORS_ALLOWED_ORIGINS"),
    });
  });

  it("counts each refusal and logs it once, without the request's other headers", async () => {
    const before = server.logs.length;
    await post1(EVIL, server.port, "/mcp", readSecret, { ...attack(), authorization: "Bearer sekret-token" });
    const lines = server.logs.slice(before).filter((l) => l.reason === "HOST_NOT_ALLOWED");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, host: EVIL, path: "/mcp", status: 421 });
    expect(JSON.stringify(lines[0])).not.toContain("sekret-token");
    expect(JSON.stringify(lines[0])).not.toContain(VICTIM);
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/contextloader_http_requests_total\{route="host_not_allowed",status="421"\} [1-9]/);
  });

  it("answers the loopback names, with and without a port, in any case", async () => {
    for (const host of [
      "localhost",
      `localhost:${server.port}`,
      "LOCALHOST",
      "127.0.0.1",
      `127.0.0.1:${server.port}`,
    ]) {
      const res = await post1(host.split(":")[0]!, server.port, DETAIL, readSecretRpc, {
        host,
        "x-account-id": VICTIM,
      });
      expect(res.status, host).toBe(200);
      expect(res.text).toContain("hunter2");
    }
    for (const authority of [`[::1]:${server.port}`, "[::1]", `localhost:${server.port}`]) {
      const res = await request2(authority, server.port, "/mcp", readSecret, mcpHeaders);
      expect(res.status, authority).toBe(200);
      expect(res.text).toContain("hunter2");
    }
  });

  it("answers a page served by the service itself (Origin is the request's own)", async () => {
    const origin = `http://localhost:${server.port}`;
    const res = await post1("localhost", server.port, "/mcp", readSecret, { ...mcpHeaders, origin });
    expect(res.status).toBe(200);
  });

  it("refuses a page from another origin with 403 on a loopback name: JSON-RPC on /mcp, Connect JSON elsewhere", async () => {
    for (const origin of ["http://localhost:3000", "null", evil]) {
      const mcp = await post1("localhost", server.port, "/mcp", readSecret, { ...mcpHeaders, origin });
      expect(mcp.status, origin).toBe(403);
      expect(mcp.text).not.toContain("hunter2");
      expect(jsonRpcErrorOf(mcp.text).error.message).toContain("CORS_ALLOWED_ORIGINS");
      const rpc = await post1("127.0.0.1", server.port, DETAIL, readSecretRpc, { "x-account-id": VICTIM, origin });
      expect(rpc.status, origin).toBe(403);
      expect(JSON.parse(rpc.text)).toMatchObject({ code: "permission_denied", reason: "ORIGIN_NOT_ALLOWED" });
      expect(rpc.text).toContain("CORS_ALLOWED_ORIGINS");
    }
    const h2 = await request2(`localhost:${server.port}`, server.port, "/mcp", readSecret, {
      ...mcpHeaders,
      origin: "null",
    });
    expect(h2.status).toBe(403);
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/contextloader_http_requests_total\{route="origin_not_allowed",status="403"\} [1-9]/);
  });

  it("leaves a malformed Host to the routes' 400, which says what is wrong with it", async () => {
    const res = await post1("localhost", server.port, "/mcp", readSecret, { ...mcpHeaders, host: "h:port" });
    expect(res.status).toBe(400);
    expect(res.text).toContain("Host header");
  });
});

describe("ALLOWED_HOSTS", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ ALLOWED_HOSTS: "loader.example" });
    await post1(
      "loader.example",
      server.port,
      "/contextloader.memrecall.v1.MemRecallService/StoreMemory",
      {
        memory_key: "db",
        content: SECRET,
      },
      { "x-account-id": VICTIM },
    );
  });
  afterAll(() => server.close());

  it("answers the names it lists, any port, and refuses the others, loopback names included", async () => {
    for (const host of ["loader.example", `loader.example:${server.port}`, "Loader.Example:443"]) {
      const res = await post1("loader.example", server.port, DETAIL, readSecretRpc, { host, "x-account-id": VICTIM });
      expect(res.status, host).toBe(200);
    }
    for (const host of ["localhost", `127.0.0.1:${server.port}`, `${EVIL}:${server.port}`, "loader.example.evil"]) {
      const res = await post1("localhost", server.port, DETAIL, readSecretRpc, { host, "x-account-id": VICTIM });
      expect(res.status, host).toBe(421);
    }
  });
});

describe("HOST=0.0.0.0 without ALLOWED_HOSTS", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ HOST: "0.0.0.0" });
  });
  afterAll(() => server.close());

  it("answers any Host (the allow-list is off: a deployment behind a balancer sets ALLOWED_HOSTS)", async () => {
    const res = await post1(EVIL, server.port, "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/list" }, mcpHeaders);
    expect(res.status).toBe(200);
    const probe = await request2(`10.1.2.3:${server.port}`, server.port, "/healthz", undefined, {}, "GET");
    expect(probe.status).toBe(200);
  });
});

describe("browser callers from CORS_ALLOWED_ORIGINS", () => {
  const PAGE = "http://agent.example:3000";
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ CORS_ALLOWED_ORIGINS: PAGE });
  });
  afterAll(() => server.close());

  it("get the preflight and the answer, whatever loopback name they call the service by", async () => {
    for (const authority of [`127.0.0.1:${server.port}`, `localhost:${server.port}`]) {
      const preflight = await request2(
        authority,
        server.port,
        "/mcp",
        undefined,
        {
          origin: PAGE,
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type,x-account-id",
        },
        "OPTIONS",
      );
      expect(preflight.status, authority).toBe(204);
      expect(preflight.headers["access-control-allow-origin"]).toBe(PAGE);
      const res = await request2(
        authority,
        server.port,
        "/mcp",
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        {
          ...mcpHeaders,
          origin: PAGE,
        },
      );
      expect(res.status, authority).toBe(200);
      expect(res.headers["access-control-allow-origin"]).toBe(PAGE);
    }
  });

  it("still needs an allowed Host: an allowed origin does not open the service to other names", async () => {
    const res = await post1(EVIL, server.port, "/mcp", readSecret, { ...mcpHeaders, origin: PAGE });
    expect(res.status).toBe(421);
  });

  it("refuse a preflight and a request from another origin with 403 and no CORS headers", async () => {
    const preflight = await request2(
      `127.0.0.1:${server.port}`,
      server.port,
      "/mcp",
      undefined,
      {
        origin: "http://other.example",
        "access-control-request-method": "POST",
      },
      "OPTIONS",
    );
    expect(preflight.status).toBe(403);
    expect(preflight.headers["access-control-allow-origin"]).toBeUndefined();
    expect(preflight.text).toContain("CORS_ALLOWED_ORIGINS");
  });
});
