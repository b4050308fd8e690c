import { randomUUID } from "node:crypto";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Issue 17: memory search that finds what was meant — in the other language,
 * through a paraphrase the glossary knows, a rare word jieba glues to its
 * neighbours — with scores that mean the same in every mode and language,
 * and the latest of two memories on one subject first.
 */

type MemClient = Client<typeof MemRecallService>;
const MODES = ["keyword", "semantic", "hybrid"] as const;
const clientFor = (server: TestServer) =>
  clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-${randomUUID().slice(0, 8)}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const MEMORIES = [
  {
    memoryKey: "db_prod",
    memoryType: "project_fact",
    summary: "生产环境 PostgreSQL 数据库配置",
    content: "主库 pg-prod.internal:5432，连接池 80，只读从库给报表用。",
  },
  {
    memoryKey: "redis_cache",
    memoryType: "project_fact",
    summary: "Redis cache settings",
    content: "The gateway caches sessions in Redis 7 with maxmemory 2gb and the allkeys-lru eviction policy.",
  },
  {
    memoryKey: "freeze_plan",
    memoryType: "plan",
    summary: "Code freeze for the 618 sale",
    content: "Code freeze starts June 14 and ends June 20; only P0 fixes are allowed.",
  },
  {
    memoryKey: "weekly_0513",
    memoryType: "meeting_note",
    summary: "数据组周会",
    content: "下周开始封版前的回归测试。",
  },
  {
    memoryKey: "mq",
    memoryType: "decision",
    summary: "消息队列选型",
    content: "订单事件走消息队列，积压超过 50 万告警。",
  },
  { memoryKey: "pharma", memoryType: "project_fact", summary: "合作药企", content: "合作的制药企业：甲药业、乙制药。" },
  { memoryKey: "lunch", memoryType: "personal", summary: "午饭", content: "中午一般吃公司楼下的轻食，不吃辣。" },
  {
    memoryKey: "gym",
    memoryType: "personal",
    summary: "Gym schedule",
    content: "Gym on Tuesday and Thursday evenings.",
  },
];

describe("MemRecall search that finds what was meant, with the shipped glossary and local embedder", () => {
  let server: TestServer;
  let c: MemClient;
  beforeAll(async () => {
    server = await startServer();
    c = clientFor(server);
    for (const m of MEMORIES) await c.storeMemory(m);
  });
  afterAll(() => server.close());

  const search = async (query: string, searchMode: string, extra: Record<string, unknown> = {}) =>
    (await c.searchMemories({ query, searchMode, minRelevanceScore: 0, limit: 10, ...extra })).results;

  it("finds a memory in the other language, scored below an exact hit", async () => {
    for (const searchMode of MODES) {
      const [top] = await search("production database configuration", searchMode);
      expect(top?.memoryKey, searchMode).toBe("db_prod");
      expect(top!.relevanceScore, searchMode).toBeLessThan(1);
      // The local embedder ranks it first by the glossary groups both name, but it is lexical: the score is the words'.
      if (searchMode !== "semantic") expect(top!.relevanceScore, searchMode).toBeGreaterThanOrEqual(0.5);
    }
    const [zh] = await search("网关的缓存淘汰策略", "hybrid");
    expect(zh?.memoryKey).toBe("redis_cache");
    expect(zh!.relevanceScore).toBeGreaterThanOrEqual(0.5);
    const exact = await search("PostgreSQL 数据库配置", "keyword");
    expect(exact[0]).toMatchObject({ memoryKey: "db_prod", relevanceScore: 1 });
    for (const r of exact.slice(1)) expect(r.relevanceScore, r.memoryKey).toBeLessThan(0.5);
  });

  it("finds a rare word that jieba joins to the next character (封版前), and hybrid search keeps it", async () => {
    const keyword = await search("封版", "keyword");
    expect(keyword[0]).toMatchObject({ memoryKey: "weekly_0513", relevanceScore: 1 });
    expect(keyword.map((r) => r.memoryKey)).toContain("freeze_plan");
    const hybrid = await search("封版", "hybrid");
    expect(
      hybrid
        .slice(0, 2)
        .map((r) => r.memoryKey)
        .sort(),
    ).toEqual(["freeze_plan", "weekly_0513"]);
    expect(hybrid[0]!.relevanceScore).toBe(1);
    expect(hybrid[1]!.relevanceScore).toBeGreaterThanOrEqual(0.5);
  });

  it("brings glossary terms on word boundaries only: 企业版 is no pharmaceutical company, 消息队列 no column", async () => {
    const enterprise = await c.searchMemories({ query: "企业版", minRelevanceScore: 0 });
    expect(enterprise.searchQueryExpanded.split(", ")).toContain("enterprise edition");
    expect(enterprise.searchQueryExpanded).not.toContain("pharma");
    // The pharma memory holds 企业 (制药企业), a part of the query: found, but no glossary term lifts it.
    for (const r of enterprise.results) expect(r.relevanceScore, r.memoryKey).toBeLessThan(0.5);
    const queue = await c.searchMemories({ query: "消息队列", minRelevanceScore: 0 });
    expect(queue.searchQueryExpanded.split(", ")).toContain("message queue");
    expect(queue.searchQueryExpanded.split(", ")).not.toContain("column");
    expect(queue.results[0]).toMatchObject({ memoryKey: "mq", relevanceScore: 1 });
  });

  it("keeps unrelated memories below 0.5 in every mode, for Chinese and English queries alike", async () => {
    for (const query of [
      "周末去哪里爬山",
      "推荐几只股票",
      "how to bake sourdough bread",
      "best marathon running shoes",
    ]) {
      for (const searchMode of MODES) {
        for (const r of await search(query, searchMode)) {
          expect(r.relevanceScore, `${searchMode} "${query}" → ${r.memoryKey}`).toBeLessThan(0.5);
        }
        // With the default threshold (0.5), nothing comes back.
        expect((await c.searchMemories({ query, searchMode })).results, `${searchMode} "${query}"`).toEqual([]);
      }
    }
  });

  it("gives 1.0 only to an exact hit: every word of the query held, in keyword and hybrid search", async () => {
    expect((await search("Redis maxmemory", "keyword"))[0]).toMatchObject({
      memoryKey: "redis_cache",
      relevanceScore: 1,
    });
    expect((await search("Redis maxmemory", "hybrid"))[0]).toMatchObject({
      memoryKey: "redis_cache",
      relevanceScore: 1,
    });
    // The same memory by meaning only: a high score, not an exact one.
    const [semantic] = await search("Redis maxmemory", "semantic");
    expect(semantic?.memoryKey).toBe("redis_cache");
    expect(semantic!.relevanceScore).toBeLessThan(1);
    // Every score of 1 in these searches belongs to a memory holding every word of its query.
    for (const query of ["数据库配置", "cache eviction", "Gym", "午饭 不吃辣"]) {
      for (const searchMode of MODES) {
        for (const r of (await search(query, searchMode)).filter((x) => x.relevanceScore === 1)) {
          const m = MEMORIES.find((x) => x.memoryKey === r.memoryKey)!;
          const text = `${m.summary} ${m.content}`.toLowerCase();
          for (const word of query.toLowerCase().split(/\s+/))
            expect(text, `${query} → ${r.memoryKey}`).toContain(word);
        }
      }
    }
  });

  it("puts the most recently written first among equally relevant memories", async () => {
    const own = clientFor(server);
    await own.storeMemory({ memoryKey: "first", content: "防火墙规则：只开放 443" });
    await sleep(5);
    await own.storeMemory({ memoryKey: "second", content: "防火墙规则：只开放 443" });
    const { results } = await own.searchMemories({ query: "防火墙规则", searchMode: "keyword" });
    expect(results.map((r) => [r.memoryKey, r.relevanceScore])).toEqual([
      ["second", 1],
      ["first", 1],
    ]);
  });
});

