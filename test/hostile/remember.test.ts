import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { MEMORY_KINDS } from "../../src/memrecall/remember/input";
import { MAX_CANDIDATES } from "../../src/memrecall/remember/llm";
import { clientWith, failure } from "../helpers/rpc";
import { type ChatRequest, type Reply, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { callFails, connectHttp, fieldsOf } from "../mcp/mcp-client";

/**
 * RememberConversation against what a hostile or careless caller sends:
 * requests out of bounds (INVALID_ARGUMENT naming the field), messages built
 * to make the secret scanner's patterns backtrack, conversations as large as
 * a request may be, and one account's memories as seen from another's.
 */

type MemClient = Client<typeof MemRecallService>;

let server: TestServer;
let llm: ScriptedLlm;
/** The same service with the scripted LLM. */
let withLlm: TestServer;

beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "info" });
  llm = await startScriptedLlm(() => ({ content: JSON.stringify({ memories: [] }) }));
  withLlm = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_TIMEOUT_MS: "5000", LOG_LEVEL: "info" });
});
afterAll(async () => {
  await server?.close();
  await withLlm?.close();
  await llm?.close();
});

const account = () => `u-hostile-rem-${randomUUID().slice(0, 8)}`;
const clientFor = (owner: string, srv: TestServer = server): MemClient =>
  clientWith(MemRecallService, srv.baseUrl, { "x-account-id": owner });
const user = (content: string) => ({ role: "user", content });

/** The fields an error's BadRequest names, with their descriptions. */
function violations(err: ConnectError): { field: string; description: string }[] {
  return err.findDetails(BadRequestSchema).flatMap((b) => b.fieldViolations);
}

/** A text of `n` characters repeating `unit`. */
const fill = (unit: string, n = 20_000) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

/**
 * Bounds for a loaded two-core machine (calls measured at up to 3.8 s, and a
 * search held 1.6 s behind a call that does not yield, where an idle machine
 * takes a fraction of that): three times what was seen, still far below what a
 * pattern backtracking over 20,000 characters costs (minutes).
 */
const CONVERSATION_MS = 15_000;
const MESSAGE_MS = 6000;
const SEARCH_MS = 5000;

/**
 * Runs `call` while another account searches its memories over and over
 * until the call is answered: how long the call took, and the slowest search
 * (the service stays responsive when that stays short).
 */
async function beside<T>(
  call: () => Promise<T>,
): Promise<{ value: T; callMs: number; worstSearchMs: number; searches: number }> {
  const other = clientFor(account());
  await other.storeMemory({ memoryKey: "k", content: "生产数据库在上海机房" });
  const started = performance.now();
  let done = false;
  const running = call().finally(() => {
    done = true;
  });
  let worstSearchMs = 0;
  let searches = 0;
  while (!done) {
    const searchStarted = performance.now();
    const found = await other.searchMemories({ query: "生产数据库", minRelevanceScore: 0 });
    expect(found.results.map((r) => r.memoryKey)).toEqual(["k"]);
    worstSearchMs = Math.max(worstSearchMs, performance.now() - searchStarted);
    searches++;
    await new Promise((r) => setTimeout(r, 10));
  }
  const value = await running;
  return { value, callMs: performance.now() - started, worstSearchMs, searches };
}

