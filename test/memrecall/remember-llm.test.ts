import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ChatRequest, type Reply, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { callOk, callRaw, connectHttp } from "../mcp/mcp-client";

/**
 * RememberConversation with an LLM (LLM_BASE_URL), end to end through the
 * RPC: the scripted OpenAI-compatible server answers the extraction request
 * (the conversation, secrets masked as ⟦secret:N⟧) and, only where a
 * candidate has similar memories and none says the same, the decision
 * request. Every test checks what the model was sent as well as what was
 * stored.
 */

type MemClient = Client<typeof MemRecallService>;

const TOKEN = "ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg";
const PASSWORD = "Hx7!pQ2#vLm9";

let llm: ScriptedLlm;
let server: TestServer;
/** The same service without an LLM. */
let plain: TestServer;

beforeAll(async () => {
  llm = await startScriptedLlm(unexpected);
  server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_TIMEOUT_MS: "5000" });
  plain = await startServer();
});
afterAll(async () => {
  await server?.close();
  await plain?.close();
  await llm?.close();
});

/** A request no test scripted: refused with a status that is not retried, so it fails its call at once. */
function unexpected(): Reply {
  return { status: 400, body: JSON.stringify({ error: { message: "unexpected request: nothing scripted" } }) };
}

const account = () => `u-remllm-${randomUUID().slice(0, 8)}`;
const clientFor = (owner: string, scopes = "", srv: TestServer = server): MemClient =>
  clientWith(MemRecallService, srv.baseUrl, {
    "x-account-id": owner,
    ...(scopes ? { "x-account-scopes": scopes } : {}),
  });

/** A message as the RPC takes it: its time as a Timestamp. */
const msg = (role: string, content: string, time?: string) => ({
  role,
  content,
  ...(time ? { time: timestampFromDate(new Date(time)) } : {}),
});

interface Extracted {
  type: string;
  content: string;
  summary: string;
  source_messages: number[];
  changes_previous?: boolean;
}
/** The extraction answer listing these memories. */
const extraction = (...memories: Extracted[]): Reply => ({ content: JSON.stringify({ memories }) });

interface Decided {
  id: number;
  operation: "ADD" | "UPDATE" | "SUPERSEDE" | "NOOP";
  target?: string;
  content?: string;
  reason?: string;
}
/** The decision answer. */
const decision = (...decisions: Decided[]): Reply => ({ content: JSON.stringify({ decisions }) });

/** The requests the LLM receives from now on. */
function requestsFrom(): () => ChatRequest[] {
  const start = llm.requests.length;
  return () => llm.requests.slice(start);
}

/** The single user prompt of a request (its first message). */
const promptOf = (r: ChatRequest) => r.messages[0]!.content;

/** Everything an answer says, as text (int64 as strings). */
const textOf = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));

/** Every memory key the account holds that a broad search finds. */
async function keysOf(c: MemClient, query: string): Promise<string[]> {
  const found = await c.searchMemories({ query, minRelevanceScore: 0, limit: 10 });
  return found.results.map((r) => r.memoryKey).sort();
}

const CONVERSATION = [
  msg("user", "早上好！今天天气不错。", "2026-11-20T01:00:00Z"),
  msg("assistant", "早上好，有什么可以帮你？", "2026-11-20T01:00:05Z"),
  msg("user", "我们的生产数据库在上海机房，是 PostgreSQL 15。", "2026-11-20T01:01:00Z"),
  msg("user", `CI 用的 GitHub token 是 ${TOKEN}，别弄丢了。`, "2026-11-20T01:02:00Z"),
  msg("assistant", "好的，记下了。", "2026-11-20T01:02:05Z"),
];

/** A sensitive memory holding the CI token. */
const seedSensitiveToken = (c: MemClient) =>
  c.storeMemory({
    memoryKey: "ci_github_token",
    memoryType: "configuration",
    summary: "CI 的 GitHub token",
    content: `CI 的 GitHub token 是 ${TOKEN}`,
    sensitive: true,
  });

/** The LLM's extraction of "CI 的 GitHub token 每 90 天轮换一次", said in message 0. */
const tokenRotation = extraction({
  type: "configuration",
  content: "CI 的 GitHub token 每 90 天轮换一次",
  summary: "CI 的 GitHub token 每 90 天轮换",
  source_messages: [0],
});

/** The LLM's extraction of "以后周报图表改用折线图", said in message `source`. */
const chartChange = (source: number): Extracted => ({
  type: "user_preference",
  content: "以后周报图表改用折线图",
  summary: "周报图表用折线图",
  source_messages: [source],
  changes_previous: true,
});

const DB_FACT: Extracted = {
  type: "project_fact",
  content: "生产数据库在上海机房，是 PostgreSQL 15",
  summary: "生产数据库在上海机房（PostgreSQL 15）",
  source_messages: [2],
};
const TOKEN_FACT: Extracted = {
  type: "configuration",
  content: "CI 用的 GitHub token 是 ⟦secret:1⟧",
  // The LLM copied the placeholder into the summary, against the prompt's instructions.
  summary: "CI 的 GitHub token ⟦secret:1⟧",
  source_messages: [3],
};