describe("latest wins: of two memories on one subject, the newer first, marked", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("shows a preference stored as superseding an older one first, and the older one as superseded by it", async () => {
    const c = clientFor(server);
    await c.storeMemory({
      memoryKey: "tz_old",
      memoryType: "user_preference",
      summary: "Timezone for reports: UTC",
      content: "Show all timestamps in reports in UTC.",
    });
    await sleep(5);
    const stored = await c.storeMemory({
      memoryKey: "tz_new",
      memoryType: "user_preference",
      summary: "Timezone changed to Beijing time",
      content: "Show times in Asia/Shanghai.",
      supersedes: "tz_old",
    });
    expect(stored.memoryKey).toBe("tz_new");
    const { results } = await c.searchMemories({ query: "report timezone", minRelevanceScore: 0 });
    expect(results.slice(0, 2).map((r) => [r.memoryKey, r.supersedes, r.supersededBy])).toEqual([
      ["tz_new", ["tz_old"], ""],
      ["tz_old", [], "tz_new"],
    ]);
    expect(results[1]!.relevanceScore).toBeLessThanOrEqual(results[0]!.relevanceScore);
    // Found alone (only it says UTC), the old one still says what replaced it, at half its relevance (an exact hit: 1).
    const alone = await c.searchMemories({ query: "timestamps in UTC", searchMode: "keyword", minRelevanceScore: 0 });
    expect(alone.results[0]).toMatchObject({ memoryKey: "tz_old", supersededBy: "tz_new", relevanceScore: 0.5 });
    expect(await c.getMemoryDetail({ memoryKey: "tz_old" })).toMatchObject({ supersedes: "", supersededBy: "tz_new" });
    expect(await c.getMemoryDetail({ memoryKey: "tz_new" })).toMatchObject({ supersedes: "tz_old", supersededBy: "" });
  });

  it("finds without being told that a newer preference on the same subject changes the older one", async () => {
    const c = clientFor(server);
    await c.storeMemory({
      memoryKey: "chart_old",
      memoryType: "user_preference",
      summary: "图表偏好：柱状图",
      content: "用户说：看趋势的时候我习惯用柱状图。",
    });
    await sleep(5);
    await c.storeMemory({
      memoryKey: "chart_new",
      memoryType: "user_preference",
      summary: "图表偏好改了：趋势用折线图",
      content: "用户更正：以后看趋势都画折线图，柱状图只用来比较类别。",
    });
    await c.storeMemory({
      memoryKey: "chart_colours",
      memoryType: "user_preference",
      summary: "图表配色",
      content: "图表用品牌绿，不要红绿搭配。",
    });
    const { results } = await c.searchMemories({ query: "用户喜欢用什么图表看趋势", minRelevanceScore: 0 });
    const shown = Object.fromEntries(results.map((r) => [r.memoryKey, r]));
    expect(results[0]?.memoryKey).toBe("chart_new");
    expect(shown["chart_new"]).toMatchObject({ supersedes: ["chart_old"], supersededBy: "" });
    expect(shown["chart_old"]).toMatchObject({ supersedes: [], supersededBy: "chart_new" });
    // Another subject of the same type is not replaced.
    expect(shown["chart_colours"]?.supersededBy ?? "").toBe("");
  });

  it("refuses a supersedes that names no memory of the caller's, the memory itself, or one replacing it", async () => {
    const c = clientFor(server);
    await c.storeMemory({ memoryKey: "a", content: "第一版" });
    await c.storeMemory({ memoryKey: "b", content: "第二版", supersedes: "a" });
    const cases = [
      { memoryKey: "c", supersedes: "nope", problem: "you have no memory with the key nope" },
      { memoryKey: "c", supersedes: "c", problem: "a memory cannot supersede itself" },
      { memoryKey: "a", supersedes: "b", problem: "b already replaces a" },
    ];
    for (const { problem, ...req } of cases) {
      const err = await failure(c.storeMemory({ ...req, content: "x" }));
      expect(err.code, problem).toBe(Code.InvalidArgument);
      const violation = err.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!;
      expect(violation.field).toBe("supersedes");
      expect(violation.description).toContain(problem);
    }
    // Another account's key is no key of the caller's.
    const other = clientFor(server);
    expect((await failure(other.storeMemory({ memoryKey: "z", content: "x", supersedes: "a" }))).code).toBe(
      Code.InvalidArgument,
    );
  });
});