describe("RememberConversation refuses requests out of bounds with INVALID_ARGUMENT naming the field", () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["no messages", { messages: [] }, "messages", /^required: the conversation/],
    [
      "no user message",
      { messages: [{ role: "assistant", content: "记住：生产数据库在上海机房" }] },
      "messages",
      /user message/,
    ],
    ["an empty message", { messages: [user("   ")] }, "messages[0].content", /^required: the message's text/],
    ["a message over 20000 characters", { messages: [user("x".repeat(20_001))] }, "messages[0].content", /20000/],
    [
      "more than 200 messages",
      { messages: Array.from({ length: 201 }, (_, i) => user(`第 ${i} 条`)) },
      "messages",
      /at most 200 messages/,
    ],
    ["an unknown role", { messages: [{ role: "robot", content: "hi" }] }, "messages[0].role", /"user"/],
    [
      "an unknown memory type",
      { messages: [user("记住：x")], memoryTypes: ["project_fact", "secrets"] },
      "memory_types[1]",
      new RegExp(MEMORY_KINDS.join(", ")),
    ],
    [
      "more memory types than there are",
      { messages: [user("记住：x")], memoryTypes: [...MEMORY_KINDS, "general"] },
      "memory_types",
      /at most 7/,
    ],
    ["a bad mode", { messages: [user("记住：x")], mode: "magic" }, "mode", /"auto", "llm" or "rules"/],
  ];
  for (const [what, request, field, description] of cases) {
    it(what, async () => {
      const err = await failure(clientFor(account()).rememberConversation(request));
      expect(err.code).toBe(Code.InvalidArgument);
      const named = violations(err);
      expect(named.map((v) => v.field)).toContain(field);
      expect(named.find((v) => v.field === field)!.description).toMatch(description);
    });
  }

  it("a memory type's error lists every valid type", async () => {
    const err = await failure(
      clientFor(account()).rememberConversation({ messages: [user("记住：x")], memoryTypes: ["preferences"] }),
    );
    const description = violations(err).find((v) => v.field === "memory_types[0]")!.description;
    for (const kind of MEMORY_KINDS) expect(description).toContain(kind);
  });

  it("a message time outside what a Timestamp may hold names the message's time", async () => {
    const err = await failure(
      clientFor(account()).rememberConversation({
        messages: [{ role: "user", content: "记住：x", time: { seconds: 999_999_999_999n, nanos: 0 } }],
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(violations(err).map((v) => v.field)).toContain("messages[0].time");
  });

  it("a message time that is not a time, over Connect JSON, is INVALID_ARGUMENT", async () => {
    const res = await fetch(`${server.baseUrl}/contextloader.memrecall.v1.MemRecallService/RememberConversation`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": account() },
      body: JSON.stringify({ messages: [{ role: "user", content: "记住：x", time: "last tuesday" }] }),
    });
    const body = (await res.json()) as { code: string; message: string };
    expect(res.status).toBe(400);
    expect(body.code).toBe("invalid_argument");
    // The Connect codec refuses it before the service reads it: it says what is wrong, not where.
    expect(body.message).toContain("RFC 3339");
  });

  it("the MCP tool remember names the same fields, a bad time as messages[0].time", async () => {
    const mcp = await connectHttp(server.baseUrl, { "x-account-id": account() });
    try {
      const badTime = await callFails(mcp, "remember", {
        messages: [{ role: "user", content: "记住：x", time: "last tuesday" }],
      });
      expect(badTime.code).toBe("INVALID_ARGUMENT");
      expect(fieldsOf(badTime)).toEqual(["messages[0].time"]);
      const badType = await callFails(mcp, "remember", {
        messages: [{ role: "user", content: "记住：x" }],
        memory_types: ["secrets"],
        mode: "magic",
      });
      expect(fieldsOf(badType).sort()).toEqual(["memory_types[0]", "mode"]);
    } finally {
      await mcp.close();
    }
  });

  it("nothing is stored by a refused request", async () => {
    const c = clientFor(account());
    await failure(c.rememberConversation({ messages: [user("记住：生产数据库在上海机房")], mode: "magic" }));
    const found = await c.searchMemories({ query: "生产数据库 上海机房", minRelevanceScore: 0 });
    expect(found.results).toEqual([]);
  });
});

/** Messages built to make the secret patterns (secrets.ts) backtrack, each 20 000 characters. */
const HOSTILE: [string, string][] = [
  ["BEGIN without END", fill("-----BEGIN PRIVATE KEY-----\n")],
  ["BEGIN without END, one line", fill("-----BEGIN RSA PRIVATE KEY-----")],
  ["BEGIN with a long non-key name", fill("-----BEGIN AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")],
  ["password= repeated", fill("password=")],
  ["password = with spaces", fill("password =   ")],
  ["密码是 repeated", fill("密码是")],
  ["a:// runs", fill("a://")],
  ["scheme://user: runs", fill("ab://user:")],
  ["a user part at its bound, no @", `ab://${"u".repeat(128)}:${"p".repeat(19_800)}`],
  ["eyJ runs", fill("eyJ")],
  ["eyJ segments without the third", fill("eyJaaaaaaaa.")],
  ["20000 digits", "1".repeat(20_000)],
  ["phone-like digit runs", fill("13800138000 ")],
  ["Bearer runs", fill("Bearer ")],
  ["sk- runs", fill("sk-")],
  ["-p runs", fill(" -p'")],
  ["backtick runs", fill("`")],
  ["code fences", fill("```\n")],
];

/** The same for issue 31's patterns: statements, provider formats, AWS secret keys by their context. */
const HOSTILE_31: [string, string][] = [
  ["password was set to, repeated", fill("password was set to ")],
  ["requirepass 设置为 repeated", fill("requirepass 设置为")],
  ["密码也是了： repeated", fill("密码也是了：")],
  ["changed … password, no to", fill("changed the admin password ")],
  ["a verb, then 40 characters before the cue", fill(`set ${"a".repeat(38)} pass to `)],
  ["password for the, repeated", fill("password for the ")],
  ["api key is, repeated", fill("api key is ")],
  ["密码 with spaces, repeated", fill("密码 ")],
  ["Slack webhook prefixes", fill("https://hooks.slack.com/services/")],
  ["sk_live_ runs", fill("sk_live_")],
  ["one base64 run", fill("AbCdEf1234/+")],
  ["39-character base64 runs after aws", fill(`aws ${"Ab1".repeat(13)} `)],
  ["AKIA runs", fill("AKIA")],
  ["a private key block in prose, cut", `my key:\n${fill("-----BEGIN EC PRIVATE KEY-----\nAbCd+/==\n", 19_900)}`],
];

describe("RememberConversation over messages built to make the secret scanner backtrack", () => {
  for (const [which, set] of [
    ["every hostile message", HOSTILE],
    ["every hostile message of issue 31's patterns", HOSTILE_31],
  ] as const)
    it(`rules mode: ${which} in one conversation completes in time; another account's search answers meanwhile`, async () => {
      const c = clientFor(account());
      const messages = set.map(([, content]) => user(content));
      const {
        value: r,
        callMs,
        worstSearchMs,
        searches,
      } = await beside(() => c.rememberConversation({ messages, mode: "rules" }));
      expect(callMs).toBeLessThan(CONVERSATION_MS);
      expect(searches).toBeGreaterThan(0);
      expect(worstSearchMs).toBeLessThan(SEARCH_MS);
      expect(r.mode).toBe("rules");
      expect(r.operations.length).toBeLessThanOrEqual(MAX_CANDIDATES);
      // What a hostile message holds that looks like a secret stays out of every summary.
      for (const op of r.operations) expect([...op.summary].length).toBeLessThanOrEqual(120);
    }, 60_000);

  for (const [what, content] of [...HOSTILE, ...HOSTILE_31]) {
    it(`rules mode, ${what}: completes in time`, async () => {
      const started = performance.now();
      await clientFor(account()).rememberConversation({ messages: [user(content)], mode: "rules", dryRun: true });
      expect(performance.now() - started).toBeLessThan(MESSAGE_MS);
    });
  }

  it("LLM mode: the masked prompt is built in time, and holds no run long enough to be a secret", async () => {
    const c = clientFor(account(), withLlm);
    const start = llm.requests.length;
    const messages = [...HOSTILE, ...HOSTILE_31].map(([, content]) => user(content));
    const {
      value: r,
      callMs,
      worstSearchMs,
      searches,
    } = await beside(() => c.rememberConversation({ messages, mode: "llm" }));
    expect(callMs).toBeLessThan(CONVERSATION_MS);
    expect(searches).toBeGreaterThan(0);
    expect(worstSearchMs).toBeLessThan(SEARCH_MS);
    expect(r).toMatchObject({ mode: "llm", llmCalls: 1, operations: [] });
    const prompt = llm.requests[start]!.messages[0]!.content;
    expect(prompt).toContain("⟦secret:");
    expect(prompt).not.toMatch(/-----BEGIN PRIVATE KEY-----/);
  }, 60_000);

  it("many distinct explicit statements (inline commands) in a few messages: completes in time; another account's search answers meanwhile", async () => {
    // Each line is a statement the rules keep: some 1,100 distinct candidates a message, before the 20 are kept.
    const lines = (seed: number) => {
      let s = "";
      for (let i = 0; s.length < 19_950; i++) s += `\`ls -la /d${seed}x${i}\`.\n`;
      return s;
    };
    const c = clientFor(account());
    const messages = Array.from({ length: 4 }, (_, i) => user(lines(i)));
    const {
      value: r,
      callMs,
      worstSearchMs,
      searches,
    } = await beside(() => c.rememberConversation({ messages, mode: "rules", dryRun: true }));
    expect(r.operations).toHaveLength(MAX_CANDIDATES);
    expect(searches).toBeGreaterThan(0);
    expect(worstSearchMs).toBeLessThan(SEARCH_MS);
    expect(callMs).toBeLessThan(CONVERSATION_MS);
  }, 120_000);
});

/** A message with a command in a code block and key=value lines, distinct per `i`. */
const opsMessage = (i: number) =>
  [
    `第 ${i} 个服务这样部署：`,
    "```bash",
    `kubectl rollout restart deploy/svc-${i} -n prod-${i}`,
    "```",
    `replicas_${i}=3`,
    `timeout_${i}=30s`,
    `endpoint_${i}=https://svc-${i}.internal:8443`,
  ].join("\n");

describe("a conversation of 200 messages, each with a code block and key=value lines", () => {
  const messages = Array.from({ length: 200 }, (_, i) => user(opsMessage(i)));

  it("rules mode: completes, with at most 20 operations and a message saying the rest were left", async () => {
    const c = clientFor(account());
    const started = performance.now();
    const r = await c.rememberConversation({ messages, mode: "rules" });
    expect(performance.now() - started).toBeLessThan(2 * CONVERSATION_MS);
    expect(r.operations.length).toBeGreaterThan(0);
    expect(r.operations.length).toBeLessThanOrEqual(MAX_CANDIDATES);
    expect(r.applied).toBe(true);
    expect(r.message).toContain(`only the first ${MAX_CANDIDATES} were handled`);
    // The first statements of the conversation are the ones kept.
    expect(Math.max(...r.operations.flatMap((o) => o.sourceMessages))).toBeLessThan(MAX_CANDIDATES);
  }, 60_000);

  it("LLM mode: one extraction request of bounded size; 20 memories at most", async () => {
    const c = clientFor(account(), withLlm);
    const start = llm.requests.length;
    llm.queue({
      content: JSON.stringify({
        memories: Array.from({ length: MAX_CANDIDATES }, (_, i) => ({
          type: "command",
          content: `kubectl rollout restart deploy/svc-${199 - i} -n prod-${199 - i}`,
          summary: `重启 svc-${199 - i}`,
          source_messages: [199 - i],
        })),
      }),
    } satisfies Reply);
    const r = await c.rememberConversation({ messages, mode: "llm" });
    const sent: ChatRequest[] = llm.requests.slice(start);
    expect(sent).toHaveLength(1);
    const prompt = sent[0]!.messages[0]!.content;
    // 200 messages of some 200 characters fit the prompt whole.
    expect(prompt).toContain("[0] user");
    expect(prompt).toContain("[199] user");
    expect(r.operations).toHaveLength(MAX_CANDIDATES);
    expect(r.added).toBe(MAX_CANDIDATES);
  }, 60_000);

  it("LLM mode, 200 messages of 20 000 characters: the prompt holds the newest messages only, and the answer says so", async () => {
    const c = clientFor(account(), withLlm);
    const start = llm.requests.length;
    const big = Array.from({ length: 200 }, (_, i) =>
      user(`${opsMessage(i)}\n${fill("a very long log output line ", 19_000)}`),
    );
    const r = await c.rememberConversation({ messages: big, mode: "llm" });
    const prompt = llm.requests[start]!.messages[0]!.content;
    expect(prompt.length).toBeLessThan(100_000);
    expect(prompt).toContain("[199] user");
    expect(prompt).not.toContain("[0] user");
    expect(r.message).toContain("the LLM read only its newest");
  }, 60_000);
});

describe("account isolation", () => {
  const CHART = "我喜欢周报里的图表用柱状图。";
  const TALK = [user("记住：我们的生产数据库在上海机房。"), user("以后周报图表改用折线图。")];

  async function seedA(): Promise<{ a: MemClient; keys: string[] }> {
    const a = clientFor(account());
    await a.storeMemory({
      memoryKey: "pref_weekly_chart",
      memoryType: "user_preference",
      summary: "周报图表用柱状图",
      content: CHART,
      statedAt: timestampFromDate(new Date("2026-09-01T08:00:00Z")),
    });
    const r = await a.rememberConversation({ messages: [user("记住：我们的生产数据库在上海机房。")], mode: "rules" });
    return { a, keys: ["pref_weekly_chart", ...r.operations.map((o) => o.memoryKey)] };
  }

  it("rules mode: user B's conversation never finds, supersedes or NOOPs against user A's memories", async () => {
    const { a, keys } = await seedA();
    const before = await Promise.all(keys.map((k) => a.getMemoryDetail({ memoryKey: k })));
    const b = clientFor(account());
    const r = await b.rememberConversation({ messages: TALK, mode: "rules" });
    // For B both are new: A's same statement is not B's, and A's chart preference is not B's to replace.
    expect(r.operations.map((o) => [o.operation, o.supersedes])).toEqual([
      ["ADD", ""],
      ["ADD", ""],
    ]);
    const after = await Promise.all(keys.map((k) => a.getMemoryDetail({ memoryKey: k })));
    expect(after).toEqual(before);
    expect(after[0]!.supersededBy).toBe("");
    // B's memories are B's: A does not see them.
    const seenByA = await a.searchMemories({ query: "周报 图表 折线图", minRelevanceScore: 0 });
    expect(seenByA.results.map((x) => x.memoryKey)).toEqual(["pref_weekly_chart"]);
    // B re-sending is NOOP against B's own memories.
    const again = await b.rememberConversation({ messages: TALK, mode: "rules" });
    expect(again.operations.map((o) => o.operation)).toEqual(["NOOP", "NOOP"]);
  });

  it("LLM mode: user B's run sends no decision request about user A's memories, and leaves them as they were", async () => {
    const a = clientFor(account(), withLlm);
    await a.storeMemory({ memoryKey: "pref_weekly_chart", memoryType: "user_preference", content: CHART });
    const before = await a.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    const b = clientFor(account(), withLlm);
    const start = llm.requests.length;
    llm.queue({
      content: JSON.stringify({
        memories: [
          {
            type: "user_preference",
            content: "以后周报图表改用折线图",
            summary: "周报图表用折线图",
            source_messages: [1],
            changes_previous: true,
          },
        ],
      }),
    });
    const r = await b.rememberConversation({ messages: TALK, mode: "llm" });
    const sent = llm.requests.slice(start);
    expect(sent).toHaveLength(1);
    expect(JSON.stringify(sent)).not.toContain("pref_weekly_chart");
    expect(JSON.stringify(sent)).not.toContain("柱状图");
    expect(r.operations.map((o) => [o.operation, o.supersedes])).toEqual([["ADD", ""]]);
    expect(await a.getMemoryDetail({ memoryKey: "pref_weekly_chart" })).toEqual(before);
  });

  it("the same key in two accounts is two memories: B's write of A's key leaves A's memory alone", async () => {
    const a = clientFor(account());
    const first = await a.rememberConversation({ messages: [user("记住：发布窗口是每周四晚上。")], mode: "rules" });
    const key = first.operations[0]!.memoryKey;
    const before = await a.getMemoryDetail({ memoryKey: key });
    const b = clientFor(account());
    const r = await b.rememberConversation({ messages: [user("记住：发布窗口是每周四晚上。")], mode: "rules" });
    // The key is a digest of the statement: the same in both accounts, and still an ADD for B.
    expect(r.operations.map((o) => [o.operation, o.memoryKey])).toEqual([["ADD", key]]);
    expect(await a.getMemoryDetail({ memoryKey: key })).toEqual(before);
    // B's delete is B's.
    expect((await b.deleteMemory({ memoryKey: key })).deleted).toBe(true);
    expect((await a.getMemoryDetail({ memoryKey: key })).memoryKey).toBe(key);
  });
});