describe("RememberConversation, LLM mode: extraction", () => {
  it('mode "auto" runs the LLM: one extraction request (the conversation, the token masked), ADDs without a decision request, stored and searchable', async () => {
    const owner = account();
    const c = clientFor(owner);
    const sent = requestsFrom();
    llm.queue(extraction(DB_FACT, TOKEN_FACT));
    const r = await c.rememberConversation({ messages: CONVERSATION, mode: "auto" });
    expect(r.mode).toBe("llm");
    expect(r.llmCalls).toBe(1);
    expect(r.applied).toBe(true);
    expect(r.operations.map((o) => [o.operation, o.memoryType, o.sourceMessages])).toEqual([
      ["ADD", "project_fact", [2]],
      ["ADD", "configuration", [3]],
    ]);
    expect([r.added, r.updated, r.superseded, r.unchanged]).toEqual([2, 0, 0, 0]);
    expect(r.operations[0]!.statedAt).toEqual(timestampFromDate(new Date("2026-11-20T01:01:00Z")));
    expect(r.operations[0]!.sensitive).toBe(false);
    expect(r.operations[1]!.sensitive).toBe(true);

    // One request: the extraction, asking for a JSON object, the conversation in it and the token not.
    const requests = sent();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.response_format).toEqual({ type: "json_object" });
    expect(requests[0]!.messages).toHaveLength(1);
    const prompt = promptOf(requests[0]!);
    expect(prompt).toContain("[2] user (2026-11-20T01:01:00Z): 我们的生产数据库在上海机房，是 PostgreSQL 15。");
    expect(prompt).toContain("[1] assistant");
    expect(prompt).toContain("CI 用的 GitHub token 是 ⟦secret:1⟧，别弄丢了。");
    expect(prompt).not.toContain(TOKEN);
    expect(prompt).not.toContain(TOKEN.slice(4, 20));

    // Stored, and found again by what it says.
    const found = await c.searchMemories({ query: "生产数据库 上海机房", minRelevanceScore: 0 });
    expect(found.results[0]?.memoryKey).toBe(r.operations[0]!.memoryKey);
    const detail = await c.getMemoryDetail({ memoryKey: r.operations[0]!.memoryKey });
    expect(detail).toMatchObject({ content: DB_FACT.content, memoryType: "project_fact", sensitive: false });
    expect(detail.metadata).toMatchObject({ source: "remember_conversation", mode: "llm" });
    expect(JSON.stringify(server.logs)).not.toContain(TOKEN);
  });

  it("an unset mode is auto, and the memory types asked for are told to the LLM and kept", async () => {
    const c = clientFor(account());
    const sent = requestsFrom();
    llm.queue(extraction(DB_FACT, TOKEN_FACT));
    const r = await c.rememberConversation({ messages: CONVERSATION, memoryTypes: ["project_fact"] });
    expect(r.mode).toBe("llm");
    expect(promptOf(sent()[0]!)).toContain("只保留这些类型：project_fact");
    // The LLM answered a type it was not asked for: it is dropped.
    expect(r.operations.map((o) => o.memoryType)).toEqual(["project_fact"]);
  });

  it("restores ⟦secret:N⟧ in the LLM's content as the real secret, in a sensitive memory; no summary, keyword, answer or log holds it", async () => {
    const owner = account();
    const c = clientFor(owner);
    const sent = requestsFrom();
    const messages = [
      msg("user", `CI 用的 GitHub token 是 ${TOKEN}`),
      msg("user", `测试库的连接：postgres://app:${PASSWORD}@pg-test.internal:5432/app`),
    ];
    // Which placeholder stands for which secret is read from the prompt, not assumed.
    llm.setFallback((req) => {
      const prompt = promptOf(req);
      const tokenAt = /GitHub token 是 (⟦secret:\d+⟧)/.exec(prompt)?.[1];
      const passwordAt = /postgres:\/\/app:(⟦secret:\d+⟧)@/.exec(prompt)?.[1];
      if (!tokenAt || !passwordAt) return unexpected();
      return extraction(
        {
          type: "configuration",
          content: `CI 的 GitHub token：${tokenAt}`,
          summary: `CI 的 GitHub token ${tokenAt}`,
          source_messages: [0],
        },
        {
          type: "configuration",
          content: `测试库连接 postgres://app:${passwordAt}@pg-test.internal:5432/app`,
          summary: `测试库连接，密码 ${passwordAt}，令牌 ${TOKEN}`,
          source_messages: [1],
        },
      );
    });
    let r: Awaited<ReturnType<MemClient["rememberConversation"]>>;
    try {
      r = await c.rememberConversation({ messages });
    } finally {
      llm.setFallback(unexpected);
    }
    const prompt = promptOf(sent()[0]!);
    expect(prompt).not.toContain(TOKEN);
    expect(prompt).not.toContain(PASSWORD);
    expect(r.operations.map((o) => [o.operation, o.sensitive])).toEqual([
      ["ADD", true],
      ["ADD", true],
    ]);
    // The answer never holds a secret, nor a placeholder: the summary says a secret was there.
    expect(textOf(r)).not.toContain(TOKEN);
    expect(textOf(r)).not.toContain(PASSWORD);
    expect(textOf(r)).not.toContain("⟦secret");
    expect(r.operations[0]!.summary).toBe("CI 的 GitHub token [已隐去]");
    expect(r.operations[1]!.summary).not.toContain(TOKEN);

    const [tokenKey, dbKey] = r.operations.map((o) => o.memoryKey) as [string, string];
    const withheld = await c.getMemoryDetail({ memoryKey: tokenKey });
    expect(withheld).toMatchObject({ sensitive: true, redacted: true, content: "" });
    const shown = clientFor(owner, "memories:sensitive");
    const token = await shown.getMemoryDetail({ memoryKey: tokenKey });
    expect(token.content).toBe(`CI 的 GitHub token：${TOKEN}`);
    expect(token.summary).toBe("CI 的 GitHub token [已隐去]");
    expect(textOf(token.keywords)).not.toContain(TOKEN.slice(0, 12));
    const db = await shown.getMemoryDetail({ memoryKey: dbKey });
    expect(db.content).toBe(`测试库连接 postgres://app:${PASSWORD}@pg-test.internal:5432/app`);
    expect(db.summary).not.toContain(PASSWORD);
    expect(db.summary).not.toContain(TOKEN);
    expect(db.summary).not.toContain("⟦secret");
    expect(JSON.stringify(server.logs)).not.toContain(TOKEN);
    expect(JSON.stringify(server.logs)).not.toContain(PASSWORD);
  });

  it("a restored secret makes the memory sensitive however the LLM words the text around it", async () => {
    const owner = account();
    const c = clientFor(owner);
    llm.setFallback((req) => {
      const p = /(⟦secret:\d+⟧)/.exec(promptOf(req))?.[1];
      // The LLM keeps the placeholder, as asked, in words of its own: no "是" or ":" before it.
      return p
        ? extraction({
            type: "configuration",
            content: `测试库 app 用户的密码 ${p}`,
            summary: "测试库密码",
            source_messages: [0],
          })
        : unexpected();
    });
    let r: Awaited<ReturnType<MemClient["rememberConversation"]>>;
    try {
      r = await c.rememberConversation({ messages: [msg("user", `测试库 app 用户的密码是 ${PASSWORD}`)] });
    } finally {
      llm.setFallback(unexpected);
    }
    const key = r.operations[0]!.memoryKey;
    expect(r.operations[0]!.sensitive).toBe(true);
    // Without the scope, the secret is not shown, nor found by.
    const withheld = await c.getMemoryDetail({ memoryKey: key });
    expect(withheld.content).not.toContain(PASSWORD);
    expect(textOf(withheld.keywords)).not.toContain(PASSWORD.slice(0, 6));
    const byPassword = await c.searchMemories({ query: PASSWORD, searchMode: "keyword", minRelevanceScore: 0 });
    expect(byPassword.results).toHaveLength(0);
  });

  it("keeps nothing when the LLM finds nothing worth keeping", async () => {
    const c = clientFor(account());
    llm.queue(extraction());
    const r = await c.rememberConversation({ messages: [msg("user", "哈哈，周末去爬山了，累死了。")] });
    expect(r).toMatchObject({ mode: "llm", applied: false, llmCalls: 1, operations: [] });
    expect(r.message).toBe("the conversation holds nothing worth keeping long-term");
  });
});

