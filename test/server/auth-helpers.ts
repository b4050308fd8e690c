import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";

/**
 * What the authentication tests serve on loopback in place of an identity
 * provider: a JWKS endpoint with keys made here, and an RFC 7662
 * introspection endpoint answering from a table.
 */

/** A node:http server on a free loopback port; `url` is its base. */
export async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{
  url: string;
  close(): Promise<void>;
}> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const ISSUER = "https://idp.test/";
export const AUDIENCE = "context-loader";

export interface Jwks {
  /** The key set's URL. */
  url: string;
  /** Key set requests served so far. */
  hits: number;
  /** When true the endpoint answers 500. */
  failing: boolean;
  /** A token signed with the key set's key: the claims given over sensible defaults (sub, iss, aud, an hour of life). */
  sign(claims?: JWTPayload, header?: { kid?: string; alg?: string }): Promise<string>;
  /** A token of exactly these claims (no defaults), signed with the set's key. */
  signExactly(claims: JWTPayload): Promise<string>;
  /** A token signed by a key the set does not hold, under the set's key id. */
  signWithStrangerKey(claims?: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

/** A JWKS endpoint holding one RS256 key, id "k1". */
export async function startJwks(): Promise<Jwks> {
  const { publicKey, privateKey } = await generateKeyPair("RS256");
  const stranger = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  const state = { hits: 0, failing: false };
  const http = await serve((_req, res) => {
    state.hits++;
    if (state.failing) {
      res.writeHead(500, { "content-type": "text/plain" }).end("jwks store exploded at db-7.internal");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
  });
  const build = (claims: JWTPayload, key: CryptoKey | Uint8Array, header: { kid?: string; alg?: string }) =>
    new SignJWT({ sub: "alice", ...claims })
      .setProtectedHeader({ alg: header.alg ?? "RS256", kid: header.kid ?? "k1" })
      .setIssuer(typeof claims.iss === "string" ? claims.iss : ISSUER)
      .setAudience(claims.aud ?? AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(typeof claims.exp === "number" ? claims.exp : "1h")
      .sign(key as CryptoKey);
  return {
    url: `${http.url}/.well-known/jwks.json`,
    get hits() {
      return state.hits;
    },
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    sign: (claims = {}, header = {}) => build(claims, privateKey, header),
    signExactly: (claims) => new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" }).sign(privateKey),
    signWithStrangerKey: (claims = {}) => build(claims, stranger.privateKey, {}),
    close: http.close,
  };
}

export interface IntrospectionEndpoint {
  url: string;
  /** Introspection requests per token. */
  calls: Map<string, number>;
  /** The Authorization header of the last request. */
  lastAuthorization: string | undefined;
  /** The RFC 7662 answer per token (unknown tokens are inactive). */
  answers: Map<string, Record<string, unknown>>;
  /** When set, every request is answered with this status and text. */
  failure: { status: number; text: string } | undefined;
  close(): Promise<void>;
}

/**
 * An RFC 7662 endpoint: form-encoded `token` in, the table's answer out
 * (unknown tokens are inactive); requests without the client's basic
 * credentials get 401, as Hydra's admin endpoint behind a proxy would.
 */
export async function startIntrospection(client: { id: string; secret: string }): Promise<IntrospectionEndpoint> {
  const calls = new Map<string, number>();
  const answers = new Map<string, Record<string, unknown>>();
  const expected = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString("base64")}`;
  const endpoint: IntrospectionEndpoint = {
    url: "",
    calls,
    lastAuthorization: undefined,
    answers,
    failure: undefined,
    close: async () => undefined,
  };
  const http = await serve((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString("utf8");
    });
    req.on("end", () => {
      endpoint.lastAuthorization = req.headers.authorization;
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"invalid_client"}');
        return;
      }
      const token = new URLSearchParams(body).get("token") ?? "";
      calls.set(token, (calls.get(token) ?? 0) + 1);
      if (endpoint.failure) {
        res.writeHead(endpoint.failure.status, { "content-type": "text/plain" }).end(endpoint.failure.text);
        return;
      }
      const answer = answers.get(token) ?? { active: false };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    });
  });
  endpoint.url = `${http.url}/oauth2/introspect`;
  endpoint.close = http.close;
  return endpoint;
}

/** An interceptor that sends these headers on every call. */
export function sending(headers: Record<string, string>): Interceptor {
  return (next) => (req) => {
    for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
    return next(req);
  };
}

/** Connect (JSON over HTTP/1.1) and gRPC (h2c) clients of `service` sending `headers`. */
export function rpcClients<S extends DescService>(
  service: S,
  baseUrl: string,
  headers: Record<string, string>,
): [string, Client<S>][] {
  const transports: [string, Transport][] = [
    ["connect", createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [sending(headers)] })],
    ["grpc", createGrpcTransport({ baseUrl, interceptors: [sending(headers)] })],
  ];
  return transports.map(([name, t]) => [name, createClient(service, t)]);
}

/** A raw MCP tools/call over POST /mcp; the status, headers and parsed JSON body. */
export async function mcpToolCall(
  baseUrl: string,
  headers: Record<string, string>,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: { ...args, response_format: "json" } },
    }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** An MCP tools/call result: its answer parsed as JSON, or for a failed call its plain-text error. */
export function mcpResult(body: Record<string, unknown>): {
  isError: boolean;
  answer: Record<string, unknown>;
  error: string;
} {
  const result = body["result"] as { isError?: boolean; content: { text: string }[] };
  const text = result.content[0]!.text;
  return result.isError === true
    ? { isError: true, answer: {}, error: text }
    : { isError: false, answer: JSON.parse(text) as Record<string, unknown>, error: "" };
}
