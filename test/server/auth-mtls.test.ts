import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";
import { failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { sending } from "./auth-helpers";

/**
 * AUTH_MODE=mtls over TLS with certificates made here with openssl: a CA, the
 * server's certificate for 127.0.0.1/localhost, a client certificate the CA
 * signed (the gateway) and a self-signed one. Identity headers count only from
 * the verified client; the probes answer anyone.
 */

interface Pem {
  ca: Buffer;
  clientCert: Buffer;
  clientKey: Buffer;
  strangerCert: Buffer;
  strangerKey: Buffer;
}

let dir: string;
let pem: Pem;
let server: TestServer;
let baseUrl: string;

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

/** A key and a certificate signing request for `cn`, then the certificate the CA signs (with `ext` lines). */
function signedByCa(name: string, cn: string, ext: string): void {
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-subj",
    `/CN=${cn}`,
    "-out",
    `${name}.csr`,
  );
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "cl-mtls-"));
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-subj",
    "/CN=test client CA",
    "-days",
    "2",
    "-out",
    "ca.crt",
  );
  signedByCa("server", "localhost", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  signedByCa("gateway", "gateway", "extendedKeyUsage=clientAuth\n");
  openssl(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "stranger.key",
    "-subj",
    "/CN=gateway",
    "-days",
    "2",
    "-out",
    "stranger.crt",
  );
  const read = (f: string) => readFileSync(join(dir, f));
  pem = {
    ca: read("ca.crt"),
    clientCert: read("gateway.crt"),
    clientKey: read("gateway.key"),
    strangerCert: read("stranger.crt"),
    strangerKey: read("stranger.key"),
  };
  server = await startServer({
    AUTH_MODE: "mtls",
    TLS_CERT: join(dir, "server.crt"),
    TLS_KEY: join(dir, "server.key"),
    TLS_CLIENT_CA: join(dir, "ca.crt"),
  });
  baseUrl = `https://127.0.0.1:${server.port}`;
}, 60_000);
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Identity = "gateway" | "stranger" | "none";

/** TLS options of a client presenting `who`'s certificate (or none); it trusts the test CA for the server. */
function tlsOf(who: Identity) {
  if (who === "gateway") return { ca: pem.ca, cert: pem.clientCert, key: pem.clientKey };
  if (who === "stranger") return { ca: pem.ca, cert: pem.strangerCert, key: pem.strangerKey };
  return { ca: pem.ca };
}

/** Connect over HTTP/1.1 and over HTTP/2, and gRPC, each presenting `who`'s certificate and sending `headers`. */
function clients(who: Identity, headers: Record<string, string>): [string, Client<typeof MemRecallService>][] {
  const interceptors = [sending(headers)];
  const nodeOptions = tlsOf(who);
  return [
    [
      "connect h1",
      createClient(
        MemRecallService,
        createConnectTransport({ baseUrl, httpVersion: "1.1", nodeOptions, interceptors }),
      ),
    ],
    [
      "connect h2",
      createClient(MemRecallService, createConnectTransport({ baseUrl, httpVersion: "2", nodeOptions, interceptors })),
    ],
    ["grpc", createClient(MemRecallService, createGrpcTransport({ baseUrl, nodeOptions, interceptors }))],
  ];
}

/** A plain HTTPS request over HTTP/1.1: status and body. */
function https(
  who: Identity,
  path: string,
  method: string,
  headers: Record<string, string> = {},
  body = "",
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers, ...tlsOf(who) }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => {
        text += c.toString("utf8");
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("a client certificate the CA signed", () => {
  it("is trusted for the identity headers it sends, on Connect (HTTP/1.1 and HTTP/2) and gRPC", async () => {
    const alice = `alice-${randomUUID()}`;
    for (const [name, c] of clients("gateway", { "x-account-id": alice })) {
      await c.storeMemory({ memoryKey: `k-${name}`, content: `alice via ${name}` });
      expect((await c.getMemoryDetail({ memoryKey: `k-${name}` })).content, name).toBe(`alice via ${name}`);
    }
    for (const [name, c] of clients("gateway", { "x-account-id": `bob-${randomUUID()}` })) {
      expect((await failure(c.getMemoryDetail({ memoryKey: "k-grpc" }))).code, name).toBe(Code.NotFound);
    }
  });

  it("reaches the REST routes and /mcp", async () => {
    const rest = await https(
      "gateway",
      "/tools/knowledge_retrieve",
      "POST",
      { "content-type": "application/json", "x-account-id": "alice" },
      JSON.stringify({ query: "上气道梗阻有哪些症状", kn_ids: [{ knowledge_network_id: "kn_medical" }], top_k: 3 }),
    );
    expect(rest.status).toBe(200);
    const mcp = await https(
      "gateway",
      "/mcp",
      "POST",
      { "content-type": "application/json", accept: "application/json, text/event-stream", "x-account-id": "alice" },
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    );
    expect(mcp.status).toBe(200);
    expect(mcp.body).toContain("store_memory");
  });
});

describe("a client without a verified certificate", () => {
  it("self-signed or none: UNAUTHENTICATED whatever identity headers it sends", async () => {
    for (const who of ["stranger", "none"] as const) {
      for (const [name, c] of clients(who, { "x-account-id": "alice", "x-account-type": "user" })) {
        const err = await failure(c.getMemoryDetail({ memoryKey: "k-grpc" }));
        expect(err.code, `${who} over ${name}`).toBe(Code.Unauthenticated);
        expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("AUTH_CLIENT_CERTIFICATE_REQUIRED");
      }
      const rest = await https(who, "/tools/knowledge_retrieve", "POST", { "x-account-id": "alice" }, "{}");
      expect(rest.status, who).toBe(401);
      const mcp = await https(
        who,
        "/mcp",
        "POST",
        { "content-type": "application/json", accept: "application/json, text/event-stream", "x-account-id": "alice" },
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      );
      expect(mcp.status, who).toBe(401);
      expect(mcp.body).toContain("client certificate");
    }
  });

  it("still gets /healthz and grpc.health.v1.Health/Check", async () => {
    expect((await https("none", "/healthz", "GET")).status).toBe(200);
    const health = createClient(Health, createGrpcTransport({ baseUrl, nodeOptions: tlsOf("stranger") }));
    expect((await health.check({ service: "" })).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
  });
});
