import http from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { type Logger, pino } from "pino";
import { DEFAULT_VOCABULARY } from "../config-fields";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import { loadVocabulary, type Vocabulary } from "../knowledge/matching/vocabulary";
import { ADMIN_PREFIX, answerAdmin } from "./admin-routes";
import type { SimulatorFaults } from "./config";
import { DataRetrievalKnSearch, KN_SEARCH_PATH } from "./data-retrieval-kn-search";
import { abortOnClose, type IncomingRequest, readRequest, writeReply } from "./exchange";
import { FaultInjector, faultReply } from "./faults";
import { answerPlatform, type PlatformDeps } from "./platform-routes";
import { RequestLog, type SimRequest } from "./request-log";

/**
 * The platform's REST contract (ontology-manager, ontology-query, the operator
 * market, and data-retrieval's `POST /tools/kn_search` answered by our native
 * kn_search) served from any KnowledgeNetworkBackend, usually the embedded
 * engine: what the HTTP clients are tested and benchmarked against. It serves
 * the paths of every platform release at once (0.7's `/api/ontology-manager/…`
 * and 0.8's `/api/bkn-backend/…` alike, see route.ts). It answers
 * as the platform does: error bodies `{error_code, description, solution,
 * error_link, error_details}` (a backend's field violations as error_details
 * `[{field, description}]`), total_count omitted when 0, property rows in an
 * order of its own, ontology-query reads refused without
 * `X-HTTP-Method-Override: GET`, field names in the configured spelling. Faults
 * (latency, 503s, answers that never come, bodies that are not JSON) are drawn
 * per request and can be changed while it runs, in process or over
 * `POST /__sim/faults`.
 */
export interface Simulator {
  /** http://host:port, the base URL of all three services. */
  url: string;
  port: number;
  setFaults(faults: Partial<SimulatorFaults>): void;
  /** Every platform request so far, oldest first (admin routes excluded). */
  requests(): SimRequest[];
  clearRequests(): void;
  /** Stops listening and drops every connection, held ones included. */
  close(): Promise<void>;
}

export interface SimulatorOptions {
  backend: KnowledgeNetworkBackend;
  /** The mention vocabulary its kn_search uses; default: the one the service ships (data/mentions). */
  vocabulary?: Vocabulary;
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  faults?: Partial<SimulatorFaults>;
  /** "new" (2026 names, the default) or "old" (`id`, `unique_identities`, `display`). */
  spelling?: "new" | "old";
  log?: Logger;
}

/**
 * Starts the simulator. Each request is read whole, then: an admin route
 * (`/__sim/…`) is answered at once; any other request gets its drawn fault
 * (a delay, then possibly no answer or a faulted one) or else the answer of
 * data-retrieval's kn_search or of the platform route it names, and goes into
 * the request log with the status it got.
 */
export async function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const log = opts.log ?? pino({ level: "silent" });
  const faults = new FaultInjector(opts.faults ?? {});
  const requests = new RequestLog(log);
  const knSearch = new DataRetrievalKnSearch(opts.backend, log, opts.vocabulary ?? loadVocabulary(DEFAULT_VOCABULARY));
  const platform: PlatformDeps = { backend: opts.backend, spelling: opts.spelling ?? "new", log };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    const request = await readRequest(req);
    if (request.url.pathname.startsWith(ADMIN_PREFIX)) {
      writeReply(res, answerAdmin(request, faults, requests));
      return;
    }
    requests.record(request, await answer(request, res), started);
  }

  /** Answers a platform request, faults included; resolves with the status sent (0: none). */
  async function answer(request: IncomingRequest, res: http.ServerResponse): Promise<number> {
    const fault = faults.draw(`${request.method} ${request.path} ${request.text ?? ""}`);
    if (fault.delayMs > 0) await sleep(fault.delayMs);
    if (res.destroyed) return 0;
    // Hold the socket: the client's timeout must fire (or close() drops it).
    if (fault.outcome === "hold") return 0;
    if (fault.outcome !== "none") return writeReply(res, faultReply(fault.outcome, request.url.pathname));
    const signal = abortOnClose(res);
    const reply =
      request.method === "POST" && request.url.pathname === KN_SEARCH_PATH
        ? await knSearch.answer(request, signal)
        : await answerPlatform(request, platform, signal);
    return reply === undefined ? 0 : writeReply(res, reply);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err }, "simulator failed to answer");
      res.destroy();
    });
  });
  await listen(server, opts.port ?? 0, opts.host ?? "127.0.0.1");
  const address = server.address() as AddressInfo;
  return {
    url: `http://${urlHost(address.address)}:${address.port}`,
    port: address.port,
    setFaults: (f) => faults.set(f),
    requests: () => requests.list(),
    clearRequests: () => requests.clear(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }).finally(() => knSearch.close()),
  };
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function urlHost(address: string): string {
  if (address === "0.0.0.0") return "127.0.0.1";
  if (address === "::") return "[::1]";
  return address.includes(":") ? `[${address}]` : address;
}
