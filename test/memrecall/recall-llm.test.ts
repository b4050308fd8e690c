import { randomUUID } from "node:crypto";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService, type RecallResponse } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type Reply, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import {
  DB_CONFIG_TALK,
  events,
  FAR_BACK_TALK,
  handoffOf,
  MEMORIES,
  NOTHING_TALK,
  ofKind,
  outline,
} from "./recall-fixtures";

/**
 * Recall with an LLM (LLM_BASE_URL): the LLM drives the loop by function
 * calling. The scripted LLM is a real OpenAI-compatible server replaying the
 * tool calls of the spec's flows (4.1–4.3), arguments it gets wrong, a wider
 * window, the limits, failures, a cancel and deadlines; it records every
 * request, so each test also checks what the model was sent.
 */

type MemClient = Client<typeof MemRecallService>;

let llm: ScriptedLlm;
let server: TestServer;

/** A fresh account holding the fixture memories. */
async function account(
  srv: TestServer = server,
  language?: "en" | "zh",
): Promise<{ client: MemClient; owner: string }> {
  const owner = `u-llm-${randomUUID().slice(0, 8)}`;
  const client = clientWith(MemRecallService, srv.baseUrl, {
    "x-account-id": owner,
    ...(language ? { "accept-language": language } : {}),
  });
  for (const m of MEMORIES) await client.storeMemory(m);
  return { client, owner };
}

const call = (name: string, args: Record<string, unknown> | string): Reply => ({
  toolCalls: [{ name, arguments: args }],
});
const handoffCall = (keys: string[], extra: Record<string, unknown> = {}) =>
  call("handoff", {
    reason: "已找到相关记忆，搜索完成",
    search_summary: "找到用户之前的数据库配置",
    relevant_memory_keys: keys,
    confidence: 0.85,
    ...extra,
  });

/** The requests the LLM received from here on. */
function requestsFrom(start: number) {
  return () => llm.requests.slice(start);
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  llm = await startScriptedLlm();
  server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_TIMEOUT_MS: "5000" });
});
afterAll(async () => {
  await server?.close();
  await llm?.close();
});

