import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { type Answer, callFails, callOk, connectHttp, fieldsOf, read } from "./mcp-client";

/**
 * The MCP tool `recall`: the recall agent in one tools/call, its handoff in
 * the compact shape, and — when the call carries a progressToken — each step
 * as notifications/progress before the result: over Streamable HTTP (then an
 * event stream) and over stdio.
 */

const DB = {
  memory_key: "db_config_prod",
  memory_type: "project_fact",
  summary: "生产环境 PostgreSQL 数据库配置",
  content: "生产库 host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200",
};
const SECRET = {
  memory_key: "billing_token",
  memory_type: "credential",
  summary: "计费系统接口的口令",
  content: "billing-api 的 token 是 sk-live-0000",
  keywords: [{ keyword: "口令", weight: 1 }],
  sensitive: true,
};
const TALK = [{ role: "user", content: "帮我把新的报表服务接到生产库上，按照我之前的数据库配置来" }];
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

interface Progress {
  progressToken: string | number;
  progress: number;
  message?: string;
}

/** The JSON-RPC messages of an event stream body, in order. */
function sseMessages(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("data:"))
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);
}

describe("MCP tool recall over Streamable HTTP", () => {
  let server: TestServer;
  let client: Client;
  const owner = `u-mcp-recall-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    server = await startServer();
    client = await connectHttp(server.baseUrl, { "x-account-id": owner });
    await callOk(client, "store_memory", DB);
    await callOk(client, "store_memory", SECRET);
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it("answers the handoff in the compact shape (TOON by default), the memories as one table", async () => {
    const answer = await callOk(client, "recall", { messages: TALK });
    expect(answer).toMatchObject({
      strategy: "deterministic",
      relevant_memory_keys: ["db_config_prod"],
      needs_more_info: false,
      iteration_used: 1,
      context_window_used: 1,
      llm_calls: 0,
      tool_errors: 0,
    });
    expect(answer["confidence"]).toBeGreaterThanOrEqual(0.5);
    const memories = answer["memories"] as Answer[];
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({
      memory_key: "db_config_prod",
      content: DB.content,
      memory_type: "project_fact",
    });
    expect(memories[0]).not.toHaveProperty("redacted");
    const json = await callOk(client, "recall", { messages: TALK, output_format: "json" });
    expect(json).toEqual(answer);
  });

  it("sends each step as notifications/progress before the result when the client asks", async () => {
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", server.baseUrl), {
      requestInit: { headers: { "x-account-id": owner } },
    });
    const progressClient = new Client({ name: "recall-progress-tests", version: "1.0.0" });
    await progressClient.connect(transport);
    // Every message as it arrives (see the stdio test below: onprogress may miss the ones read with the result).
    const received: Record<string, unknown>[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (m) => {
      received.push(m as Record<string, unknown>);
      deliver?.(m);
    };
    try {
      const result = await progressClient.callTool(
        { name: "recall", arguments: { messages: TALK, output_format: "json" } },
        CallToolResultSchema,
        { onprogress: () => undefined },
      );
      const answer = JSON.parse((result.content as { text: string }[])[0]!.text) as Answer;
      expect(answer["relevant_memory_keys"]).toEqual(["db_config_prod"]);
      const answered = received.findLastIndex((m) => "result" in m);
      const progress = received
        .map((m, i) => ({ m, i }))
        .filter(({ m }) => m["method"] === "notifications/progress")
        .map(({ m, i }) => ({ ...(m["params"] as Progress), i }));
      expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(progress.every((p) => p.i < answered)).toBe(true);
      const messages = progress.map((p) => p.message ?? "");
      // In the caller's language (English by default).
      expect(messages[0]).toBe("iteration 1/3: reading the newest 1 message (of 1)");
      expect(messages[1]).toMatch(/^calling search_memories \{"query":".*数据库/);
      expect(messages[2]).toMatch(/^search_memories → 1 result, the most relevant db_config_prod \(0\.\d+\)$/);
      expect(messages).toContain("get_memory_detail → db_config_prod: 生产环境 PostgreSQL 数据库配置");
      expect(messages.at(-1)).toMatch(/^handoff → 1 relevant memory, confidence/);
    } finally {
      await progressClient.close();
    }
  });

  it("answers a progress request as an event stream: progress notifications, then the result; JSON otherwise", async () => {
    const call = (meta: Record<string, unknown> | undefined) =>
      fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, "x-account-id": owner },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "tools/call",
          params: {
            name: "recall",
            arguments: { messages: TALK, output_format: "json" },
            ...(meta ? { _meta: meta } : {}),
          },
        }),
      });
    const plain = await call(undefined);
    expect(plain.headers.get("content-type")).toBe("application/json");
    const streamed = await call({ progressToken: "tok-1" });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("content-type")).toBe("text/event-stream");
    expect(streamed.headers.get("x-trace-id")).toMatch(/^[0-9a-f]{32}$/);
    const messages = sseMessages(await streamed.text());
    const notes = messages.filter((m) => m["method"] === "notifications/progress");
    expect(notes.length).toBeGreaterThanOrEqual(6);
    for (const n of notes) expect((n["params"] as Progress).progressToken).toBe("tok-1");
    const last = messages.at(-1)!;
    expect(last["id"]).toBe(7);
    const text = (last["result"] as { content: { text: string }[] }).content[0]!.text;
    expect((JSON.parse(text) as Answer)["relevant_memory_keys"]).toEqual(["db_config_prod"]);
  });

  it("withholds a sensitive memory's content unless x-account-scopes carries memories:sensitive", async () => {
    const talk = [{ role: "user", content: "计费系统接口的口令是什么来着" }];
    const withheld = (await callOk(client, "recall", { messages: talk, output_format: "json" }))[
      "memories"
    ] as Answer[];
    expect(withheld.find((m) => m["memory_key"] === "billing_token")).toMatchObject({ redacted: true });
    expect(JSON.stringify(withheld)).not.toContain("sk-live");
    const permitted = await connectHttp(server.baseUrl, {
      "x-account-id": owner,
      "x-account-scopes": "memories:sensitive",
    });
    try {
      const shown = (await callOk(permitted, "recall", { messages: talk, output_format: "json" }))[
        "memories"
      ] as Answer[];
      expect(shown.find((m) => m["memory_key"] === "billing_token")).toMatchObject({ content: SECRET.content });
    } finally {
      await permitted.close();
    }
  });

  it("refuses bad arguments naming them", async () => {
    const e = await callFails(client, "recall", {
      messages: [{ role: "robot", content: "x" }],
      max_searches_per_iteration: 5,
    });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(fieldsOf(e)).toEqual(["messages[0].role", "max_searches_per_iteration"]);
  });
});

describe("MCP tool recall with an LLM: a client that goes away ends the recall", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl });
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
  });

  it("aborts the LLM request in flight and calls nothing more when the HTTP client disconnects mid-stream", async () => {
    const owner = `u-mcp-cancel-${randomUUID().slice(0, 8)}`;
    const client = await connectHttp(server.baseUrl, { "x-account-id": owner });
    await callOk(client, "store_memory", DB);
    await client.close();
    llm.queue(
      { toolCalls: [{ name: "search_memories", arguments: { query: "数据库配置" } }] },
      {
        toolCalls: [{ name: "handoff", arguments: { reason: "r", search_summary: "s", confidence: 0.9 } }],
        delayMs: 4000,
      },
    );
    const before = llm.requests.length;
    const logsBefore = server.logs.length;
    const controller = new AbortController();
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      signal: controller.signal,
      headers: { ...MCP_HEADERS, "x-account-id": owner },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "recall", arguments: { messages: TALK }, _meta: { progressToken: 1 } },
      }),
    });
    const reader = res.body!.getReader();
    let seen = "";
    while (!seen.includes("search_memories →")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${seen}`);
      seen += new TextDecoder().decode(value);
    }
    controller.abort();
    const end = Date.now() + 3000;
    while (llm.aborted.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(llm.aborted).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(llm.requests.length - before).toBe(2);
    // A client going away is not our failure: nothing at warn or error level, no stack (any client could fill the log).
    const loud = server.logs.slice(logsBefore).filter((l) => (l.level ?? 0) >= 40);
    expect(loud.map((l) => l.msg)).toEqual([]);
  });
});