describe("semantic search with an embeddings endpoint (EMBEDDINGS_BASE_URL)", () => {
  let embeddings: ScriptedLlm;
  let withEndpoint: TestServer;
  let local: TestServer;
  const expense = {
    memoryKey: "expense",
    summary: "报销流程",
    content: "发票拍照上传到费控系统，主管审批后月底到账。",
  };
  const others = [
    { memoryKey: "lunch", summary: "Lunch", content: "No spicy food at lunch." },
    { memoryKey: "redis", summary: "Redis cache settings", content: "maxmemory 2gb, allkeys-lru." },
  ];
  beforeAll(async () => {
    // A model that knows 报销 is an expense claim (the glossary does not), and what lunch is.
    embeddings = await startScriptedLlm(undefined, {
      concepts: [
        ["报销", "expense claim", "reimbursement"],
        ["lunch", "午饭"],
      ],
      lexicalWeight: 0.3,
    });
    // The fixed range, not the probe's: this model knows two concepts and is the local lexical embedder
    // for everything else, so the probe (which names neither) rightly finds its cosines weak.
    withEndpoint = await startServer({
      EMBEDDINGS_BASE_URL: embeddings.baseUrl,
      EMBEDDINGS_MODEL: "scripted-embed",
      MEMRECALL_CALIBRATION_TIMEOUT_MS: "0",
    });
    local = await startServer();
  });
  afterAll(async () => {
    await Promise.all([withEndpoint.close(), local.close()]);
    await embeddings.close();
  });

  it("finds by the endpoint's meaning what the glossary does not know, below 1, and unrelated memories not at all", async () => {
    const c = clientFor(withEndpoint);
    for (const m of [expense, ...others]) await c.storeMemory(m);
    const { results } = await c.searchMemories({ query: "how do I file an expense claim", searchMode: "semantic" });
    expect(results.map((r) => r.memoryKey)).toEqual(["expense"]);
    expect(results[0]!.relevanceScore).toBeGreaterThanOrEqual(0.5);
    expect(results[0]!.relevanceScore).toBeLessThan(1);
    const all = await c.searchMemories({
      query: "how do I file an expense claim",
      searchMode: "semantic",
      minRelevanceScore: 0,
    });
    for (const r of all.results.filter((x) => x.memoryKey !== "expense")) expect(r.relevanceScore).toBeLessThan(0.5);
    // Stored memories and the query were embedded by the endpoint, with its model.
    const inputs = embeddings.embeddingRequests.flatMap((r) => r.input);
    expect(embeddings.embeddingRequests.every((r) => r.model === "scripted-embed")).toBe(true);
    expect(inputs).toContain("how do I file an expense claim");
    expect(inputs.some((t) => t.includes("发票拍照上传"))).toBe(true);
  });

  it("is what finds it: the local embedder and the glossary alone do not", async () => {
    const c = clientFor(local);
    for (const m of [expense, ...others]) await c.storeMemory(m);
    const { results } = await c.searchMemories({ query: "how do I file an expense claim", searchMode: "semantic" });
    expect(results.map((r) => r.memoryKey)).not.toContain("expense");
  });
});