describe("Recall, LLM strategy", () => {
  it("runs spec flow 4.1 as the model calls it, offering the five tools ListTools serves and sending each result back", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue(
      call("search_memories", { query: "用户之前的数据库配置", search_mode: "hybrid" }),
      call("get_memory_detail", { memory_key: "db_config_prod" }),
      handoffCall(["db_config_prod"]),
    );
    const stream = await events(client, { messages: DB_CONFIG_TALK });
    expect(outline(stream)).toEqual([
      "iteration 1 window 1",
      "call search_memories",
      "result search_memories ok",
      "call get_memory_detail",
      "result get_memory_detail ok",
      "call handoff",
      "result handoff ok",
      "handoff db_config_prod",
    ]);
    const handoff = handoffOf(stream);
    expect(handoff).toMatchObject({
      strategy: "llm",
      relevantMemoryKeys: ["db_config_prod"],
      confidence: 0.85,
      llmCalls: 3,
      searches: 1,
      toolErrors: 0,
      iterationUsed: 1,
      contextWindowUsed: 1,
    });
    expect(handoff.memories[0]).toMatchObject({ memoryKey: "db_config_prod", content: MEMORIES[0]!.content });
    expect(handoff.message).toContain("## Memory search complete (confidence: 85%)");
    const search = ofKind(stream, "toolCall")[0]!;
    expect(search.arguments).toEqual({ query: "用户之前的数据库配置", search_mode: "hybrid" });
    expect(ofKind(stream, "toolResult")[0]!.hits[0]!.memoryKey).toBe("db_config_prod");

    const requests = sent();
    expect(requests).toHaveLength(3);
    // The tools offered are ListTools' five definitions, as the RPC serves them.
    const listed = (await client.listTools({})).tools.map((t) => t.function);
    for (const r of requests) {
      expect(r.tool_choice).toBe("required");
      expect(r.tools?.map((t) => t.function)).toEqual(
        listed.map((f) => ({ name: f!.name, description: f!.description, parameters: f!.parameters })),
      );
    }
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(requests[0]!.messages[1]!.content).toContain(`[1] user：${DB_CONFIG_TALK[0]!.content}`);
    // Each call's result goes back as a tool message answering its id; the answer is the tool's compact one.
    const second = requests[1]!.messages;
    const callId = second[2]!.tool_calls![0]!.id;
    expect(second[3]).toMatchObject({ role: "tool", tool_call_id: callId });
    expect(second[3]!.content).toContain("db_config_prod");
    expect(requests[2]!.messages.at(-1)!.content).toContain(MEMORIES[0]!.content as string);
  });

  it("runs spec flow 4.2: a second search narrowed by memory_types and time_range_days", async () => {
    const { client } = await account();
    llm.queue(
      call("search_memories", { query: "上次说的方案", search_mode: "semantic", min_relevance_score: 0.1 }),
      call("search_memories", {
        query: "上次说的方案",
        memory_types: ["decision"],
        time_range_days: 7,
        min_relevance_score: 0.1,
      }),
      call("get_memory_detail", { memory_key: "plan_b" }),
      handoffCall(["plan_b"], { search_summary: "冷数据迁移选了方案 B", confidence: 0.8 }),
    );
    const stream = await events(client, {
      messages: [
        { role: "user", content: "下周要评审冷数据迁移" },
        { role: "assistant", content: "好的，需要准备什么？" },
        { role: "user", content: "把上次说的那个方案整理成一页纸" },
      ],
    });
    const searches = ofKind(stream, "toolResult").filter((r) => r.name === "search_memories");
    expect(searches).toHaveLength(2);
    expect(searches[1]!.hits.map((h) => h.memoryKey)).toEqual(["plan_b"]);
    expect(handoffOf(stream)).toMatchObject({ relevantMemoryKeys: ["plan_b"], searches: 2, iterationUsed: 1 });
  });

  it("runs spec flow 4.3: nothing found twice, then a handoff asking the user", async () => {
    const { client } = await account();
    llm.queue(
      call("search_memories", { query: "之前做的东西", search_mode: "semantic" }),
      call("search_memories", { query: "之前做的东西", min_relevance_score: 0.3, limit: 10 }),
      call("handoff", {
        reason: "未找到相关记忆",
        search_summary: "未找到用户提到的历史记忆",
        confidence: 0,
        needs_more_info: true,
        follow_up_question: "您能否提供更多细节，比如大概什么时间或什么主题？",
      }),
    );
    const stream = await events(client, { messages: NOTHING_TALK });
    expect(
      ofKind(stream, "toolResult")
        .filter((r) => r.name === "search_memories")
        .map((r) => r.hits),
    ).toEqual([[], []]);
    expect(handoffOf(stream)).toMatchObject({
      relevantMemoryKeys: [],
      confidence: 0,
      needsMoreInfo: true,
      followUpQuestion: "您能否提供更多细节，比如大概什么时间或什么主题？",
      memories: [],
    });
  });

  it("answers arguments the model gets wrong as tool errors it corrects: bad JSON, an unknown tool, a limit over 10, an unknown key", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue(
      {
        toolCalls: [
          { name: "search_memories", arguments: "{query: 数据库" },
          { name: "web_search", arguments: { q: "数据库" } },
          { name: "search_memories", arguments: { query: "数据库配置", limit: 50 } },
        ],
      },
      call("search_memories", { query: "数据库配置", limit: 5 }),
      handoffCall(["db_config_999"]),
      handoffCall(["db_config_prod"]),
    );
    const stream = await events(client, { messages: DB_CONFIG_TALK });
    const results = ofKind(stream, "toolResult");
    expect(results.map((r) => [r.name, r.ok, r.errorReason])).toEqual([
      ["search_memories", false, "INVALID_ARGUMENT"],
      ["web_search", false, "UNKNOWN_TOOL"],
      ["search_memories", false, "INVALID_ARGUMENT"],
      ["search_memories", true, ""],
      ["handoff", false, "INVALID_ARGUMENT"],
      ["handoff", true, ""],
    ]);
    expect(ofKind(stream, "toolCall")[0]).toMatchObject({ unparsedArguments: "{query: 数据库", arguments: {} });
    expect(results[2]!.errorMessage).toContain("limit");
    expect(results[4]!.errorMessage).toContain("db_config_999");
    expect(handoffOf(stream)).toMatchObject({ relevantMemoryKeys: ["db_config_prod"], toolErrors: 4, llmCalls: 4 });
    // The model was told what was wrong, in the tool message answering each call.
    const told = sent()[1]!
      .messages.filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(told).toHaveLength(3);
    expect(told[0]).toContain("not a JSON object");
    expect(told[1]).toContain("search_memories, get_memory_detail");
    expect(told[2]).toContain("limit: must be between 1 and 10");
  });

  it("ends the iteration on an approved expand_context_window and reads the wider window in the next (calls after it are not run)", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue(
      {
        toolCalls: [
          {
            name: "expand_context_window",
            arguments: { reason: "需要更早的对话", current_size: 5, requested_size: 10 },
          },
          { name: "search_memories", arguments: { query: "never run" } },
        ],
      },
      call("search_memories", { query: "ETA 模型 目标误差" }),
      handoffCall(["eta_model"], { search_summary: "ETA 模型的目标 MAE 小于 2 小时" }),
    );
    const stream = await events(client, { messages: FAR_BACK_TALK, contextWindow: 5 });
    expect(outline(stream)).toEqual([
      "iteration 1 window 5",
      "call expand_context_window",
      "result expand_context_window ok",
      "expanded 5->9",
      "iteration 2 window 9",
      "call search_memories",
      "result search_memories ok",
      "call handoff",
      "result handoff ok",
      "handoff eta_model",
    ]);
    expect(ofKind(stream, "windowExpanded")[0]).toMatchObject({ iteration: 1, reason: "需要更早的对话" });
    expect(handoffOf(stream)).toMatchObject({ iterationUsed: 2, contextWindowUsed: 9 });
    const [first, second] = sent();
    // Each iteration is a fresh conversation with its own window.
    expect(first!.messages[1]!.content).not.toContain("说一下 ETA 模型的事");
    expect(first!.messages[1]!.content).toContain("[5] user：谢谢");
    expect(second!.messages).toHaveLength(2);
    expect(second!.messages[1]!.content).toContain("[1] user：说一下 ETA 模型的事");
    expect(second!.messages[1]!.content).toContain("第 2/3 轮");
  });

  it("refuses a wider window at the last iteration (spec §2.4) and keeps to the searches an iteration allows", async () => {
    // In Chinese, the spec's own words.
    const { client } = await account(server, "zh");
    llm.queue(
      call("expand_context_window", { reason: "更早的对话", current_size: 3, requested_size: 5 }),
      {
        toolCalls: [
          { name: "search_memories", arguments: { query: "ETA" } },
          { name: "search_memories", arguments: { query: "模型" } },
          { name: "search_memories", arguments: { query: "误差" } },
        ],
      },
      call("expand_context_window", { reason: "还要更早", current_size: 5, requested_size: 9 }),
      handoffCall(["eta_model"]),
    );
    const stream = await events(client, {
      messages: FAR_BACK_TALK,
      contextWindow: 3,
      maxIterations: 2,
      maxSearchesPerIteration: 2,
    });
    const results = ofKind(stream, "toolResult");
    expect(results.map((r) => [r.name, r.ok, r.errorReason])).toEqual([
      ["expand_context_window", true, ""],
      ["search_memories", true, ""],
      ["search_memories", true, ""],
      ["search_memories", false, "SEARCH_LIMIT_REACHED"],
      ["expand_context_window", true, ""],
      ["handoff", true, ""],
    ]);
    expect(results[4]).toMatchObject({ approved: false, newSize: 5 });
    expect(results[4]!.summary).toContain("已达到最大迭代次数 (2)");
    expect(ofKind(stream, "windowExpanded")).toHaveLength(1);
    expect(handoffOf(stream)).toMatchObject({ iterationUsed: 2, searches: 2, toolErrors: 1 });
  });

  it("stops a model that never hands off: at most six requests an iteration, the last offering only handoff", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue(
      ...Array.from({ length: 6 }, (_, i) =>
        call("get_memory_detail", { memory_key: i === 0 ? "db_config_prod" : "plan_b" }),
      ),
    );
    // It opened memories by key but never searched: with no result to fall back on, the recall fails.
    const err = await failure(events(client, { messages: DB_CONFIG_TALK, maxIterations: 1 }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.message).toContain("the LLM never called handoff");
    const requests = sent();
    expect(requests).toHaveLength(6);
    expect(requests[4]!.tools).toHaveLength(5);
    expect(requests[5]!.tools?.map((t) => t.function.name)).toEqual(["handoff"]);
    expect(requests[5]!.messages.at(-1)!.content).toContain("现在调用 handoff");
  });

  it("hands off the best results found, asking the user, when a model that searched never hands off", async () => {
    const { client } = await account();
    llm.queue(...Array.from({ length: 6 }, () => call("search_memories", { query: "生产 数据库 配置" })));
    const handoff = handoffOf(await events(client, { messages: DB_CONFIG_TALK, maxIterations: 1 }));
    expect(handoff).toMatchObject({ needsMoreInfo: true, llmCalls: 6, searches: 3, toolErrors: 3 });
    expect(handoff.relevantMemoryKeys[0]).toBe("db_config_prod");
  });
});