describe("RememberConversation, LLM mode: decisions against similar memories", () => {
  async function seed(c: MemClient, memoryKey: string, memoryType: string, summary: string, content: string) {
    await c.storeMemory({
      memoryKey,
      memoryType,
      summary,
      content,
      statedAt: timestampFromDate(new Date("2026-09-01T08:00:00Z")),
    });
  }
  const seedChart = (c: MemClient) =>
    seed(c, "pref_weekly_chart", "user_preference", "周报图表用柱状图", "我喜欢周报里的图表用柱状图。");

  /** The decision request's listing of candidate `id`, up to the next candidate. */
  const candidateIn = (prompt: string, id: number) =>
    prompt.slice(prompt.indexOf(`候选 ${id}（`), prompt.indexOf(`候选 ${id + 1}（`) >>> 0);

  it("SUPERSEDE: a second request lists the candidate and the similar memory; the old one is superseded_by the new, valid until it was stated", async () => {
    const c = clientFor(account());
    await seedChart(c);
    const sent = requestsFrom();
    llm.queue(
      extraction(chartChange(0)),
      decision({ id: 0, operation: "SUPERSEDE", target: "pref_weekly_chart", reason: "图表偏好改变了" }),
    );
    const r = await c.rememberConversation({
      messages: [msg("user", "以后周报图表改用折线图。", "2026-11-20T01:04:00Z")],
    });
    expect(r.llmCalls).toBe(2);
    const requests = sent();
    expect(requests).toHaveLength(2);
    const listing = candidateIn(promptOf(requests[1]!), 0);
    expect(listing).toContain("以后周报图表改用折线图");
    expect(listing).toContain("说明有改变");
    expect(listing).toContain("key=pref_weekly_chart");
    expect(listing).toContain("我喜欢周报里的图表用柱状图");

    expect(r.operations).toHaveLength(1);
    const op = r.operations[0]!;
    expect(op).toMatchObject({ operation: "SUPERSEDE", supersedes: "pref_weekly_chart", reason: "图表偏好改变了" });
    expect(op.memoryKey).not.toBe("pref_weekly_chart");
    expect(r.applied).toBe(true);
    expect(r.superseded).toBe(1);
    const old = await c.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    expect(old.supersededBy).toBe(op.memoryKey);
    expect(old.validUntil).toEqual(timestampFromDate(new Date("2026-11-20T01:04:00Z")));
    expect(old.content).toBe("我喜欢周报里的图表用柱状图。");
    const next = await c.getMemoryDetail({ memoryKey: op.memoryKey });
    expect(next).toMatchObject({ content: "以后周报图表改用折线图", supersedes: "pref_weekly_chart" });
  });

  it("UPDATE: the memory keeps its key, its content the LLM's merged one", async () => {
    const c = clientFor(account());
    await seed(c, "db_prod", "project_fact", "生产数据库", "生产数据库是 PostgreSQL 15，主机 pg-prod.internal。");
    const before = await c.getMemoryDetail({ memoryKey: "db_prod" });
    const sent = requestsFrom();
    const merged = "生产数据库是 PostgreSQL 15，主机 pg-prod.internal，端口 5433。";
    llm.queue(
      extraction({
        type: "project_fact",
        content: "生产数据库 PostgreSQL 的端口是 5433",
        summary: "生产数据库端口 5433",
        source_messages: [0],
      }),
      decision({ id: 0, operation: "UPDATE", target: "db_prod", content: merged, reason: "补充端口" }),
    );
    const r = await c.rememberConversation({ messages: [msg("user", "对了，生产数据库 PostgreSQL 的端口是 5433。")] });
    expect(sent()).toHaveLength(2);
    expect(candidateIn(promptOf(sent()[1]!), 0)).toContain("key=db_prod");
    expect(r.operations.map((o) => [o.operation, o.memoryKey])).toEqual([["UPDATE", "db_prod"]]);
    expect([r.added, r.updated, r.superseded, r.unchanged]).toEqual([0, 1, 0, 0]);
    expect(r.applied).toBe(true);
    const after = await c.getMemoryDetail({ memoryKey: "db_prod" });
    expect(after.content).toBe(merged);
    expect(after.createdAt).toEqual(before.createdAt);
    expect(after.supersededBy).toBe("");
    expect(await keysOf(c, "生产数据库 端口")).toEqual(["db_prod"]);
  });

  it("NOOP: nothing is written, and applied is false when every operation is NOOP", async () => {
    const c = clientFor(account());
    await seedChart(c);
    const before = await c.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    const sent = requestsFrom();
    llm.queue(
      extraction({
        type: "user_preference",
        content: "周报的图表我喜欢用柱状图",
        summary: "周报图表用柱状图",
        source_messages: [0],
      }),
      decision({ id: 0, operation: "NOOP", target: "pref_weekly_chart", reason: "已经知道" }),
    );
    const r = await c.rememberConversation({ messages: [msg("user", "提醒一下，周报的图表我喜欢用柱状图。")] });
    expect(sent()).toHaveLength(2);
    expect(r.operations.map((o) => [o.operation, o.memoryKey])).toEqual([["NOOP", "pref_weekly_chart"]]);
    expect(r).toMatchObject({ applied: false, llmCalls: 2, unchanged: 1, added: 0 });
    const after = await c.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    expect(after.updatedAt).toEqual(before.updatedAt);
    expect(after.content).toBe(before.content);
    expect(await keysOf(c, "周报 图表 柱状图")).toEqual(["pref_weekly_chart"]);
  });

  it("one decision request for every candidate with similar memories; one with none is ADDed without being asked about", async () => {
    const c = clientFor(account());
    await seedChart(c);
    const sent = requestsFrom();
    llm.queue(
      extraction(
        {
          type: "person_role",
          content: "小林是我们组新来的实习生，负责数据看板",
          summary: "小林：新实习生，负责数据看板",
          source_messages: [0],
        },
        chartChange(1),
      ),
      decision({ id: 0, operation: "SUPERSEDE", target: "pref_weekly_chart" }),
    );
    const r = await c.rememberConversation({
      messages: [msg("user", "小林是我们组新来的实习生，负责数据看板。"), msg("user", "以后周报图表改用折线图。")],
    });
    const requests = sent();
    expect(requests).toHaveLength(2);
    const decide = promptOf(requests[1]!);
    // Only the chart preference is asked about, as candidate 0.
    expect(decide).toContain("以后周报图表改用折线图");
    expect(decide).not.toContain("小林");
    expect(decide).not.toContain("候选 1");
    expect(r.operations.map((o) => o.operation)).toEqual(["ADD", "SUPERSEDE"]);
    expect(r.operations[1]!.supersedes).toBe("pref_weekly_chart");
  });

  it("a sensitive similar memory is shown to the LLM by its summary, never its content", async () => {
    const owner = account();
    const c = clientFor(owner);
    await seedSensitiveToken(c);
    const sent = requestsFrom();
    llm.queue(tokenRotation, decision({ id: 0, operation: "ADD" }));
    const r = await c.rememberConversation({ messages: [msg("user", "CI 的 GitHub token 每 90 天轮换一次。")] });
    const requests = sent();
    expect(requests).toHaveLength(2);
    expect(candidateIn(promptOf(requests[1]!), 0)).toContain("key=ci_github_token");
    for (const req of requests) expect(JSON.stringify(req.messages)).not.toContain(TOKEN);
    expect(r.operations.map((o) => o.operation)).toEqual(["ADD"]);
    const kept = await clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: "ci_github_token" });
    expect(kept.content).toBe(`CI 的 GitHub token 是 ${TOKEN}`);
  });

  it("an UPDATE of a sensitive memory supersedes it instead: its secret is never rewritten away", async () => {
    const owner = account();
    const c = clientFor(owner);
    await seedSensitiveToken(c);
    llm.queue(
      tokenRotation,
      decision({ id: 0, operation: "UPDATE", target: "ci_github_token", content: "CI 的 GitHub token，每 90 天轮换" }),
    );
    const r = await c.rememberConversation({ messages: [msg("user", "CI 的 GitHub token 每 90 天轮换一次。")] });
    expect(r.operations.map((o) => [o.operation, o.supersedes])).toEqual([["SUPERSEDE", "ci_github_token"]]);
    expect(r.operations[0]!.reason).toContain("敏感记忆不改写");
    const kept = await clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: "ci_github_token" });
    expect(kept.content).toBe(`CI 的 GitHub token 是 ${TOKEN}`);
    expect(kept.supersededBy).toBe(r.operations[0]!.memoryKey);
  });

  it("UPDATE with merged content holding the conversation's secret: the memory becomes sensitive, and the operation says so", async () => {
    const owner = account();
    const c = clientFor(owner);
    await seed(c, "db_test", "configuration", "测试库连接", "测试库在 pg-test.internal:5432，用户 app。");
    const sent = requestsFrom();
    llm.setFallback((req) => {
      const prompt = promptOf(req);
      if (req.messages.length !== 1) return unexpected();
      if (prompt.includes("候选 0")) {
        const p = /(⟦secret:\d+⟧)/.exec(prompt)?.[1];
        return p
          ? decision({
              id: 0,
              operation: "UPDATE",
              target: "db_test",
              content: `测试库在 pg-test.internal:5432，用户 app，密码是 ${p}。`,
            })
          : unexpected();
      }
      const p = /(⟦secret:\d+⟧)/.exec(prompt)?.[1];
      return p
        ? extraction({
            type: "configuration",
            content: `测试库 pg-test.internal 的用户 app 密码是 ${p}`,
            summary: "测试库密码",
            source_messages: [0],
          })
        : unexpected();
    });
    let r: Awaited<ReturnType<MemClient["rememberConversation"]>>;
    try {
      r = await c.rememberConversation({
        messages: [msg("user", `测试库 pg-test.internal 的用户 app 密码是 ${PASSWORD}`)],
      });
    } finally {
      llm.setFallback(unexpected);
    }
    expect(sent()).toHaveLength(2);
    for (const req of sent()) expect(JSON.stringify(req.messages)).not.toContain(PASSWORD);
    expect(r.operations.map((o) => [o.operation, o.memoryKey, o.sensitive])).toEqual([["UPDATE", "db_test", true]]);
    expect(textOf(r)).not.toContain(PASSWORD);
    const shown = await clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: "db_test" });
    expect(shown).toMatchObject({
      sensitive: true,
      content: `测试库在 pg-test.internal:5432，用户 app，密码是 ${PASSWORD}。`,
    });
    expect(shown.summary).not.toContain(PASSWORD);
    const withheld = await c.getMemoryDetail({ memoryKey: "db_test" });
    expect(withheld).toMatchObject({ redacted: true, content: "" });
  });

  it("of two candidates on one subject where the later says it changes the earlier, only the later is kept", async () => {
    const c = clientFor(account());
    const sent = requestsFrom();
    llm.queue(
      extraction(
        { type: "user_preference", content: "周报图表用柱状图", summary: "周报图表用柱状图", source_messages: [0] },
        chartChange(1),
      ),
    );
    const r = await c.rememberConversation({
      messages: [msg("user", "周报图表用柱状图吧。"), msg("user", "算了，以后周报图表改用折线图。")],
    });
    expect(sent()).toHaveLength(1);
    expect(r.operations.map((o) => [o.operation, o.summary, o.sourceMessages])).toEqual([
      ["ADD", "周报图表用折线图", [1]],
    ]);
  });

  it("SUPERSEDE of a memory already superseded: what holds now is the newest memory only", async () => {
    const c = clientFor(account());
    await seedChart(c);
    // The chart preference changed once already: 柱状图 → 饼图.
    await c.storeMemory({
      memoryKey: "pref_weekly_chart_pie",
      memoryType: "user_preference",
      summary: "周报图表用饼图",
      content: "以后周报里的图表用饼图。",
      supersedes: "pref_weekly_chart",
      statedAt: timestampFromDate(new Date("2026-10-01T08:00:00Z")),
    });
    const sent = requestsFrom();
    llm.queue(
      extraction(chartChange(0)),
      // The LLM picks the older, already replaced memory.
      decision({ id: 0, operation: "SUPERSEDE", target: "pref_weekly_chart" }),
    );
    const r = await c.rememberConversation({
      messages: [msg("user", "以后周报图表改用折线图。", "2026-11-20T01:04:00Z")],
    });
    expect(sent()).toHaveLength(2);
    const listing = candidateIn(promptOf(sent()[1]!), 0);
    expect(listing).toContain("key=pref_weekly_chart_pie");
    const newKey = r.operations[0]!.memoryKey;
    // Whatever the LLM targeted, the pie chart preference no longer holds.
    const found = await c.searchMemories({ query: "周报 图表", minRelevanceScore: 0 });
    const current = found.results.filter((x) => x.supersededBy === "").map((x) => x.memoryKey);
    expect(current).toEqual([newKey]);
  });

  it("the same conversation sent twice: the second run is all NOOP, recognised before the LLM is asked to decide", async () => {
    const c = clientFor(account());
    await seedChart(c);
    const messages = [
      msg("user", "我们的生产数据库在上海机房，是 PostgreSQL 15。", "2026-11-20T01:01:00Z"),
      msg("user", "以后周报图表改用折线图。", "2026-11-20T01:04:00Z"),
    ];
    const extracted = extraction({ ...DB_FACT, source_messages: [0] }, chartChange(1));
    const first = requestsFrom();
    llm.queue(extracted, decision({ id: 0, operation: "SUPERSEDE", target: "pref_weekly_chart" }));
    const one = await c.rememberConversation({ messages });
    expect(first()).toHaveLength(2);
    expect(one.operations.map((o) => o.operation)).toEqual(["ADD", "SUPERSEDE"]);

    // The LLM reads it again and answers the same, in other whitespace and punctuation.
    const second = requestsFrom();
    llm.queue(
      extraction(
        { ...DB_FACT, content: ` ${DB_FACT.content}。`, source_messages: [0] },
        {
          type: "user_preference",
          content: "以后周报图表改用折线图！",
          summary: "周报图表用折线图",
          source_messages: [1],
          changes_previous: true,
        },
      ),
    );
    const two = await c.rememberConversation({ messages });
    expect(second()).toHaveLength(1);
    expect(two.llmCalls).toBe(1);
    expect(two.operations.map((o) => o.operation)).toEqual(["NOOP", "NOOP"]);
    expect(two.operations.map((o) => o.memoryKey)).toEqual(one.operations.map((o) => o.memoryKey));
    expect(two).toMatchObject({ applied: false, unchanged: 2 });
  });
});

