import { afterEach, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server";
import { KN } from "./mcp-client";

/**
 * A JSON-RPC batch over POST /mcp: each tools/call in it waits for its own
 * admission slot, so a batch of a hundred calls is a hundred turns in the
 * queue, shared fairly with other callers, not one turn that runs them all.
 */

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

interface RpcAnswer {
  id: number;
  result?: { isError?: boolean; content: { text: string }[] };
  error?: { code: number; message: string };
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function batch(n: number, tool = "kn_search"): string {
  const args = tool === "kn_search" ? { query: "上气道梗阻", kn_ids: KN, only_schema: true } : {};
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: tool, arguments: args },
    })),
  );
}

async function postBatch(s: TestServer, body: string, account: string): Promise<RpcAnswer[]> {
  const res = await fetch(`${s.baseUrl}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, "x-account-id": account },
    body,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as RpcAnswer[];
}

describe("MCP JSON-RPC batches", () => {
  it("answers every call of a batch, each under its own id", async () => {
    server = await startServer();
    const answers = await postBatch(server, batch(20), "u-batch");
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const a of answers) expect(a.result?.isError, a.result?.content[0]?.text).toBeFalsy();
  });

  it("admits each call of a batch on its own: past the queue's room the rest are refused OVERLOADED, as separate calls would be", async () => {
    server = await startServer({ ADMISSION_MAX_IN_FLIGHT: "1", ADMISSION_MAX_QUEUED: "8" });
    const answers = await postBatch(server, batch(30), "u-batch");
    expect(answers).toHaveLength(30);
    const refused = answers.filter((a) => a.result?.isError);
    const served = answers.filter((a) => a.result !== undefined && !a.result.isError);
    // One runs, at most half the queue (4) waits for this caller: the rest are refused at once, and say when to retry.
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(served.length).toBeLessThanOrEqual(5);
    expect(refused.length).toBe(30 - served.length);
    expect(refused[0]!.result!.content[0]!.text).toMatch(/^RESOURCE_EXHAUSTED \(OVERLOADED\): .*\nNext step: Retry/s);
  });

  it("lets another account's call through while a batch of 100 (the most the MCP SDK takes) waits its turns", async () => {
    server = await startServer({ LOG_LEVEL: "info" });
    const s = server;
    const toolLines = () => s.logs.filter((l) => l.msg === "mcp tool" && l["account"] === "u-flood").length;
    const flood = postBatch(s, batch(100), "u-flood");
    // Once the batch runs, another account's call...
    await expect.poll(toolLines, { interval: 5, timeout: 20_000 }).toBeGreaterThan(0);
    const other = await fetch(`${s.baseUrl}/contextloader.memrecall.v1.MemRecallService/ExpandContextWindow`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-other" },
      body: JSON.stringify({ reason: "need more", current_size: 10, requested_size: 20 }),
    });
    expect(other.status).toBe(200);
    // ...is answered before the batch's calls are all done: it waited for one of them, not for all.
    expect(toolLines()).toBeLessThan(100);
    expect(await flood).toHaveLength(100);
  });
});
