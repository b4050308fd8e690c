import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/**
 * The unary bench's OTLP/HTTP trace receiver on loopback: it accepts
 * POST /v1/traces, answers 200 and counts what arrived, so the bench can show
 * that the traced service really exported its spans. It only counts (a
 * collector's own work is not the service's cost): the spans of a JSON export
 * are counted by their `"spanId":` keys, and the first export is also parsed
 * in full to check that count.
 */
export interface OtlpSink {
  /** OTEL_EXPORTER_OTLP_ENDPOINT for the service (it adds /v1/traces). */
  endpoint: string;
  /** Exports received, spans in them, bytes (as sent, compressed or not). */
  received(): { requests: number; spans: number; bytes: number };
  /** Why an export could not be counted (not JSON, a count that disagrees with the parsed body), if one could not. */
  problem(): string | undefined;
  close(): Promise<void>;
}

const SPAN_KEY = Buffer.from('"spanId":');

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let spans = 0;
  let bytes = 0;
  let problem: string | undefined;
  const count = (req: IncomingMessage, body: Buffer) => {
    const type = req.headers["content-type"] ?? "";
    if (!type.startsWith("application/json")) {
      problem ??= `an export came as ${type || "no content-type"}, not JSON: its spans were not counted`;
      return;
    }
    const json = req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
    let found = 0;
    for (let at = json.indexOf(SPAN_KEY); at !== -1; at = json.indexOf(SPAN_KEY, at + SPAN_KEY.length)) found++;
    if (requests === 1) {
      const parsed = JSON.parse(json.toString("utf8")) as {
        resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[];
      };
      const inBody = (parsed.resourceSpans ?? [])
        .flatMap((r) => r.scopeSpans ?? [])
        .reduce((sum, s) => sum + (s.spans?.length ?? 0), 0);
      if (inBody !== found) problem ??= `the first export holds ${inBody} spans but ${found} were counted`;
    }
    spans += found;
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || req.url !== "/v1/traces") {
      res.writeHead(404).end();
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      requests++;
      bytes += body.length;
      try {
        count(req, body);
      } catch (err) {
        problem ??= `an export could not be read: ${(err as Error).message}`;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received: () => ({ requests, spans, bytes }),
    problem: () => problem,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
