import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeToolsService } from "../../gen/contextloader/kntools/v1/kntools_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { tracingOn } from "../../src/core/telemetry";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { type Simulator, startSimulator } from "../../src/simulator/simulator";
import { clientWith } from "../helpers/rpc";
import { startServer } from "../helpers/server";
import { connectHttp } from "../mcp/mcp-client";

/**
 * OpenTelemetry against a real OTLP/HTTP receiver on loopback, which decodes
 * what the service exports: with OTEL_EXPORTER_OTLP_ENDPOINT set, a call made
 * with a traceparent is a server span of that trace, child of the caller's
 * span, naming the method and status, with child spans for its upstream calls
 * (whose traceparent the platform receives) and its store queries; an MCP
 * tool call is a span too. Without the setting nothing is exported.
 */

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes?: { key: string; value: Record<string, unknown> }[];
}

interface Receiver {
  url: string;
  spans(): OtlpSpan[];
  close(): Promise<void>;
}

/** An OTLP/HTTP (JSON) trace receiver: it keeps every span of every export. */
async function startReceiver(): Promise<Receiver> {
  const spans: OtlpSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.headers["content-type"]?.startsWith("application/json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => spans,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const attr = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;
const ACCOUNT = { "x-account-id": "u-trace", "x-account-type": "user" };

describe("tracing with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  let receiver: Receiver;
  let sim: Simulator;
  beforeAll(async () => {
    receiver = await startReceiver();
    sim = await startSimulator({
      backend: EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" }),
    });
  });
  afterAll(async () => {
    await sim?.close();
    await receiver?.close();
  });

  it("exports the call as a span of the caller's trace, with its upstream calls and store queries as children", async () => {
    const server = await startServer({
      LOG_LEVEL: "silent",
      ONTOLOGY_MANAGER_URL: sim.url,
      ONTOLOGY_QUERY_URL: sim.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    try {
      const headers = { ...ACCOUNT, traceparent: TRACEPARENT };
      const tools = clientWith(KnowledgeToolsService, server.baseUrl, headers);
      await tools.queryObjectInstances({
        knId: "kn_medical",
        otId: "disease",
        condition: { field: "disease_name", operation: "like", value: { kind: { case: "stringValue", value: "肺" } } },
        limit: 2,
      });
      const memories = clientWith(MemRecallService, server.baseUrl, headers);
      await memories.storeMemory({ memoryKey: "traced", content: "a memory stored under a trace" });
      const mcp = await connectHttp(server.baseUrl, ACCOUNT);
      await mcp.callTool({ name: "search_schema", arguments: { kn_id: "kn_medical", query: "肺炎有哪些症状" } });
      await mcp.close();
    } finally {
      // Shutting down exports what is left.
      await server.close();
    }
    const spans = receiver.spans();
    const inTrace = spans.filter((s) => s.traceId === TRACE_ID);
    const query = inTrace.find((s) => s.name.endsWith("KnowledgeToolsService/QueryObjectInstances"));
    expect(query, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    expect(query!.parentSpanId).toBe(CALLER_SPAN);
    expect(attr(query!, "rpc.system")).toBe("connect_rpc");
    expect(attr(query!, "rpc.method")).toBe("QueryObjectInstances");

    const upstream = inTrace.filter(
      (s) => s.parentSpanId === query!.spanId && attr(s, "upstream.service") !== undefined,
    );
    expect(upstream.length).toBeGreaterThan(0);
    // The platform received the upstream span's own traceparent: the trace crosses to it.
    const sent = sim.requests().map((r) => String(r.headers["traceparent"] ?? ""));
    expect(sent).toContainEqual(expect.stringContaining(`-${TRACE_ID}-${upstream[0]!.spanId}-`));

    const store = inTrace.find((s) => s.name.endsWith("MemRecallService/StoreMemory"));
    expect(store?.parentSpanId).toBe(CALLER_SPAN);
    const queries = inTrace.filter((s) => s.parentSpanId === store!.spanId && attr(s, "db.system.name") === "sqlite");
    expect(queries.map((s) => attr(s, "db.operation.name"))).toContain("upsert");

    // No ids or content in any attribute.
    const values = spans.flatMap((s) => (s.attributes ?? []).map((a) => JSON.stringify(a.value)));
    expect(values.join(" ")).not.toMatch(/u-trace|traced|肺|kn_medical|disease_/);

    // The MCP tool call is a child of its MCP request's route span.
    const tool = spans.find((s) => s.name === "mcp tool search_schema");
    const request = spans.find((s) => s.spanId === tool?.parentSpanId);
    expect(request).toMatchObject({ name: "POST /mcp", traceId: tool!.traceId });
    expect(attr(request!, "http.response.status_code")).toBe(200);
  });

  it("makes no trace of a readiness probe: its store pings are no call's", async () => {
    const server = await startServer({ LOG_LEVEL: "silent", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    const before = receiver.spans().length;
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await server.close();
    }
    const pings = receiver
      .spans()
      .slice(before)
      .filter((s) => / (ping|checkWritable)$/.test(s.name));
    expect(pings).toEqual([]);
  });

  it("exports a failed call as an error span", async () => {
    const server = await startServer({ LOG_LEVEL: "silent", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    try {
      const tools = clientWith(KnowledgeToolsService, server.baseUrl, { ...ACCOUNT, traceparent: TRACEPARENT });
      await expect(tools.queryObjectInstances({ knId: "kn_medical", otId: "no_such_type" })).rejects.toThrow();
    } finally {
      await server.close();
    }
    const failed = receiver
      .spans()
      .filter((s) => s.name.endsWith("QueryObjectInstances") && s.status?.code === 2 && s.traceId === TRACE_ID);
    expect(failed.length).toBeGreaterThan(0);
    expect(attr(failed[0]!, "rpc.connect_rpc.error_code") ?? attr(failed[0]!, "rpc.grpc.status_code")).toBeDefined();
  });
});

describe("without an OTLP endpoint", () => {
  it("exports nothing, even after a traced service in the same process has stopped", async () => {
    const receiver = await startReceiver();
    const traced = await startServer({ LOG_LEVEL: "silent", OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    await traced.close();
    const exported = receiver.spans().length;
    const server = await startServer({ LOG_LEVEL: "silent" });
    try {
      const memories = clientWith(MemRecallService, server.baseUrl, { ...ACCOUNT, traceparent: TRACEPARENT });
      await memories.storeMemory({ memoryKey: "untraced", content: "no spans" });
      expect(tracingOn()).toBe(false);
    } finally {
      await server.close();
    }
    expect(receiver.spans()).toHaveLength(exported);
    await receiver.close();
  });
});
