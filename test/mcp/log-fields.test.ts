import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LogLine, startServer, type TestServer } from "../helpers/server";
import { callOk, connectHttp } from "./mcp-client";

/**
 * The fields of the lines an MCP request writes: the request's (trace_id,
 * route) on its own lines, the account too on its tools' lines, then the
 * line's own, in that order.
 */

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

/** The line's keys after pino's own (level, time, pid, hostname). */
const fieldsOf = (line: LogLine) => Object.keys(line).filter((k) => !["level", "time", "pid", "hostname"].includes(k));
const traced = () => {
  const traceId = randomUUID().replaceAll("-", "");
  return { traceId, traceparent: `00-${traceId}-b7ad6b7169203331-01` };
};

describe("MCP over HTTP: the fields of its log lines", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server?.close());

  it("writes trace_id, route, status and ms on the request's line", async () => {
    const { traceId, traceparent } = traced();
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, "x-account-id": "u-log-mcp", traceparent },
      body: LIST,
    });
    expect(res.status).toBe(200);
    await res.text();
    const line = server.logs.find((l) => l["trace_id"] === traceId && l.msg === "mcp")!;
    expect(fieldsOf(line)).toEqual(["trace_id", "route", "status", "ms", "msg"]);
    expect(line).toMatchObject({ trace_id: traceId, route: "/mcp", status: 200 });
  });

  it("writes trace_id, route, status and reason on a refused request's line", async () => {
    const { traceId, traceparent } = traced();
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, "x-account-type": "robot", traceparent },
      body: LIST,
    });
    expect(res.status).toBe(400);
    await res.text();
    const line = server.logs.find((l) => l["trace_id"] === traceId && l.msg === "mcp request refused")!;
    expect(fieldsOf(line)).toEqual(["trace_id", "route", "status", "reason", "msg"]);
    expect(line).toMatchObject({ trace_id: traceId, route: "/mcp", status: 400 });
  });

  it("writes trace_id, route and account first on a tool's lines", async () => {
    const { traceId, traceparent } = traced();
    const client = await connectHttp(server.baseUrl, { "x-account-id": "u-log-tool", traceparent });
    try {
      await callOk(client, "expand_context_window", { reason: "r", current_size: 1, requested_size: 2 });
    } finally {
      await client.close();
    }
    const line = server.logs.find((l) => l["trace_id"] === traceId && l.msg === "mcp tool")!;
    expect(fieldsOf(line).slice(0, 4)).toEqual(["trace_id", "route", "account", "tool"]);
    expect(line).toMatchObject({ trace_id: traceId, route: "/mcp", account: "u-log-tool" });
  });
});
