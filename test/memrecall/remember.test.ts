import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * RememberConversation in rules mode (no LLM configured), through the RPC:
 * the "done when" conversation, a second run, a changed preference,
 * a pasted token, dry runs and the time a memory held.
 */

const TOKEN = "ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg";
const account = () => `u-rem-${randomUUID().slice(0, 8)}`;
/** A message as the RPC takes it: its time as a Timestamp. */
const msg = (role: string, content: string, time?: string) => ({
  role,
  content,
  ...(time ? { time: timestampFromDate(new Date(time)) } : {}),
});
/** Everything an answer says, as text (int64 as strings). */
const textOf = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x));

describe("RememberConversation (rules mode)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const clientFor = (owner: string, scopes = "", language = "") =>
    clientWith(MemRecallService, server.baseUrl, {
      "x-account-id": owner,
      ...(scopes ? { "x-account-scopes": scopes } : {}),
      ...(language ? { "accept-language": language } : {}),
    });

  async function seedChartPreference(c: Client<typeof MemRecallService>) {
    await c.storeMemory({
      memoryKey: "pref_weekly_chart",
      memoryType: "user_preference",
      summary: "周报图表用柱状图",
      content: "我喜欢周报里的图表用柱状图。",
      statedAt: timestampFromDate(new Date("2026-09-01T08:00:00Z")),
    });
  }

  const conversation = [
    msg("user", "早上好！今天天气不错。", "2026-11-20T01:00:00Z"),
    msg("assistant", "早上好，有什么可以帮你？"),
    msg("user", "记住：我们的生产数据库在上海机房。", "2026-11-20T01:01:00Z"),
    msg("user", "我喜欢回复用中文写。", "2026-11-20T01:02:00Z"),
    msg("user", "部署用这个：\n```bash\nkubectl rollout restart deploy/api -n prod\n```", "2026-11-20T01:03:00Z"),
    msg("user", "以后周报图表改用折线图。", "2026-11-20T01:04:00Z"),
    msg("assistant", "好的，都记下了。"),
  ];

  it("keeps three statements and supersedes the changed preference; a second run is all NOOP; Recall finds each", async () => {
    const c = clientFor(account());
    await seedChartPreference(c);
    const first = await c.rememberConversation({ messages: conversation });
    expect(first.mode).toBe("rules");
    expect(first.applied).toBe(true);
    expect(first.operations.map((o) => [o.operation, o.memoryType])).toEqual([
      ["ADD", "project_fact"],
      ["ADD", "user_preference"],
      ["ADD", "command"],
      ["SUPERSEDE", "user_preference"],
    ]);
    expect([first.added, first.updated, first.superseded, first.unchanged]).toEqual([3, 0, 1, 0]);
    const superseding = first.operations[3]!;
    expect(superseding.supersedes).toBe("pref_weekly_chart");
    expect(superseding.sourceMessages).toEqual([5]);
    expect(superseding.statedAt).toEqual(timestampFromDate(new Date("2026-11-20T01:04:00Z")));

    // The old preference holds until the new one was stated; a search shows the new one first.
    const old = await c.getMemoryDetail({ memoryKey: "pref_weekly_chart" });
    expect(old.supersededBy).toBe(superseding.memoryKey);
    expect(old.validUntil).toEqual(timestampFromDate(new Date("2026-11-20T01:04:00Z")));
    const found = await c.searchMemories({ query: "周报 图表", minRelevanceScore: 0 });
    expect(found.results[0]?.memoryKey).toBe(superseding.memoryKey);

    const second = await c.rememberConversation({ messages: conversation });
    expect(second.operations.map((o) => o.operation)).toEqual(["NOOP", "NOOP", "NOOP", "NOOP"]);
    expect(second.applied).toBe(false);
    expect(second.operations.map((o) => o.memoryKey)).toEqual(first.operations.map((o) => o.memoryKey));

    for (const [question, op] of [
      ["按我之前说的，生产数据库在哪个机房？", first.operations[0]!],
      ["回复用什么语言来着，我之前说过我喜欢的", first.operations[1]!],
      ["把那个重启 api 部署的 kubectl 命令再跑一次", first.operations[2]!],
      ["周报的图表按我说的改过的那种画", first.operations[3]!],
    ] as const) {
      let handoff: { relevantMemoryKeys: string[] } | undefined;
      for await (const e of c.recall({ messages: [msg("user", question)], strategy: "deterministic" }))
        if (e.event.case === "handoff") handoff = e.event.value;
      expect(handoff?.relevantMemoryKeys, question).toContain(op.memoryKey);
    }
  });

  it("a dry run decides the same and writes nothing", async () => {
    const c = clientFor(account());
    await seedChartPreference(c);
    const dry = await c.rememberConversation({ messages: conversation, dryRun: true });
    expect(dry.applied).toBe(false);
    expect(dry.operations.map((o) => o.operation)).toEqual(["ADD", "ADD", "ADD", "SUPERSEDE"]);
    expect(dry.message).toBe("dry run, nothing written: added 3, updated 0, superseded 1, already known 0");
    const found = await c.searchMemories({ query: "生产数据库 上海机房", minRelevanceScore: 0 });
    expect(found.results.map((r) => r.memoryKey)).not.toContain(dry.operations[0]!.memoryKey);
    const real = await c.rememberConversation({ messages: conversation });
    expect(real.operations.map((o) => o.memoryKey)).toEqual(dry.operations.map((o) => o.memoryKey));
  });

  it("keeps a pasted token only in a sensitive memory: not in the summary, the keywords, the answer or the log", async () => {
    const owner = account();
    const c = clientFor(owner);
    const r = await c.rememberConversation({
      messages: [msg("user", `记住：CI 用的 GitHub token 是 ${TOKEN}`)],
    });
    expect(r.operations).toHaveLength(1);
    const op = r.operations[0]!;
    expect(op.sensitive).toBe(true);
    expect(textOf(r)).not.toContain(TOKEN);
    const withheld = await c.getMemoryDetail({ memoryKey: op.memoryKey });
    expect(withheld).toMatchObject({ sensitive: true, redacted: true, content: "" });
    expect(withheld.summary).not.toContain(TOKEN);
    expect(withheld.keywords.map((k) => k.keyword).join(" ")).not.toContain(TOKEN.slice(0, 12));
    const shown = await clientFor(owner, "memories:sensitive").getMemoryDetail({ memoryKey: op.memoryKey });
    expect(shown.content).toContain(TOKEN);
    // Found by what the summary says, never by the token.
    const byToken = await c.searchMemories({ query: TOKEN, searchMode: "keyword", minRelevanceScore: 0 });
    expect(byToken.results).toHaveLength(0);
    expect(JSON.stringify(server.logs)).not.toContain(TOKEN);
    expect(server.logs.some((l) => l.msg === "conversation remembered")).toBe(true);
  });

  it("keeps nothing from chit-chat, questions, hypotheticals, one-offs and what the assistant wrote", async () => {
    const c = clientFor(account());
    const chat = {
      messages: [
        msg("user", "哈哈，周末去爬山了，累死了。"),
        msg("user", "我之前说的数据库配置是什么？"),
        msg("user", "如果以后要改成折线图的话怎么做？"),
        msg("user", "这次先用表格吧。"),
        msg("assistant", "建议以后都用 `kubectl apply -f deploy.yaml` 部署。\n```bash\nhelm upgrade api ./chart\n```"),
      ],
    };
    const r = await c.rememberConversation(chat);
    expect(r.operations).toEqual([]);
    expect(r.applied).toBe(false);
    expect(r.message).toContain("rules mode keeps explicit statements only");
    const zh = await clientFor(account(), "", "zh").rememberConversation(chat);
    expect(zh.message).toContain("规则模式只保存明确的陈述");
  });

  it("keeps only the memory types asked for", async () => {
    const c = clientFor(account());
    const r = await c.rememberConversation({ messages: conversation, memoryTypes: ["command"], dryRun: true });
    expect(r.operations.map((o) => o.memoryType)).toEqual(["command"]);
  });

  it("searches the memories as they stood at a time", async () => {
    const c = clientFor(account());
    await seedChartPreference(c);
    await c.rememberConversation({ messages: conversation });
    const before = await c.searchMemories({
      query: "周报 图表",
      minRelevanceScore: 0,
      asOf: timestampFromDate(new Date("2026-10-01T00:00:00Z")),
    });
    expect(before.results.map((r) => r.memoryKey)).toEqual(["pref_weekly_chart"]);
    expect(before.results[0]!.supersededBy).toBe("");
    const now = await c.searchMemories({ query: "周报 图表", minRelevanceScore: 0 });
    const old = now.results.find((r) => r.memoryKey === "pref_weekly_chart");
    expect(old?.supersededBy).not.toBe("");
    expect(old?.validUntil).toEqual(timestampFromDate(new Date("2026-11-20T01:04:00Z")));
  });
});
