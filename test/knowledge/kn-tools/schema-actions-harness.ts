import type { Client } from "@connectrpc/connect";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { KnowledgeToolsService } from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { EmbeddedBackend } from "../../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../../src/simulator/simulator";
import { clientWith } from "../../helpers/rpc";
import { startServer, type TestServer } from "../../helpers/server";
import { connectHttp } from "../../mcp/mcp-client";

/**
 * The service as search_schema, get_action_info and find_skills are tested
 * through it: the real server on a loopback port over the sample network,
 * either from the embedded engine or from the platform's HTTP APIs (the
 * simulator serving the same network), with the three ways to call it — the
 * RPC (Connect), MCP (the SDK's client) and the platform's REST routes.
 */

export type BackendKind = "embedded" | "http";
export const BACKENDS: BackendKind[] = ["embedded", "http"];
export const ACCOUNT = { "x-account-id": "u-kt", "x-account-type": "user" };
export const SEARCH_SCHEMA_RPC = "contextloader.kntools.v1.KnowledgeToolsService/SearchSchema";

export interface Harness {
  server: TestServer;
  /** The simulator behind the HTTP backend (undefined for the embedded engine). */
  sim: Simulator | undefined;
  rpc: Client<typeof KnowledgeToolsService>;
  /** A client sending these headers (the account's unless given). */
  rpcWith(headers: Record<string, string>): Client<typeof KnowledgeToolsService>;
  mcp: McpClient;
  /** POST /api/agent-retrieval/in/v1/kn/<tool> with a JSON body. */
  rest(tool: string, body: unknown, headers?: Record<string, string>): Promise<RestAnswer>;
  close(): Promise<void>;
}

export interface RestAnswer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read field by field in the expectations
  body: any;
}

/** The sample network. */
export const SAMPLE_BUNDLE = "data/kn_medical.bundle.json";

/** Starts the service over the bundles (default: the sample network) with `kind`'s backend, plus `env`. */
export async function startHarness(
  kind: BackendKind,
  env: Record<string, string> = {},
  bundles: string[] = [SAMPLE_BUNDLE],
): Promise<Harness> {
  const sim =
    kind === "http"
      ? await startSimulator({ backend: EmbeddedBackend.fromFiles(bundles, { timeZone: "Asia/Shanghai" }) })
      : undefined;
  const server = await startServer({
    LOG_LEVEL: "silent",
    ...(sim
      ? { ONTOLOGY_MANAGER_URL: sim.url, ONTOLOGY_QUERY_URL: sim.url, OPERATOR_MARKET_URL: sim.url }
      : { KN_BUNDLE: bundles.join(",") }),
    ...env,
  });
  const mcp = await connectHttp(server.baseUrl, ACCOUNT);
  return {
    server,
    sim,
    rpc: clientWith(KnowledgeToolsService, server.baseUrl, ACCOUNT),
    rpcWith: (headers) => clientWith(KnowledgeToolsService, server.baseUrl, headers),
    mcp,
    async rest(tool, body, headers = ACCOUNT) {
      const res = await fetch(`${server.baseUrl}/api/agent-retrieval/in/v1/kn/${tool}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await mcp.close();
      await server.close();
      await sim?.close();
    },
  };
}
