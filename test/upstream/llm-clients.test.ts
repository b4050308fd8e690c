import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolError } from "../../src/errors/tool-error";
import { openAiEmbedder } from "../../src/upstream/embeddings";
import { LlmClient } from "../../src/upstream/llm-client";
import { cosine } from "../../src/upstream/local-embedder";
import { httpReranker } from "../../src/upstream/reranker";
import { testContext } from "../helpers/call-context";
import { type Reply, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";

let llm: ScriptedLlm;
beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(() => llm.close());

/**
 * 300 ms where a test is about timeouts (the scripted answers wait 400-600 ms); otherwise long
 * enough that a loaded machine's first request (a new connection, modules still loading) is not
 * taken for a timeout and retried.
 */
const client = (timeoutMs = 5000) =>
  new LlmClient({ baseUrl: llm.baseUrl, apiKey: "sk-test", model: "test-model", timeoutMs });
/** The ToolError a client call failed with (test/helpers/rpc.ts `failure` is for RPCs, which fail with a ConnectError). */
const toolError = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as ToolError,
  );

describe("LLM client (OpenAI-compatible chat completions)", () => {
  it("asks for a JSON object with the key and model and returns the answer", async () => {
    llm.queue({ content: '{"ok":true}' });
    const before = llm.requests.length;
    const out = await client().complete(testContext(), [{ role: "user", content: "hi" }], { json: true });
    expect(out).toMatchObject({ content: '{"ok":true}', attempts: 1, model: "test-model" });
    const req = llm.requests[before]!;
    expect(req.response_format).toEqual({ type: "json_object" });
    expect(req.headers.authorization).toBe("Bearer sk-test");
    expect(req.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("offers function tools and returns the calls the model made, arguments as it wrote them", async () => {
    llm.queue({
      toolCalls: [
        { id: "c1", name: "search_memories", arguments: { query: "数据库配置" } },
        { name: "handoff", arguments: "{not json" },
      ],
    });
    const before = llm.requests.length;
    const tool = { name: "search_memories", description: "搜索", parameters: { type: "object", properties: {} } };
    const out = await client().chat(testContext(), [{ role: "user", content: "按照之前的数据库配置来" }], [tool], {
      toolChoice: "required",
    });
    expect(out.content).toBe("");
    expect(out.toolCalls).toEqual([
      { id: "c1", name: "search_memories", arguments: '{"query":"数据库配置"}' },
      { id: expect.any(String), name: "handoff", arguments: "{not json" },
    ]);
    const req = llm.requests[before]!;
    expect(req.tools).toEqual([{ type: "function", function: tool }]);
    expect(req.tool_choice).toBe("required");
  });

  it("sends the conversation back with the assistant's calls and each call's result", async () => {
    llm.queue({ content: "完成" });
    const before = llm.requests.length;
    const out = await client().chat(
      testContext(),
      [
        { role: "user", content: "q" },
        { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "search_memories", arguments: "{}" }] },
        { role: "tool", tool_call_id: "c1", content: "total_found: 0" },
      ],
      [],
    );
    expect(out).toMatchObject({ content: "完成", toolCalls: [] });
    expect(llm.requests[before]!.messages).toEqual([
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "search_memories", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "total_found: 0" },
    ]);
  });

  it("retries 429 and 5xx at most twice, 100 ms then 200 ms apart", async () => {
    llm.queue({ status: 429, body: '{"error":"rate"}' }, { status: 503, body: "busy" }, { content: "done" });
    const before = llm.requests.length;
    const out = await client().complete(testContext(), [{ role: "user", content: "x" }]);
    expect(out.content).toBe("done");
    expect(out.attempts).toBe(3);
    const [a, b, c] = llm.requests.slice(before).map((r) => r.at);
    expect(b! - a!).toBeGreaterThanOrEqual(95);
    expect(c! - b!).toBeGreaterThanOrEqual(195);
  });

  it.each([
    [
      "gives up after three attempts with UNAVAILABLE",
      [
        { status: 500, body: "a" },
        { status: 500, body: "b" },
        { status: 500, body: "c" },
      ],
      { code: "unavailable", reason: "LLM_UNAVAILABLE" },
      3,
    ],
    [
      "does not retry a request the LLM refuses (4xx other than 429)",
      [{ status: 401, body: '{"error":"bad key"}' }],
      { code: "failed_precondition", reason: "LLM_REJECTED", message: expect.stringContaining("LLM_API_KEY") },
      1,
    ],
    [
      "gives up on an endpoint that keeps timing out with DEADLINE_EXCEEDED LLM_TIMEOUT",
      [
        { delayMs: 600, content: "late" },
        { delayMs: 600, content: "late" },
        { delayMs: 600, content: "late" },
      ],
      { code: "deadline_exceeded", reason: "LLM_TIMEOUT", message: "the LLM did not answer within 300 ms" },
      3,
    ],
    [
      "does not retry a body that is not a chat completion (LLM_BAD_RESPONSE, without its text)",
      [{ body: "<html>  gateway\n page </html>" }],
      {
        code: "unavailable",
        reason: "LLM_BAD_RESPONSE",
        message: "the LLM endpoint answered HTTP 200 with a body this service cannot read",
      },
      1,
    ],
  ] as [string, Reply[], Partial<ToolError>, number][])("%s", async (_what, replies, error, calls) => {
    llm.queue(...replies);
    const before = llm.requests.length;
    const err = await toolError(client(300).complete(testContext(), [{ role: "user", content: "x" }]));
    expect(err).toBeInstanceOf(ToolError);
    expect(err).toMatchObject(error);
    expect(llm.requests.length - before).toBe(calls);
  });

  it("retries a timeout", async () => {
    llm.queue({ delayMs: 600, content: "slow" }, { content: "fast" });
    const out = await client(300).complete(testContext(), [{ role: "user", content: "x" }]);
    expect(out).toMatchObject({ content: "fast", attempts: 2 });
  });

  it("rethrows the caller's abort as it came, not as an LLM failure", async () => {
    llm.queue({ delayMs: 400, content: "late" });
    const caller = new AbortController();
    const reason = new Error("the caller went away");
    setTimeout(() => caller.abort(reason), 50);
    await expect(
      client(300).complete(testContext({ signal: caller.signal }), [{ role: "user", content: "x" }]),
    ).rejects.toBe(reason);
  });

  it("stops when the caller's deadline is shorter than the timeout", async () => {
    llm.queue({ delayMs: 400, content: "late" }, { delayMs: 400, content: "late" }, { delayMs: 400, content: "late" });
    const deadline = Date.now() + 150;
    const ctx = testContext({ remainingMs: () => deadline - Date.now() });
    const err = await toolError(client(300).complete(ctx, [{ role: "user", content: "x" }]));
    expect(err).toBeInstanceOf(ToolError);
    // Cut at what the caller had left, not at the client's 300 ms: an outcome, whatever the machine's load.
    const budgetMs = Number(/^the LLM did not answer within (\d+) ms$/.exec(err?.message ?? "")?.[1]);
    expect(budgetMs).toBeLessThanOrEqual(150);
  });
});