describe("Recall when the LLM fails (spec §5.1: retry once)", () => {
  it("retries a failed request once, then ends with UNAVAILABLE when nothing was found", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue({ status: 500, body: '{"error":"boom"}' }, { status: 503, body: "overloaded" });
    const err = await failure(events(client, { messages: DB_CONFIG_TALK }));
    expect(err.code).toBe(Code.Unavailable);
    const info = err.findDetails(ErrorInfoSchema)[0]!;
    expect(info.reason).toBe("RECALL_LLM_FAILED");
    expect(info.metadata["llm_reason"]).toBe("LLM_UNAVAILABLE");
    expect(sent()).toHaveLength(2);
  });

  it("treats an answer without a tool call as a failure: retried once, then UNAVAILABLE", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue({ content: "我觉得是数据库配置" }, { body: "not json at all" });
    const err = await failure(events(client, { messages: DB_CONFIG_TALK }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.message).toContain("LLM_BAD_RESPONSE");
    expect(sent()).toHaveLength(2);
  });

  it("recovers when the retry succeeds", async () => {
    const { client } = await account();
    llm.queue(
      { status: 500, body: "{}" },
      call("search_memories", { query: "数据库配置" }),
      handoffCall(["db_config_prod"]),
    );
    const handoff = handoffOf(await events(client, { messages: DB_CONFIG_TALK }));
    expect(handoff).toMatchObject({ relevantMemoryKeys: ["db_config_prod"], llmCalls: 3 });
  });

  it("hands off what was found, asking the user, when the LLM fails after a search", async () => {
    const { client } = await account();
    llm.queue(
      call("search_memories", { query: "生产 数据库 配置" }),
      { status: 500, body: "{}" },
      { status: 500, body: "{}" },
    );
    const stream = await events(client, { messages: DB_CONFIG_TALK });
    const handoff = handoffOf(stream);
    expect(handoff).toMatchObject({ strategy: "llm", needsMoreInfo: true, llmCalls: 3 });
    expect(handoff.relevantMemoryKeys[0]).toBe("db_config_prod");
    expect(handoff.reason).toContain("the recall could not finish normally");
    expect(handoff.followUpQuestion).toContain("db_config_prod");
    expect(handoff.confidence).toBeLessThanOrEqual(0.5);
  });

  it("stops a model whose calls keep failing (five tool errors)", async () => {
    const { client } = await account();
    const sent = requestsFrom(llm.requests.length);
    llm.queue(...Array.from({ length: 5 }, () => call("search_memories", { limit: 3 })));
    const err = await failure(events(client, { messages: DB_CONFIG_TALK }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.message).toContain("5 of the LLM's tool calls were refused");
    expect(sent()).toHaveLength(5);
  });
});

