import type { Logger } from "pino";
import type { IncomingRequest } from "./exchange";

/** One request as the simulator saw it. */
export interface SimRequest {
  method: string;
  /** Path and query string, as sent. */
  path: string;
  /** The headers the platform reads (lower-case names), when sent. */
  headers: Record<string, string>;
  /** The JSON body; its text when it is not JSON; undefined when empty. */
  body: unknown;
  /** 0 when the simulator never answered (a timeout fault). */
  status: number;
  /** From the request's arrival to its answer, to a hundredth of a millisecond. */
  ms: number;
  /** The client's port: the same across calls that reused one keep-alive connection. */
  remotePort: number;
}

const LOGGED_HEADERS = ["x-http-method-override", "x-account-id", "x-account-type", "traceparent", "content-type"];
/** The log keeps this many entries, dropping the oldest, so a long benchmark run stays bounded. */
const MAX_LOGGED_REQUESTS = 10_000;

/** The platform requests the simulator has answered (or held), oldest first: what tests assert on. */
export class RequestLog {
  private seen: SimRequest[] = [];

  constructor(private readonly log: Logger) {}

  /** Adds a request with the status it got (0: never answered) and the time since `startedAt` (performance.now()). */
  record(request: IncomingRequest, status: number, startedAt: number): void {
    const entry: SimRequest = {
      method: request.method,
      path: request.path,
      headers: Object.fromEntries(
        LOGGED_HEADERS.flatMap((h) => (typeof request.headers[h] === "string" ? [[h, request.headers[h]]] : [])),
      ),
      body: request.body,
      status,
      // To a hundredth: benchmarks subtract these times from their own, and whole milliseconds blur them.
      ms: Math.round((performance.now() - startedAt) * 100) / 100,
      remotePort: request.remotePort,
    };
    this.seen.push(entry);
    if (this.seen.length > MAX_LOGGED_REQUESTS) this.seen = this.seen.slice(-MAX_LOGGED_REQUESTS);
    this.log.debug({ method: entry.method, path: entry.path, status, ms: entry.ms }, "simulator request");
  }

  /** A copy: later requests do not change it. */
  list(): SimRequest[] {
    return [...this.seen];
  }

  clear(): void {
    this.seen = [];
  }
}
