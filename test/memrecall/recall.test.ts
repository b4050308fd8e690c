import { randomUUID } from "node:crypto";
import { Code, createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { transports } from "../helpers/clients";
import { clientWith, failure } from "../helpers/rpc";
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
 * Recall without an LLM (the default): the deterministic strategy runs the
 * spec's loop (§4.1–4.3) and streams it, over every protocol.
 */

let server: TestServer;
const owner = `u-recall-${randomUUID().slice(0, 8)}`;
const headers = { "x-account-id": owner };

beforeAll(async () => {
  server = await startServer();
  const c = clientWith(MemRecallService, server.baseUrl, headers);
  for (const m of MEMORIES) await c.storeMemory(m);
});
afterAll(() => server.close());

const client = () => clientWith(MemRecallService, server.baseUrl, headers);

describe("Recall, deterministic strategy", () => {
  it("streams spec flow 4.1 in order over gRPC, gRPC-web and Connect (HTTP/1.1 and h2c), ending with one handoff", async () => {
    const seen = new Map<string, string[]>();
    for (const [name, transport] of Object.entries(transports(server.baseUrl))) {
      const stream = await events(createClient(MemRecallService, transport), { messages: DB_CONFIG_TALK }, { headers });
      expect(
        stream.map((e) => e.sequence),
        name,
      ).toEqual(stream.map((_, i) => i + 1));
      const elapsed = stream.map((e) => e.elapsedMs);
      expect(elapsed, name).toEqual([...elapsed].sort((a, b) => a - b));
      const handoff = handoffOf(stream);
      expect(handoff, name).toMatchObject({
        strategy: "deterministic",
        relevantMemoryKeys: ["db_config_prod"],
        needsMoreInfo: false,
        iterationUsed: 1,
        contextWindowUsed: 1,
        llmCalls: 0,
        toolErrors: 0,
      });
      expect(handoff.confidence, name).toBeGreaterThanOrEqual(0.5);
      expect(
        handoff.memories.map((m) => [m.memoryKey, m.content, m.redacted]),
        name,
      ).toEqual([["db_config_prod", MEMORIES[0]!.content, false]]);
      expect(handoff.memories[0]!.relevanceScore, name).toBe(handoff.confidence);
      expect(handoff.message, name).toContain("- db_config_prod");
      seen.set(name, outline(stream));
    }
    // The same steps whatever the protocol: an iteration, a search, the memory opened, the handoff.
    const expected = [
      "iteration 1 window 1",
      "call search_memories",
      "result search_memories ok",
      "call get_memory_detail",
      "result get_memory_detail ok",
      "call handoff",
      "result handoff ok",
      "handoff db_config_prod",
    ];
    for (const [name, lines] of seen) expect(lines, name).toEqual(expected);
  });

  it("pairs every tool call with its result and shows a search's hits as keys and scores, not content", async () => {
    const stream = await events(client(), { messages: DB_CONFIG_TALK });
    const calls = ofKind(stream, "toolCall");
    const results = ofKind(stream, "toolResult");
    expect(results.map((r) => r.callId)).toEqual(calls.map((c) => c.callId));
    expect(new Set(calls.map((c) => c.callId)).size).toBe(calls.length);
    const search = calls.find((c) => c.name === "search_memories")!;
    // The recall's own bar (0.3), not SearchMemories' default: it searches by a conversation's words.
    expect(search.arguments).toMatchObject({ search_mode: "hybrid", min_relevance_score: 0.3 });
    expect(String(search.arguments?.["query"])).toContain("数据库");
    const hits = results.find((r) => r.name === "search_memories")!.hits;
    expect(hits[0]).toMatchObject({ memoryKey: "db_config_prod" });
    expect(hits[0]!.relevanceScore).toBeGreaterThan(0.5);
    expect(JSON.stringify(results)).not.toContain("pg-prod.internal");
  });

  it("hands off that nothing was found, asking the user (spec flow 4.3), after a widened search", async () => {
    // In Chinese, the spec's own words (§4.3).
    const stream = await events(clientWith(MemRecallService, server.baseUrl, { ...headers, "accept-language": "zh" }), {
      messages: NOTHING_TALK,
    });
    const handoff = handoffOf(stream);
    expect(handoff).toMatchObject({
      relevantMemoryKeys: [],
      confidence: 0,
      needsMoreInfo: true,
      memories: [],
      strategy: "deterministic",
    });
    expect(handoff.followUpQuestion).toContain("您能否提供更多细节");
    expect(handoff.message).toContain("### 需要进一步澄清");
    const inEnglish = handoffOf(await events(client(), { messages: NOTHING_TALK }));
    expect(inEnglish.followUpQuestion).toContain("Could you give more details");
    expect(inEnglish.message).toContain("### Needs clarification");
  });

  it("takes one subject word as a finding when one memory clears the bar and stands out", async () => {
    const stream = await events(client(), { messages: [{ role: "user", content: "按之前的 ClickHouse 来" }] });
    const handoff = handoffOf(stream);
    expect(handoff.relevantMemoryKeys).toEqual(["plan_b"]);
    expect(handoff.needsMoreInfo).toBe(false);
    // Found by the first search, in the first iteration.
    expect(ofKind(stream, "toolCall").filter((c) => c.name === "search_memories")).toHaveLength(1);
  });

  it("searches the subject in the other language when the words typed find nothing", async () => {
    const someone = { "x-account-id": `u-recall-${randomUUID().slice(0, 8)}` };
    const c = clientWith(MemRecallService, server.baseUrl, someone);
    await c.storeMemory({
      memoryKey: "tbox_vendor",
      memoryType: "contact",
      summary: "T-Box 供应商对接人",
      content: "T-Box 供应商那边的对接人是陈立，手机 138-0000-4417。",
    });
    await c.storeMemory({ memoryKey: "lunch", memoryType: "personal", summary: "午饭", content: "周五中午吃面。" });
    const stream = await events(clientWith(MemRecallService, server.baseUrl, someone), {
      messages: [{ role: "user", content: "the supplier for our telematics unit, who do I call" }],
    });
    const searches = ofKind(stream, "toolCall").filter((t) => t.name === "search_memories");
    expect(searches.map((t) => String(t.arguments?.["query"]))).toContainEqual(expect.stringContaining("供应商"));
    expect(handoffOf(stream).relevantMemoryKeys).toEqual(["tbox_vendor"]);
  });

  it("does not take one subject word that fits two memories alike for either of them", async () => {
    const stream = await events(client(), { messages: [{ role: "user", content: "按之前的 PostgreSQL 来" }] });
    const handoff = handoffOf(stream);
    expect(handoff.relevantMemoryKeys).not.toEqual(["db_config_prod"]);
    expect(handoff.relevantMemoryKeys).not.toEqual(["db_config_staging"]);
  });

  it("widens the window when the subject is further back, ending the iteration (window_expanded) and finding it in the next", async () => {
    const stream = await events(client(), { messages: FAR_BACK_TALK });
    expect(ofKind(stream, "iterationStarted").map((i) => [i.iteration, i.windowSize, i.messagesTotal])).toEqual([
      [1, 5, 9],
      [2, 9, 9],
    ]);
    expect(ofKind(stream, "windowExpanded")).toEqual([
      expect.objectContaining({ iteration: 1, fromSize: 5, toSize: 9 }),
    ]);
    const expand = ofKind(stream, "toolResult").find((r) => r.name === "expand_context_window")!;
    expect(expand).toMatchObject({ ok: true, approved: true, newSize: 9 });
    // The expansion ends iteration 1: the next event starts iteration 2.
    const at = outline(stream).indexOf("expanded 5->9");
    expect(outline(stream)[at + 1]).toBe("iteration 2 window 9");
    expect(handoffOf(stream)).toMatchObject({
      relevantMemoryKeys: ["eta_model"],
      iterationUsed: 2,
      contextWindowUsed: 9,
    });
  });

  it("keeps to max_iterations, max_searches_per_iteration and the caller's window", async () => {
    const one = await events(client(), { messages: FAR_BACK_TALK, maxIterations: 1 });
    expect(ofKind(one, "iterationStarted")).toHaveLength(1);
    expect(ofKind(one, "windowExpanded")).toEqual([]);
    // Without its subject in sight the best it has is a guess, for the user to confirm.
    expect(handoffOf(one)).toMatchObject({ needsMoreInfo: true, iterationUsed: 1, contextWindowUsed: 5 });
    expect(handoffOf(one).confidence).toBeLessThan(0.5);

    const narrow = await events(client(), { messages: FAR_BACK_TALK, maxSearchesPerIteration: 1, contextWindow: 2 });
    for (const iteration of ofKind(narrow, "iterationStarted").map((i) => i.iteration)) {
      const searches = ofKind(narrow, "toolCall").filter(
        (c) => c.iteration === iteration && c.name === "search_memories",
      );
      expect(searches.length, `iteration ${iteration}`).toBeLessThanOrEqual(1);
    }
    expect(ofKind(narrow, "iterationStarted")[0]).toMatchObject({ windowSize: 2 });
    expect(handoffOf(narrow).searches).toBe(
      ofKind(narrow, "toolCall").filter((c) => c.name === "search_memories").length,
    );
  });

  it("searches the preferences alone when the message points at a habit and the first search finds none", async () => {
    const stream = await events(client(), {
      messages: [{ role: "user", content: "把近三个月运单量的走势画出来，按我的习惯来" }],
    });
    const searches = ofKind(stream, "toolCall").filter((c) => c.name === "search_memories");
    expect(searches[0]!.arguments).not.toHaveProperty("memory_types");
    expect(searches[1]!.arguments).toMatchObject({ memory_types: ["user_preference"] });
    // Found below the bar: named as a guess for the user to confirm.
    expect(handoffOf(stream)).toMatchObject({ relevantMemoryKeys: ["chart_pref_new"], needsMoreInfo: true });
  });

  it("hands off the newer of two preferences (latest wins)", async () => {
    const stream = await events(client(), {
      messages: [{ role: "user", content: "帮我画一下近三个月的趋势图，按我的图表偏好来" }],
    });
    expect(handoffOf(stream).relevantMemoryKeys).toEqual(["chart_pref_new"]);
  });

  it("keeps every search to the caller's memory_types and time range", async () => {
    const stream = await events(client(), {
      messages: DB_CONFIG_TALK,
      memoryTypes: ["user_preference"],
      timeRangeDays: 30,
    });
    for (const call of ofKind(stream, "toolCall").filter((c) => c.name === "search_memories")) {
      expect(call.arguments).not.toHaveProperty("memory_types");
    }
    for (const r of ofKind(stream, "toolResult").filter((r) => r.name === "search_memories")) {
      for (const h of r.hits) expect(h.memoryKey).toMatch(/^chart_pref/);
    }
    expect(handoffOf(stream).relevantMemoryKeys).not.toContain("db_config_prod");
  });

  it("withholds a sensitive memory's content from the handoff unless the call carries memories:sensitive", async () => {
    const talk = [{ role: "user", content: "计费系统接口的口令是什么来着" }];
    const plain = handoffOf(await events(client(), { messages: talk }));
    expect(plain.relevantMemoryKeys).toContain("billing_token");
    const withheld = plain.memories.find((m) => m.memoryKey === "billing_token")!;
    expect(withheld).toMatchObject({ summary: "计费系统接口的口令", content: "", sensitive: true, redacted: true });
    expect(withheld.metadata).toEqual({});

    const permitted = handoffOf(
      await events(client(), { messages: talk }, { headers: { "x-account-scopes": "memories:sensitive" } }),
    );
    expect(permitted.memories.find((m) => m.memoryKey === "billing_token")).toMatchObject({
      content: MEMORIES[6]!.content,
      redacted: false,
    });
  });

  it("answers only the caller's memories: another account finds nothing", async () => {
    const other = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-other-${randomUUID()}` });
    expect(handoffOf(await events(other, { messages: DB_CONFIG_TALK }))).toMatchObject({ relevantMemoryKeys: [] });
  });
});

describe("Recall refuses bad input before the first event", () => {
  const violations = async (req: Parameters<typeof events>[1], h: Record<string, string> = headers) => {
    const err = await failure(events(client(), req, { headers: h }));
    return {
      code: err.code,
      fields: err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field) ?? [],
      err,
    };
  };

  it("names each invalid field (INVALID_ARGUMENT with BadRequest)", async () => {
    expect(await violations({ messages: [] })).toMatchObject({ code: Code.InvalidArgument, fields: ["messages"] });
    expect(await violations({ messages: [{ role: "assistant", content: "你好" }] })).toMatchObject({
      code: Code.InvalidArgument,
      fields: ["messages"],
    });
    expect(
      await violations({ messages: [{ role: "robot", content: "" }], contextWindow: 0, maxSearchesPerIteration: 4 }),
    ).toMatchObject({
      code: Code.InvalidArgument,
      fields: expect.arrayContaining([
        "messages[0].role",
        "messages[0].content",
        "context_window",
        "max_searches_per_iteration",
      ]),
    });
    expect(
      await violations({ messages: DB_CONFIG_TALK, maxResultsPerSearch: 11, maxIterations: 11, strategy: "magic" }),
    ).toMatchObject({ fields: ["max_iterations", "max_results_per_search", "strategy"] });
    const many = Array.from({ length: 201 }, () => ({ role: "user", content: "x" }));
    expect(await violations({ messages: many })).toMatchObject({ fields: ["messages"] });
  });

  it("asks for an LLM when strategy is llm and none is configured (FAILED_PRECONDITION)", async () => {
    const err = await failure(events(client(), { messages: DB_CONFIG_TALK, strategy: "llm" }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_NOT_CONFIGURED");
    expect(err.findDetails(AgentHintSchema)[0]?.validValues).toEqual(["auto", "deterministic"]);
  });

  it("needs the caller's account (UNAUTHENTICATED), checked before the request", async () => {
    const anonymous = clientWith(MemRecallService, server.baseUrl, {});
    const err = await failure(events(anonymous, { messages: [] }));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("ACCOUNT_REQUIRED");
  });

  it("logs one rpc line per stream with its code", async () => {
    await events(client(), { messages: NOTHING_TALK });
    const lines = server.logs.filter(
      (l) => l.msg === "rpc" && l["rpc"] === "contextloader.memrecall.v1.MemRecallService/Recall",
    );
    expect(lines.map((l) => l["code"])).toContain("OK");
    expect(lines.map((l) => l["code"])).toContain("INVALID_ARGUMENT");
  });
});
