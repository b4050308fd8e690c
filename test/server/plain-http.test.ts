import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedHandoffReport, handoffJson } from "../helpers/fixtures";
import { startServer, type TestServer } from "../helpers/server";

// What an agent configuration or curl does: Node's fetch (undici, HTTP/1.1)
// posting hand-written JSON to the Connect unary path, and reading the plain
// HTTP routes on the same port. Nothing here knows about protobuf.

const HANDOFF = "contextloader.memrecall.v1.MemRecallService/Handoff";
const EXPAND = "contextloader.memrecall.v1.MemRecallService/ExpandContextWindow";
/** Every MemRecall call needs the caller's account; post() sends it unless a test's own headers replace it. */
const ACCOUNT = { "x-account-id": "u-1" };

/** The Connect protocol's JSON error body. */
interface ConnectErrorBody {
  code: string;
  message: string;
  details?: { type: string; value: string; debug?: Record<string, unknown> }[];
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function post(rpc: string, body: unknown, headers: Record<string, string> = {}) {
  return postRaw(rpc, JSON.stringify(body), headers);
}

async function postRaw(rpc: string, text: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.baseUrl}/${rpc}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...ACCOUNT, ...headers },
    body: text,
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as unknown };
}

/** The debug JSON of the error detail of `type`. */
function debugOf(body: ConnectErrorBody, type: string): Record<string, unknown> | undefined {
  return body.details?.find((d) => d.type === type)?.debug;
}

/** The fields named by the google.rpc.BadRequest detail. */
function violatedFields(body: ConnectErrorBody): string[] {
  const badRequest = debugOf(body, "google.rpc.BadRequest") as { field_violations?: { field: string }[] } | undefined;
  return (badRequest?.field_violations ?? []).map((v) => v.field);
}

describe("Connect unary RPCs as plain JSON over HTTP/1.1", () => {
  it("answers a Handoff posted as snake_case JSON with the snake_case report", async () => {
    const res = await post(HANDOFF, handoffJson);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body).toEqual({ success: true, message: expectedHandoffReport, task_completed: true });
  });

  it("answers an invalid ExpandContextWindow with HTTP 400 and the Connect error body, each detail with its type and debug JSON", async () => {
    const res = await post(EXPAND, { reason: "需要更早的对话", current_size: 10, requested_size: 5 });
    expect(res.status).toBe(400);
    const body = res.body as ConnectErrorBody;
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toBe("invalid request: requested_size: 5 must be greater than current_size (10)");
    expect(body.details?.map((d) => d.type)).toEqual([
      "google.rpc.ErrorInfo",
      "google.rpc.BadRequest",
      "contextloader.common.v1.AgentHint",
    ]);
    for (const detail of body.details ?? []) {
      expect(detail, detail.type).toEqual({ type: detail.type, value: expect.any(String), debug: expect.any(Object) });
    }
    const badRequest = debugOf(body, "google.rpc.BadRequest") as { field_violations: { field: string }[] };
    expect(badRequest.field_violations[0]?.field).toBe("requested_size");
    expect(debugOf(body, "google.rpc.ErrorInfo")).toEqual({
      reason: "INVALID_ARGUMENT",
      domain: "contextloader",
      metadata: { trace_id: res.headers.get("x-trace-id") },
    });
  });

  it("rejects an unknown field in the body with a violation naming it and the valid fields, trace id included", async () => {
    const res = await post(EXPAND, { reason: "x", current_size: 1, requested_size: 2, bogus: 1 });
    expect(res.status).toBe(400);
    const body = res.body as ConnectErrorBody;
    expect(body.code).toBe("invalid_argument");
    expect(violatedFields(body)).toEqual(["bogus"]);
    expect(JSON.stringify(debugOf(body, "google.rpc.BadRequest"))).toContain("requested_size");
    const info = debugOf(body, "google.rpc.ErrorInfo") as { metadata: Record<string, string> } | undefined;
    expect(info?.metadata["trace_id"]).toBe(res.headers.get("x-trace-id"));
  });

  it("names a mistyped field and a field misspelt inside a list", async () => {
    const typed = await post(EXPAND, { reason: "x", current_size: "five", requested_size: 2 });
    expect(typed.status).toBe(400);
    expect(violatedFields(typed.body as ConnectErrorBody)).toEqual(["current_size"]);
    const broken = await postRaw(EXPAND, "{not json");
    expect(broken.status).toBe(400);
    expect(violatedFields(broken.body as ConnectErrorBody)).toEqual(["request"]);
  });

  it("reports a missing reason as a violation on reason", async () => {
    const res = await post(EXPAND, { current_size: 1, requested_size: 2 });
    expect(res.status).toBe(400);
    const body = res.body as ConnectErrorBody;
    expect(body.code).toBe("invalid_argument");
    expect(violatedFields(body)).toEqual(["reason"]);
  });

  it("rejects an unknown x-account-type with a violation on x-account-type", async () => {
    const res = await post(HANDOFF, handoffJson, { "x-account-type": "robot" });
    expect(res.status).toBe(400);
    const body = res.body as ConnectErrorBody;
    expect(body.code).toBe("invalid_argument");
    expect(violatedFields(body)).toEqual(["x-account-type"]);
  });

  it("joins the caller's W3C trace: x-trace-id and the rpc log line carry the traceparent's trace id", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await post(HANDOFF, handoffJson, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      "x-account-id": "acct-plain-http",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-trace-id")).toBe(traceId);

    // The interceptor logs before it returns the response, so the line is there.
    const line = server.logs.find((l) => l.msg === "rpc" && l["trace_id"] === traceId);
    expect(line).toEqual(
      expect.objectContaining({ rpc: HANDOFF, code: "OK", ms: expect.any(Number), account: "acct-plain-http" }),
    );
  });
});

describe("plain HTTP routes on the RPC port", () => {
  it("answers GET /healthz with ok", async () => {
    const res = await fetch(`${server.baseUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("answers GET /readyz with ready while serving", async () => {
    const res = await fetch(`${server.baseUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(expect.objectContaining({ status: "ready" }));
  });

  it("counts a finished RPC in GET /metrics by rpc and code", async () => {
    expect((await post(HANDOFF, handoffJson)).status).toBe(200);
    const res = await fetch(`${server.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(await res.text()).toContain(`contextloader_rpc_requests_total{rpc="${HANDOFF}",code="OK"}`);
  });

  it("answers an unknown path with a 404 JSON body", async () => {
    const res = await fetch(`${server.baseUrl}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual(expect.objectContaining({ error: "not found" }));
  });

  it("answers POST /healthz with 405 allowing GET", async () => {
    const res = await fetch(`${server.baseUrl}/healthz`, { method: "POST" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    await res.body?.cancel();
  });
});
