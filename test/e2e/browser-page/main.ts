// The browser side of test/e2e/browser.test.ts: calls MemRecallService over
// Connect and over gRPC-web from a page on another origin — two unary calls and
// the server-streaming Recall — and writes what each protocol answered into
// the DOM as JSON for the test to read back.
// The API's base URL and the caller's account come from the query string:
// index.html?api=http://127.0.0.1:<port>&account=<x-account-id>
import { ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { MemRecallService } from "../../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema } from "../../../gen/google/rpc/error_details_pb";

/** How one call ended, as the page reports it. */
export type Outcome =
  | { ok: true; message: string; traceId: string | null }
  | { ok: false; code: number; message: string; violationFields: string[] };

/** A Recall stream as the page saw it: each event's kind and when it arrived, ms after the call began. */
export type StreamOutcome =
  | { ok: true; events: { kind: string; at: number }[]; keys: string[]; strategy: string }
  | { ok: false; code: number; message: string; violationFields: string[] };

/** What one protocol's calls produced; written as JSON into <pre id="connect"> / <pre id="grpcweb">. */
export interface ProtocolResult {
  handoff: Outcome;
  invalidExpand: Outcome;
  recall: StreamOutcome;
}

function failure(e: unknown): Extract<Outcome, { ok: false }> {
  const err = ConnectError.from(e);
  return {
    ok: false,
    code: err.code,
    message: err.message,
    violationFields: err.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations.map((v) => v.field)),
  };
}

async function exercise(transport: Transport): Promise<ProtocolResult> {
  const client = createClient(MemRecallService, transport);
  // x-trace-id is readable only because the server lists it in access-control-expose-headers.
  let traceId: string | null = null;
  const handoff = await client
    .handoff(
      {
        reason: "已找到相关记忆，搜索完成",
        searchSummary: "找到用户之前的数据库配置",
        relevantMemoryKeys: ["db_config_001"],
        confidence: 0.85,
      },
      { onHeader: (h) => (traceId = h.get("x-trace-id")) },
    )
    .then((res): Outcome => ({ ok: true, message: res.message, traceId }), failure);
  const invalidExpand = await client
    .expandContextWindow({ reason: "x", currentSize: 10, requestedSize: 5 })
    .then((res): Outcome => ({ ok: true, message: res.message, traceId: null }), failure);
  return { handoff, invalidExpand, recall: await watchRecall(client) };
}

/** Reads a Recall stream (server streaming over fetch), noting when each event arrives. */
async function watchRecall(client: ReturnType<typeof createClient<typeof MemRecallService>>): Promise<StreamOutcome> {
  const started = performance.now();
  const events: { kind: string; at: number }[] = [];
  let keys: string[] = [];
  let strategy = "";
  try {
    for await (const e of client.recall({ messages: [{ role: "user", content: "按照我之前的数据库配置来" }] })) {
      events.push({ kind: e.event.case ?? "", at: Math.round(performance.now() - started) });
      if (e.event.case === "handoff") {
        keys = e.event.value.relevantMemoryKeys;
        strategy = e.event.value.strategy;
      }
    }
    return { ok: true, events, keys, strategy };
  } catch (e) {
    return failure(e);
  }
}

async function main() {
  const params = new URLSearchParams(location.search);
  const baseUrl = params.get("api");
  const account = params.get("account");
  if (baseUrl === null) throw new Error("index.html needs ?api=<server base URL>");
  if (account === null) throw new Error("index.html needs &account=<x-account-id>");
  // Every MemRecall call needs the caller's account: a header the preflight must allow.
  const withAccount: Interceptor = (next) => (req) => {
    req.header.set("x-account-id", account);
    return next(req);
  };
  const protocols = {
    connect: createConnectTransport({ baseUrl, useBinaryFormat: false, interceptors: [withAccount] }),
    grpcweb: createGrpcWebTransport({ baseUrl, useBinaryFormat: true, interceptors: [withAccount] }),
  };
  for (const [id, transport] of Object.entries(protocols)) {
    document.getElementById(id)!.textContent = JSON.stringify(await exercise(transport), null, 2);
  }
  // The test waits for this marker before reading the results.
  document.body.dataset["done"] = "true";
}

void main();