describe("RememberConversation, LLM mode: unusable answers and failures", () => {
  const info = (err: ConnectError) => err.findDetails(ErrorInfoSchema)[0]?.reason;

  it("an extraction answer that is not JSON gets one repair request; a usable second answer is used (llm_calls 2)", async () => {
    const c = clientFor(account());
    const sent = requestsFrom();
    llm.queue({ content: "好的，我来看看这段对话……" }, extraction(DB_FACT));
    const r = await c.rememberConversation({ messages: CONVERSATION });
    expect(r.llmCalls).toBe(2);
    expect(r.operations.map((o) => o.operation)).toEqual(["ADD"]);
    const repair = sent()[1]!.messages;
    expect(repair.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(repair[1]!.content).toBe("好的，我来看看这段对话……");
    expect(repair[2]!.content).toContain("这个回答无法使用");
    expect(repair[2]!.content).toContain("no JSON object");
    // The repair conversation repeats the masked prompt, never the secret.
    expect(JSON.stringify(repair)).not.toContain(TOKEN);
  });

  for (const [what, first, second, problem] of [
    ["not JSON, twice", { content: "我觉得没什么要记的" }, { content: "真的没有" }, "no JSON object"],
    [
      "the wrong shape, twice",
      { content: JSON.stringify({ facts: ["生产数据库在上海机房"] }) },
      {
        content: JSON.stringify({
          memories: [{ type: "secret_sauce", content: "x", summary: "x", source_messages: [0] }],
        }),
      },
      "memories",
    ],
    [
      "a source message that is not in the conversation, twice",
      extraction({ ...DB_FACT, source_messages: [7] }),
      extraction({ ...DB_FACT, source_messages: [99] }),
      "source_messages",
    ],
    [
      "more than 20 memories, twice",
      extraction(...Array.from({ length: 21 }, (_, i) => ({ ...DB_FACT, content: `事实 ${i}` }))),
      extraction(...Array.from({ length: 25 }, (_, i) => ({ ...DB_FACT, content: `事实 ${i}` }))),
      "memories",
    ],
  ] as [string, Reply, Reply, string][]) {
    it(`an extraction answer with ${what}: UNAVAILABLE LLM_BAD_ANSWER after exactly one repair, nothing stored`, async () => {
      const c = clientFor(account());
      const sent = requestsFrom();
      llm.queue(first, second);
      const err = await failure(c.rememberConversation({ messages: CONVERSATION }));
      expect(err.code).toBe(Code.Unavailable);
      expect(info(err)).toBe("LLM_BAD_ANSWER");
      expect(err.rawMessage).toContain("nothing was stored");
      expect(sent()).toHaveLength(2);
      expect(sent()[1]!.messages.at(-1)!.content).toContain(problem);
      expect(await keysOf(c, "生产数据库 上海机房 事实")).toEqual([]);
    });
  }

  it("a decision whose target is not among the candidate's similar memories gets one repair; a second bad answer fails the call and nothing is stored, not even the ADDs", async () => {
    const owner = account();
    const c = clientFor(owner);
    // Another account's memory: its key is never a target here.
    await clientFor(account()).storeMemory({ memoryKey: "someone_elses", content: "我喜欢周报里的图表用饼图。" });
    await c.storeMemory({
      memoryKey: "pref_weekly_chart",
      memoryType: "user_preference",
      summary: "周报图表用柱状图",
      content: "我喜欢周报里的图表用柱状图。",
    });
    const sent = requestsFrom();
    llm.queue(
      extraction(
        {
          type: "person_role",
          content: "小林是我们组新来的实习生",
          summary: "小林：新实习生",
          source_messages: [0],
        },
        chartChange(1),
      ),
      decision({ id: 0, operation: "SUPERSEDE", target: "someone_elses" }),
      decision({ id: 0, operation: "SUPERSEDE", target: "no_such_memory" }),
    );
    const err = await failure(
      c.rememberConversation({
        messages: [msg("user", "小林是我们组新来的实习生。"), msg("user", "以后周报图表改用折线图。")],
      }),
    );
    expect(err.code).toBe(Code.Unavailable);
    expect(info(err)).toBe("LLM_BAD_ANSWER");
    const requests = sent();
    expect(requests).toHaveLength(3);
    const repair = requests[2]!.messages;
    expect(repair.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(repair[2]!.content).toContain("pref_weekly_chart");
    expect(repair[2]!.content).toContain("needs a target among its similar memories");
    // Applied together or not at all: the intern was not stored either.
    expect(await keysOf(c, "小林 实习生 周报 图表")).toEqual(["pref_weekly_chart"]);
    const old = await c.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    expect(old.supersededBy).toBe("");
  });

  it("a decision answer that leaves a candidate out, then one in the wrong shape: LLM_BAD_ANSWER", async () => {
    const c = clientFor(account());
    await c.storeMemory({ memoryKey: "pref_weekly_chart", content: "我喜欢周报里的图表用柱状图。" });
    const sent = requestsFrom();
    llm.queue(extraction(chartChange(0)), decision(), {
      content: JSON.stringify({ decisions: [{ id: 0, operation: "DELETE", target: "pref_weekly_chart" }] }),
    });
    const err = await failure(c.rememberConversation({ messages: [msg("user", "以后周报图表改用折线图。")] }));
    expect(info(err)).toBe("LLM_BAD_ANSWER");
    expect(sent()).toHaveLength(3);
    expect(sent()[2]!.messages.at(-1)!.content).toContain("candidate 0 has no decision");
    expect(await keysOf(c, "周报 图表")).toEqual(["pref_weekly_chart"]);
  });

  it("an LLM failing with HTTP 500 every time fails the call with UNAVAILABLE LLM_UNAVAILABLE, nothing stored", async () => {
    const c = clientFor(account());
    const sent = requestsFrom();
    llm.setFallback(() => ({
      status: 500,
      body: JSON.stringify({ error: { message: "internal error, secret=abc" } }),
    }));
    let err: Awaited<ReturnType<typeof failure>>;
    try {
      err = await failure(c.rememberConversation({ messages: CONVERSATION }));
    } finally {
      llm.setFallback(unexpected);
    }
    expect(err.code).toBe(Code.Unavailable);
    expect(info(err)).toBe("LLM_UNAVAILABLE");
    expect(err.rawMessage).toContain("LLM");
    // The endpoint's own text is not passed on.
    expect(err.rawMessage).not.toContain("secret=abc");
    // The first attempt and its two retries.
    expect(sent()).toHaveLength(3);
    expect(await keysOf(c, "生产数据库 上海机房")).toEqual([]);
  });

  it("an LLM failing at the decision request stores nothing from the extraction either", async () => {
    const c = clientFor(account());
    await c.storeMemory({ memoryKey: "pref_weekly_chart", content: "我喜欢周报里的图表用柱状图。" });
    llm.queue(
      extraction(
        { type: "person_role", content: "小林是我们组新来的实习生", summary: "小林：新实习生", source_messages: [0] },
        chartChange(1),
      ),
    );
    llm.setFallback(() => ({ status: 503, body: "{}" }));
    let err: Awaited<ReturnType<typeof failure>>;
    try {
      err = await failure(
        c.rememberConversation({
          messages: [msg("user", "小林是我们组新来的实习生。"), msg("user", "以后周报图表改用折线图。")],
        }),
      );
    } finally {
      llm.setFallback(unexpected);
    }
    expect(err.code).toBe(Code.Unavailable);
    expect(await keysOf(c, "小林 实习生 周报 图表")).toEqual(["pref_weekly_chart"]);
  });
});

describe("RememberConversation, which mode runs", () => {
  it('mode "llm" without LLM_BASE_URL is FAILED_PRECONDITION LLM_NOT_CONFIGURED', async () => {
    const c = clientFor(account(), "", plain);
    const err = await failure(c.rememberConversation({ messages: CONVERSATION, mode: "llm" }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_NOT_CONFIGURED");
    expect(err.rawMessage).toContain("LLM_BASE_URL");
    // auto falls back to the rules there.
    const r = await c.rememberConversation({ messages: [msg("user", "记住：我们的生产数据库在上海机房。")] });
    expect(r).toMatchObject({ mode: "rules", llmCalls: 0 });
  });

  it("its similarity searches leave the search cache alone: the agent's same search afterwards is rewritten by the LLM", async () => {
    const c = clientFor(account());
    const fact = "我们的生产数据库在上海机房。";
    // Rules mode, a dry run: no request, nothing written, so the memory version stays the same.
    const dry = await c.rememberConversation({ messages: [msg("user", `记住：${fact}`)], mode: "rules", dryRun: true });
    expect(dry.operations).toHaveLength(1);
    const sent = requestsFrom();
    llm.queue({ content: JSON.stringify({ terms: ["production database"], expanded_query: "生产数据库 机房" }) });
    // The very search RememberConversation ran (its query is the candidate's summary and content).
    await c.searchMemories({ query: `${fact}\n${fact}`, searchMode: "hybrid", limit: 5, minRelevanceScore: 0.1 });
    expect(sent()).toHaveLength(1);
  });

  it('mode "rules" with an LLM configured sends no request', async () => {
    const c = clientFor(account());
    await c.storeMemory({
      memoryKey: "pref_weekly_chart",
      memoryType: "user_preference",
      content: "我喜欢周报里的图表用柱状图。",
    });
    const sent = requestsFrom();
    const r = await c.rememberConversation({
      messages: [msg("user", "记住：我们的生产数据库在上海机房。"), msg("user", "以后周报图表改用折线图。")],
      mode: "rules",
    });
    expect(r).toMatchObject({ mode: "rules", llmCalls: 0, applied: true });
    expect(r.operations.map((o) => o.operation)).toEqual(["ADD", "SUPERSEDE"]);
    expect(sent()).toHaveLength(0);
  });

  it('mode "llm" with dry_run decides with the LLM and writes nothing', async () => {
    const c = clientFor(account());
    llm.queue(extraction(DB_FACT));
    const r = await c.rememberConversation({ messages: CONVERSATION, mode: "llm", dryRun: true });
    expect(r).toMatchObject({ mode: "llm", applied: false, llmCalls: 1, added: 1 });
    expect(r.message).toContain("dry run, nothing written");
    expect(await keysOf(c, "生产数据库 上海机房")).toEqual([]);
  });
});

describe("the MCP tool remember over HTTP", () => {
  it("returns the operations, its structuredContent checked by the SDK against the output schema", async () => {
    const owner = account();
    const mcp = await connectHttp(server.baseUrl, { "x-account-id": owner });
    try {
      const sent = requestsFrom();
      llm.queue(extraction(DB_FACT, TOKEN_FACT));
      const messages = CONVERSATION.map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.time ? { time: new Date(Number(m.time.seconds) * 1000).toISOString() } : {}),
      }));
      const answer = await callOk(mcp, "remember", { messages, output_format: "json" });
      expect(sent()).toHaveLength(1);
      expect(promptOf(sent()[0]!)).not.toContain(TOKEN);
      expect(answer).toMatchObject({ mode: "llm", applied: true, llm_calls: 1 });
      const ops = answer["operations"] as Record<string, unknown>[];
      expect(ops.map((o) => [o["operation"], o["memory_type"]])).toEqual([
        ["ADD", "project_fact"],
        ["ADD", "configuration"],
      ]);
      expect(ops[1]).toMatchObject({ sensitive: true, summary: "CI 的 GitHub token [已隐去]" });
      expect(JSON.stringify(answer)).not.toContain(TOKEN);

      // The structured answer is the RPC's, in proto JSON with proto field names.
      llm.queue(extraction(DB_FACT, TOKEN_FACT));
      const raw = await mcp.callTool({ name: "remember", arguments: { messages } });
      expect(raw.isError).toBeFalsy();
      const structured = raw.structuredContent as Record<string, unknown>;
      expect(structured).toMatchObject({ mode: "llm", unchanged: 2, llm_calls: 1 });
      const again = structured["operations"] as Record<string, unknown>[];
      expect(again.map((o) => [o["operation"], o["memory_key"]])).toEqual(ops.map((o) => ["NOOP", o["memory_key"]]));
      expect(JSON.stringify(raw)).not.toContain(TOKEN);
      const c = clientFor(owner);
      expect(await keysOf(c, "生产数据库 上海机房 GitHub token")).toEqual(
        ops.map((o) => String(o["memory_key"])).sort(),
      );
    } finally {
      await mcp.close();
    }
  });

  it("an LLM's unusable answers come back as a tool error naming LLM_BAD_ANSWER", async () => {
    const mcp = await connectHttp(server.baseUrl, { "x-account-id": account() });
    try {
      llm.queue({ content: "no" }, { content: "still no" });
      const { isError, text } = await callRaw(mcp, "remember", {
        messages: [{ role: "user", content: "我们的生产数据库在上海机房。" }],
        mode: "llm",
      });
      expect(isError).toBe(true);
      expect(text).toMatch(/^UNAVAILABLE \(LLM_BAD_ANSWER\): /);
    } finally {
      await mcp.close();
    }
  });
});