describe("embeddings and reranker clients", () => {
  it("embeds through an OpenAI-compatible endpoint, normalised and in input order", async () => {
    const embedder = openAiEmbedder({ baseUrl: llm.baseUrl, apiKey: undefined, model: "emb", timeoutMs: 10_000 });
    const [a, b, c] = await embedder.embed(testContext(), ["上气道梗阻", "上、下气道梗阻", "糖尿病"]);
    expect(cosine(a!, a!)).toBeCloseTo(1, 5);
    expect(cosine(a!, b!)).toBeGreaterThan(cosine(a!, c!));
  });

  it("scores documents with the platform's reranker protocol", async () => {
    const reranker = httpReranker({ url: llm.rerankUrl, model: "rr", apiKey: undefined, timeoutMs: 10_000 });
    const scores = await reranker.rerank(testContext(), "疾病症状", ["疾病 症状 has_symptom", "药品 剂型"]);
    expect(scores[0]).toBeGreaterThan(scores[1]!);
  });

  it("reports an HTTP error of the embeddings endpoint as EMBEDDINGS_UNAVAILABLE", async () => {
    const embedder = openAiEmbedder({
      baseUrl: `${llm.baseUrl}/missing`,
      apiKey: undefined,
      model: "emb",
      timeoutMs: 2000,
    });
    const err = await toolError(embedder.embed(testContext(), ["a"]));
    expect(err).toMatchObject({
      code: "unavailable",
      reason: "EMBEDDINGS_UNAVAILABLE",
      message: "the embeddings endpoint answered HTTP 404",
    });
  });

  it("reports an unreachable reranker as UNAVAILABLE", async () => {
    const reranker = httpReranker({ url: "http://127.0.0.1:1/rerank", model: "rr", apiKey: undefined, timeoutMs: 500 });
    const err = await toolError(reranker.rerank(testContext(), "q", ["d"]));
    expect(err).toMatchObject({ code: "unavailable", reason: "RERANKER_UNAVAILABLE" });
  });
});

describe("a reranker that misbehaves", () => {
  // A scripted chat endpoint of its own plays the reranker: its queue is not shared with the tests above.
  let endpoint: ScriptedLlm;
  beforeAll(async () => {
    endpoint = await startScriptedLlm();
  });
  afterAll(() => endpoint.close());
  const reranker = (timeoutMs: number) =>
    httpReranker({ url: `${endpoint.baseUrl}/chat/completions`, model: "rr", apiKey: undefined, timeoutMs });

  it("reports a slow reranker as DEADLINE_EXCEEDED RERANKER_TIMEOUT", async () => {
    endpoint.queue({ delayMs: 500, content: "late" });
    const err = await toolError(reranker(100).rerank(testContext(), "q", ["d"]));
    expect(err).toMatchObject({
      code: "deadline_exceeded",
      reason: "RERANKER_TIMEOUT",
      message: expect.stringMatching(/^the reranker timed out after \d+ ms$/),
    });
  });

  it("reports a reranker answer without results as RERANKER_UNAVAILABLE", async () => {
    endpoint.queue({ content: "not a ranking" });
    const err = await toolError(reranker(2000).rerank(testContext(), "q", ["d"]));
    expect(err).toMatchObject({ code: "unavailable", reason: "RERANKER_UNAVAILABLE" });
    expect(err!.message).toBe("the reranker answered HTTP 200 with a body this service cannot read");
  });
});