describe("Recall ends at once when the caller cancels or its deadline passes", () => {
  const cancelled = [
    [
      "Connect over HTTP/1.1",
      (baseUrl: string, owner: string) => clientWith(MemRecallService, baseUrl, { "x-account-id": owner }),
    ],
    [
      "gRPC over h2c",
      (baseUrl: string, owner: string) =>
        createClient(
          MemRecallService,
          createGrpcTransport({
            baseUrl,
            interceptors: [
              (next) => (req) => {
                req.header.set("x-account-id", owner);
                return next(req);
              },
            ],
          }),
        ),
    ],
  ] as const;

  for (const [protocol, make] of cancelled) {
    it(`aborts the LLM request in flight and calls nothing more after a cancel (${protocol})`, async () => {
      const { owner } = await account();
      const client = make(server.baseUrl, owner);
      const before = llm.requests.length;
      const abortedBefore = llm.aborted.length;
      llm.queue(call("search_memories", { query: "数据库配置" }), {
        ...handoffCall(["db_config_prod"]),
        delayMs: 4000,
      });
      const controller = new AbortController();
      const seen: RecallResponse[] = [];
      const ended = (async () => {
        for await (const e of client.recall({ messages: DB_CONFIG_TALK }, { signal: controller.signal })) {
          seen.push(e);
          if (e.event.case === "toolResult") controller.abort();
        }
      })().catch((err: unknown) => ConnectError.from(err));
      const err = await ended;
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Canceled);
      // The second request, waiting on the LLM, is abandoned by the server at once.
      await until(() => llm.aborted.length === abortedBefore + 1);
      expect(llm.requests.length - before).toBe(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(llm.requests.length - before).toBe(2);
      expect(seen.map((e) => e.event.case)).toEqual(["iterationStarted", "toolCall", "toolResult"]);
      await until(() =>
        server.logs.some(
          (l) =>
            l.msg === "rpc" &&
            l["rpc"] === "contextloader.memrecall.v1.MemRecallService/Recall" &&
            l["account"] === owner,
        ),
      );
      const line = server.logs.find(
        (l) => l.msg === "rpc" && l["account"] === owner && String(l["rpc"]).endsWith("/Recall"),
      );
      expect(line?.["code"]).toBe("CANCELED");
    });
  }

  it("ends with DEADLINE_EXCEEDED at the caller's deadline, the LLM request aborted and nothing called after", async () => {
    const { client } = await account();
    const before = llm.requests.length;
    const abortedBefore = llm.aborted.length;
    llm.queue({ ...call("search_memories", { query: "数据库配置" }), delayMs: 4000 });
    const started = Date.now();
    const err = await failure(events(client, { messages: DB_CONFIG_TALK }, { timeoutMs: 500 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
    // Before the LLM's answer at 4 s; wide, for a loaded machine.
    expect(Date.now() - started).toBeLessThan(3500);
    await until(() => llm.aborted.length === abortedBefore + 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(llm.requests.length - before).toBe(1);
  });
});

describe("Recall's own time budget (MEMRECALL_RECALL_TIMEOUT_MS)", () => {
  let budgeted: TestServer;
  beforeAll(async () => {
    budgeted = await startServer({ LLM_BASE_URL: llm.baseUrl, MEMRECALL_RECALL_TIMEOUT_MS: "800" });
  });
  afterAll(() => budgeted?.close());

  it("hands off what was found when the budget runs out, the LLM request aborted", async () => {
    const { client } = await account(budgeted);
    const abortedBefore = llm.aborted.length;
    llm.queue(call("search_memories", { query: "生产 数据库 配置" }), {
      ...handoffCall(["db_config_prod"]),
      delayMs: 4000,
    });
    const stream = await events(client, { messages: DB_CONFIG_TALK });
    const handoff = handoffOf(stream);
    expect(handoff).toMatchObject({ needsMoreInfo: true, strategy: "llm" });
    expect(handoff.reason).toContain("its 800 ms time budget ran out");
    expect(handoff.relevantMemoryKeys).toContain("db_config_prod");
    await until(() => llm.aborted.length === abortedBefore + 1);
  });

  it("ends with DEADLINE_EXCEEDED (RECALL_TIME_BUDGET) when nothing was found by then", async () => {
    const { client } = await account(budgeted);
    llm.queue({ ...call("search_memories", { query: "数据库配置" }), delayMs: 4000 });
    const err = await failure(events(client, { messages: DB_CONFIG_TALK }));
    expect(err.code).toBe(Code.DeadlineExceeded);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RECALL_TIME_BUDGET");
  });
});