describe("MCP tool recall over stdio", () => {
  it("reports progress and redacts by MCP_ACCOUNT_SCOPES", async () => {
    const transport = new StdioClientTransport({
      command: "npm",
      args: ["run", "--silent", "mcp:stdio"],
      cwd: fileURLToPath(new URL("../..", import.meta.url)),
      env: {
        SQLITE_PATH: ":memory:",
        LOG_LEVEL: "warn",
        MCP_ACCOUNT_ID: "u-stdio",
        MCP_ACCOUNT_SCOPES: "memories:sensitive",
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "recall-stdio-tests", version: "1.0.0" });
    await client.connect(transport);
    // Every message as it arrives: the SDK client hands notifications to their handlers a tick after it
    // reads them but settles a response at once, so progress read in one chunk with the result never
    // reaches onprogress. What the server sent, and in which order, is what this checks.
    const received: Record<string, unknown>[] = [];
    const deliver = transport.onmessage;
    transport.onmessage = (m) => {
      received.push(m as Record<string, unknown>);
      deliver?.(m);
    };
    try {
      await callOk(client, "store_memory", DB);
      await callOk(client, "store_memory", SECRET);
      const result = await client.callTool(
        { name: "recall", arguments: { messages: [{ role: "user", content: "计费系统接口的口令是什么来着" }] } },
        CallToolResultSchema,
        { onprogress: () => undefined },
      );
      const answer = read((result.content as { text: string }[])[0]!.text);
      expect(answer["relevant_memory_keys"]).toContain("billing_token");
      // The scope was granted through the environment: the content is shown.
      expect((answer["memories"] as Answer[]).find((m) => m["memory_key"] === "billing_token")).toMatchObject({
        content: SECRET.content,
      });
      // The recall's result: the last response read.
      const answered = received.findLastIndex((m) => "result" in m);
      const progress = received
        .map((m, i) => ({ m, i }))
        .filter(({ m }) => m["method"] === "notifications/progress")
        .map(({ m, i }) => ({ ...(m["params"] as Progress), i }));
      expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(progress.every((p) => p.i < answered)).toBe(true);
      expect(progress[0]!.message).toMatch(/^第 1\/3 轮/);
      expect(progress.at(-1)!.message).toMatch(/^handoff → 1 条相关记忆/);
    } finally {
      await client.close();
    }
  }, 30_000);
});
