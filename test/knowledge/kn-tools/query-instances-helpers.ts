import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Client, Code, type ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";
import { AgentHintSchema } from "../../../gen/contextloader/common/v1/errors_pb";
import { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb";
import { EmbeddedBackend } from "../../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../../src/simulator/simulator";
import { clientWith, failure } from "../../helpers/rpc";
import { startServer, type TestServer } from "../../helpers/server";

/**
 * What the query_object_instance and query_instance_subgraph suites share:
 * the service on both backends (the embedded engine, and the HTTP clients
 * against the simulator serving the same sample network), clients for the
 * RPC and the REST routes, and readers of their errors.
 */

export const KN = "kn_medical";
export const HEADERS = { "x-account-id": "u-kntools", "x-account-type": "user" };
export const REST = "/api/agent-retrieval/in/v1/kn";

/** The sample network's data, to count what an answer must hold. */
export const bundle = JSON.parse(readFileSync("data/kn_medical.bundle.json", "utf8")) as {
  objects: Record<string, Record<string, unknown>[]>;
  relations: Record<string, [unknown, unknown][]>;
};

export type ToolsClient = Client<typeof KnowledgeToolsService>;

export interface Backend {
  name: string;
  server: TestServer;
  client: ToolsClient;
  /** The simulator behind the HTTP backend. */
  sim?: Simulator;
}

/** The service on the embedded engine and on the HTTP backend over the simulator. */
export async function startBackends(): Promise<{ backends: Backend[]; close(): Promise<void> }> {
  const sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
  });
  const [embedded, overHttp] = await Promise.all([
    startServer({ LOG_LEVEL: "silent" }),
    startServer({ ONTOLOGY_MANAGER_URL: sim.url, ONTOLOGY_QUERY_URL: sim.url, LOG_LEVEL: "silent" }),
  ]);
  return {
    backends: [
      { name: "embedded", server: embedded, client: clientWith(KnowledgeToolsService, embedded.baseUrl, HEADERS) },
      {
        name: "http (simulator)",
        server: overHttp,
        client: clientWith(KnowledgeToolsService, overHttp.baseUrl, HEADERS),
        sim,
      },
    ],
    close: async () => {
      await Promise.all([embedded.close(), overHttp.close()]);
      await sim.close();
    },
  };
}

export interface RestAnswer {
  status: number;
  contentType: string;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read field by field in the expectations
  body: any;
}

/** POSTs a JSON body to one of the anchor's routes. */
export async function rest(
  server: TestServer,
  route: "query_object_instance" | "query_instance_subgraph",
  query: Record<string, string>,
  body: unknown,
  headers: Record<string, string> = HEADERS,
): Promise<RestAnswer> {
  const res = await fetch(`${server.baseUrl}${REST}/${route}?${new URLSearchParams(query)}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const contentType = res.headers.get("content-type") ?? "";
  return {
    status: res.status,
    contentType,
    text,
    body: contentType.startsWith("application/json") ? JSON.parse(text) : undefined,
  };
}

/** A failed call's code, reason, field violations and hint. */
export async function rpcFailure(call: Promise<unknown>) {
  const err: ConnectError = await failure(call);
  const [info] = err.findDetails(ErrorInfoSchema);
  const [badRequest] = err.findDetails(BadRequestSchema);
  const [hint] = err.findDetails(AgentHintSchema);
  return {
    code: err.code,
    message: err.rawMessage,
    reason: info?.reason ?? "",
    metadata: info?.metadata ?? {},
    violations: (badRequest?.fieldViolations ?? []).map((v) => ({ field: v.field, description: v.description })),
    hint: hint?.message ?? "",
    nextRpc: hint?.nextRpc ?? "",
    validValues: hint?.validValues ?? [],
  };
}

export type Failure = Awaited<ReturnType<typeof rpcFailure>>;

/** The violation at `field`; fails the test when there is none. */
export function violationAt(f: Failure, field: string): string {
  const v = f.violations.find((x) => x.field === field);
  expect(v, `a violation at ${field} among ${JSON.stringify(f.violations)}`).toBeDefined();
  return v!.description;
}

export { Code };

/** No internal address in anything an agent reads. */
export function expectNoInternalAddress(text: string): void {
  expect(text).not.toMatch(/https?:\/\//);
  expect(text).not.toMatch(/\/api\/ontology/);
  expect(text).not.toMatch(/127\.0\.0\.1/);
}

/**
 * A platform whose ontology-manager is the simulator's and whose
 * ontology-query answers what the test says: to see the platform's own
 * refusals (which our checks would otherwise prevent) reach the agent.
 */
export async function startRefusingPlatform(sim: Simulator) {
  let next = { status: 400, body: {} as unknown };
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      requests.push(`${req.method} ${req.url}`);
      if (req.method === "GET") {
        const upstream = await fetch(`${sim.url}${req.url}`, { headers: { "x-account-id": "proxy" } });
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(await upstream.text());
        return;
      }
      res.writeHead(next.status, { "content-type": "application/json" });
      res.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer(status: number, body: unknown) {
      next = { status, body };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
