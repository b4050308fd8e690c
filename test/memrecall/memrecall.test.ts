import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

type MemClient = Client<typeof MemRecallService>;

/** A MemRecall client calling as `account` (no x-account-id when "") of account type `type`, in `language` when given. */
function clientFor(server: TestServer, account: string, type = "user", language?: "en" | "zh"): MemClient {
  return clientWith(MemRecallService, server.baseUrl, {
    ...(account !== "" ? { "x-account-id": account } : {}),
    "x-account-type": type,
    ...(language ? { "accept-language": language } : {}),
  });
}

const DB_CONFIG = {
  memoryKey: "db_config_001",
  memoryType: "project_fact",
  summary: "生产环境 PostgreSQL 数据库配置",
  content:
    "数据库配置：host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200，只读副本 pg-ro.internal。",
  metadata: { source: "chat", turn: 12 },
};
const REDIS_NOTE = {
  memoryKey: "redis_cache_002",
  memoryType: "project_fact",
  summary: "Redis cache settings for the API gateway",
  content: "The gateway caches sessions in Redis 7 with maxmemory 2gb and the allkeys-lru eviction policy.",
};
const PREFERENCE = {
  memoryKey: "pref_chart_003",
  memoryType: "user_preference",
  summary: "用户偏好：图表用折线图，配色深色主题",
  content: "用户说过：以后画趋势图都用折线图，深色主题，不要饼图。",
};

/** Each test gets its own account, so caches and memories never leak between tests. */
const account = () => `u-${randomUUID().slice(0, 8)}`;

describe("MemRecall over the default SQLite store, without an LLM", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("stores a memory and finds it at once in every mode, even after an empty search was cached", async () => {
    const c = clientFor(server, account());
    expect((await c.searchMemories({ query: "数据库配置", searchMode: "keyword" })).results).toEqual([]);
    const stored = await c.storeMemory(DB_CONFIG);
    expect(stored).toMatchObject({ memoryKey: "db_config_001", created: true, contentTruncated: false });
    expect(stored.keywords.map((k) => k.keyword)).toEqual(expect.arrayContaining(["数据库"]));
    await c.storeMemory(REDIS_NOTE);
    await c.storeMemory(PREFERENCE);

    for (const searchMode of ["keyword", "semantic", "hybrid"]) {
      const res = await c.searchMemories({ query: "我之前的数据库配置", searchMode });
      expect(res.success).toBe(true);
      expect(res.results[0]?.memoryKey, searchMode).toBe("db_config_001");
      expect(res.totalFound).toBe(res.results.length);
      const top = res.results[0]!;
      expect(top.relevanceScore).toBeGreaterThanOrEqual(0.5);
      expect(top.relevanceScore).toBeLessThanOrEqual(1);
      expect(top).toMatchObject({
        summary: DB_CONFIG.summary,
        contentPreview: DB_CONFIG.content,
        memoryType: "project_fact",
      });
      expect(top.createdAt!.seconds).toBeGreaterThan(0n);
    }
  });

  it("returns the whole memory with GetMemoryDetail, and the spec's NOT_FOUND for a key the caller lacks", async () => {
    const c = clientFor(server, account());
    await c.storeMemory({ ...DB_CONFIG, keywords: [{ keyword: "数据库", weight: 0.9 }] });
    const m = await c.getMemoryDetail({ memoryKey: "db_config_001" });
    expect(m).toMatchObject({
      success: true,
      memoryKey: "db_config_001",
      summary: DB_CONFIG.summary,
      content: DB_CONFIG.content,
      memoryType: "project_fact",
      metadata: { source: "chat", turn: 12 },
      keywords: [expect.objectContaining({ keyword: "数据库", weight: 0.9 })],
      contentTruncated: false,
    });
    const err = await failure(c.getMemoryDetail({ memoryKey: "nope_404" }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe("memory not found: nope_404");
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("MEMORY_NOT_FOUND");
    expect(err.findDetails(AgentHintSchema)[0]?.nextRpc).toBe(
      "contextloader.memrecall.v1.MemRecallService/SearchMemories",
    );
  });

  it("keeps users apart: B cannot read, find, overwrite or delete A's memory, even knowing its key", async () => {
    const a = clientFor(server, account());
    const bAccount = account();
    const b = clientFor(server, bAccount);
    const bInChinese = clientFor(server, bAccount, "user", "zh");
    await a.storeMemory(DB_CONFIG);
    // The hot-memory cache is warm for A: B must still not see it.
    await a.getMemoryDetail({ memoryKey: "db_config_001" });

    const read = await failure(b.getMemoryDetail({ memoryKey: "db_config_001" }));
    expect([read.code, read.rawMessage]).toEqual([Code.NotFound, "memory not found: db_config_001"]);
    // In Chinese, the spec's own words (§2.2).
    const inChinese = await failure(bInChinese.getMemoryDetail({ memoryKey: "db_config_001" }));
    expect(inChinese.rawMessage).toBe("未找到记忆: db_config_001");
    for (const searchMode of ["keyword", "semantic", "hybrid"]) {
      expect((await b.searchMemories({ query: "数据库配置", searchMode, minRelevanceScore: 0 })).results).toEqual([]);
    }
    expect((await b.deleteMemory({ memoryKey: "db_config_001" })).deleted).toBe(false);
    // B's store under the same key is B's own memory.
    expect((await b.storeMemory({ ...DB_CONFIG, content: "B 的内容" })).created).toBe(true);
    expect((await a.getMemoryDetail({ memoryKey: "db_config_001" })).content).toBe(DB_CONFIG.content);
    expect((await b.getMemoryDetail({ memoryKey: "db_config_001" })).content).toBe("B 的内容");

    // The same id under another account type is another owner.
    const sameIdApp = clientFor(server, "shared-id", "app");
    const sameIdUser = clientFor(server, "shared-id", "user");
    await sameIdUser.storeMemory(PREFERENCE);
    expect((await failure(sameIdApp.getMemoryDetail({ memoryKey: "pref_chart_003" }))).code).toBe(Code.NotFound);
  });

  it("replaces by key, deletes, and the next search reflects both at once", async () => {
    const c = clientFor(server, account());
    await c.storeMemory(DB_CONFIG);
    expect(
      (await c.searchMemories({ query: "连接池", searchMode: "keyword" })).results.map((r) => r.memoryKey),
    ).toEqual(["db_config_001"]);
    const replaced = await c.storeMemory({
      ...DB_CONFIG,
      summary: "MySQL 配置",
      content: "MySQL host=mysql.internal port=3306",
    });
    expect(replaced.created).toBe(false);
    expect((await c.searchMemories({ query: "连接池", searchMode: "keyword" })).results).toEqual([]);
    expect((await c.getMemoryDetail({ memoryKey: "db_config_001" })).summary).toBe("MySQL 配置");
    expect((await c.deleteMemory({ memoryKey: "db_config_001" })).deleted).toBe(true);
    expect((await c.searchMemories({ query: "MySQL", searchMode: "keyword" })).results).toEqual([]);
    expect((await failure(c.getMemoryDetail({ memoryKey: "db_config_001" }))).code).toBe(Code.NotFound);
  });

  it("truncates content over 100 KB at a character boundary and flags it", async () => {
    const c = clientFor(server, account());
    const content = "配置".repeat(20_000); // 120 000 bytes of UTF-8
    const stored = await c.storeMemory({ memoryKey: "big", summary: "大段配置", content });
    expect(stored.contentTruncated).toBe(true);
    const m = await c.getMemoryDetail({ memoryKey: "big" });
    expect(m.contentTruncated).toBe(true);
    expect(Buffer.byteLength(m.content)).toBeLessThanOrEqual(100 * 1024);
    expect(Buffer.byteLength(m.content)).toBeGreaterThan(100 * 1024 - 3);
    expect(content.startsWith(m.content)).toBe(true);
  });

  it("applies memory_types, keywords and time_range_days before ranking, and limit and min_relevance_score after", async () => {
    const c = clientFor(server, account());
    await c.storeMemory({ ...DB_CONFIG, keywords: [{ keyword: "database", weight: 1 }] });
    await c.storeMemory(REDIS_NOTE);
    await c.storeMemory(PREFERENCE);
    const keys = async (req: Parameters<MemClient["searchMemories"]>[0]) =>
      (await c.searchMemories(req)).results.map((r) => r.memoryKey).sort();

    expect(await keys({ query: "配置 settings 偏好", minRelevanceScore: 0, memoryTypes: ["user_preference"] })).toEqual(
      ["pref_chart_003"],
    );
    expect(await keys({ query: "配置 settings", minRelevanceScore: 0, keywords: ["DATABASE"] })).toEqual([
      "db_config_001",
    ]);
    expect(await keys({ query: "配置 settings 偏好", minRelevanceScore: 0, timeRangeDays: 1 })).toHaveLength(3);
    expect(await keys({ query: "配置 settings 偏好 redis 数据库", minRelevanceScore: 0, limit: 1 })).toHaveLength(1);
    const strict = await c.searchMemories({
      query: "Redis 缓存 数据库 折线图 偏好",
      searchMode: "keyword",
      minRelevanceScore: 1,
    });
    expect(strict.results).toEqual([]);
    expect(strict.message).toContain("min_relevance_score");
  });

  it("allows three searches per recall session, then tells the agent to hand off", async () => {
    const c = clientFor(server, account());
    const session = randomUUID();
    for (let i = 0; i < 3; i++) await c.searchMemories({ query: `方案 ${i}`, sessionId: session });
    const err = await failure(c.searchMemories({ query: "方案 4", sessionId: session }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("SEARCH_LIMIT_REACHED");
    expect(err.findDetails(AgentHintSchema)[0]?.nextRpc).toBe("contextloader.memrecall.v1.MemRecallService/Handoff");
    // Another session, and searches without one, are not limited by it.
    await c.searchMemories({ query: "方案", sessionId: randomUUID() });
    await c.searchMemories({ query: "方案" });
  });

  it("extracts keywords locally without an LLM, typed, and says so", async () => {
    const c = clientFor(server, account());
    const r = await c.extractSearchKeywords({ query: "上周我配置的生产环境 PostgreSQL 数据库连接池", maxKeywords: 4 });
    expect(r).toMatchObject({ success: true, method: "fallback" });
    expect(r.message).toContain("LLM_BASE_URL");
    expect(r.keywords).toHaveLength(4);
    expect(r.keywords).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ keyword: "上周", type: "time" }),
        expect.objectContaining({ keyword: "PostgreSQL", type: "entity" }),
      ]),
    );
    for (const k of r.keywords) {
      expect(k.weight).toBeGreaterThan(0);
      expect(k.weight).toBeLessThanOrEqual(1);
    }
  });

  it("lists the five spec tools as OpenAI function definitions built from the validation schemas", async () => {
    const { tools } = await clientFor(server, account()).listTools({});
    expect(tools.map((t) => t.function!.name)).toEqual([
      "search_memories",
      "get_memory_detail",
      "extract_search_keywords",
      "expand_context_window",
      "handoff",
    ]);
    expect(tools.every((t) => t.type === "function")).toBe(true);
    const search = tools[0]!.function!;
    expect(search.description).toContain('有明确关键词时使用 search_mode="keyword"');
    const params = search.parameters as {
      required: string[];
      properties: Record<string, { enum?: string[]; maximum?: number; default?: unknown }>;
    };
    expect(params.required).toEqual(["query"]);
    expect(params.properties["search_mode"]!.enum).toEqual(["semantic", "keyword", "hybrid"]);
    expect(params.properties["limit"]).toMatchObject({ maximum: 10, default: 5 });
    expect((tools[4]!.function!.parameters as { required: string[] }).required).toEqual(
      expect.arrayContaining(["reason", "search_summary", "confidence"]),
    );
  });

  it("rejects bad input with field violations, and calls without an account", async () => {
    const c = clientFor(server, account());
    const err = await failure(c.searchMemories({ query: "x", searchMode: "fuzzy", limit: 11 }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(
      err
        .findDetails(BadRequestSchema)[0]!
        .fieldViolations.map((v) => v.field)
        .sort(),
    ).toEqual(["limit", "search_mode"]);
    const noContent = await failure(c.storeMemory({ memoryKey: "k" }));
    expect(noContent.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!.field).toBe("content");
    // NUL cannot be stored in PostgreSQL: refused on every store alike.
    const nul = await failure(c.storeMemory({ memoryKey: "k", content: "a\u0000b", metadata: { note: "x\u0000" } }));
    expect(
      nul
        .findDetails(BadRequestSchema)[0]!
        .fieldViolations.map((v) => v.field)
        .sort(),
    ).toEqual(["content", "metadata"]);

    // Binary proto can carry NaN in a Struct, which JSON cannot: a bad request, not a server error.
    const binary = createClient(
      MemRecallService,
      createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
    );
    const nan = await failure(
      binary.storeMemory(
        { memoryKey: "k", content: "x", metadata: { ratio: Number.NaN } },
        { headers: { "x-account-id": account() } },
      ),
    );
    expect(nan.code).toBe(Code.InvalidArgument);

    const nobody = await failure(clientFor(server, "").searchMemories({ query: "x" }));
    expect([nobody.code, nobody.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual([
      Code.Unauthenticated,
      "ACCOUNT_REQUIRED",
    ]);
    const anonymous = await failure(clientFor(server, "guest", "anonymous").storeMemory(DB_CONFIG));
    expect([anonymous.code, anonymous.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual([
      Code.PermissionDenied,
      "ANONYMOUS_NOT_ALLOWED",
    ]);
  });
});

describe("MemRecall with an LLM", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted", LLM_TIMEOUT_MS: "500" });
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });

  it("extracts keywords with the spec's prompt, clamping weights and reading unknown types as concept", async () => {
    llm.queue({
      content: JSON.stringify({
        keywords: [
          { keyword: "数据库", weight: 1.4, type: "concept" },
          { keyword: "上周", weight: 0.6, type: "time" },
          { keyword: "重启", weight: 0.5, type: "verb" },
          { keyword: "数据库", weight: 0.3, type: "concept" },
        ],
        expanded_query: "上周数据库重启的记录",
      }),
    });
    const before = llm.requests.length;
    const r = await clientFor(server, account()).extractSearchKeywords({
      query: "上周数据库重启",
      context: "运维对话",
      maxKeywords: 3,
    });
    const prompt = llm.requests[before]!.messages[0]!.content;
    expect(prompt).toContain("从以下查询中提取搜索关键词。");
    expect(prompt).toContain("上下文: 运维对话");
    expect(prompt).toContain("请提取最多 3 个关键词");
    expect(r).toMatchObject({
      success: true,
      method: "llm",
      expandedQuery: "上周数据库重启的记录",
      keywords: [
        { keyword: "数据库", weight: 1, type: "concept" },
        { keyword: "上周", weight: 0.6, type: "time" },
        { keyword: "重启", weight: 0.5, type: "concept" },
      ],
    });
  });

  it("falls back to the local extraction, labelled, when the LLM answers garbage", async () => {
    llm.queue({ content: "I cannot help with that." });
    const r = await clientFor(server, account()).extractSearchKeywords({ query: "上周数据库重启" });
    expect(r.method).toBe("fallback");
    expect(r.message).toBe("the LLM's answer was not the agreed JSON: extracted locally");
    llm.queue({ content: "I cannot help with that." });
    const zh = await clientFor(server, account(), "user", "zh").extractSearchKeywords({ query: "上周数据库重启" });
    expect(zh.message).toBe("LLM 的回答不是约定的 JSON，已使用本地提取");
    expect(r.keywords.map((k) => k.keyword)).toContain("数据库");
  });

  it("expands a hybrid query with the LLM, finds a memory in the other language, and caches the expansion", async () => {
    const c = clientFor(server, account());
    await c.storeMemory(REDIS_NOTE);
    await c.storeMemory(DB_CONFIG);
    llm.setFallback(() => ({
      content: JSON.stringify({
        keywords: [
          { keyword: "Redis", weight: 0.9, type: "entity" },
          { keyword: "cache", weight: 0.8, type: "concept" },
        ],
        expanded_query: "redis cache eviction settings",
      }),
    }));
    const before = llm.requests.length;
    const res = await c.searchMemories({ query: "网关的缓存淘汰策略" });
    // The glossary's equivalents (缓存 → cache, …) and the LLM's terms.
    expect(res.searchQueryExpanded.split(", ")).toEqual(
      expect.arrayContaining(["cache", "eviction", "Redis", "redis cache eviction settings"]),
    );
    expect(res.results[0]?.memoryKey).toBe("redis_cache_002");
    expect(llm.requests.length - before).toBe(1);
    // A different limit misses the result cache but not the expansion cache.
    await c.searchMemories({ query: "网关的缓存淘汰策略", limit: 3 });
    expect(llm.requests.length - before).toBe(1);
    // Keyword mode never asks the LLM.
    await c.searchMemories({ query: "换个问题", searchMode: "keyword" });
    expect(llm.requests.length - before).toBe(1);
  });

  it("still searches on the query when the LLM is down, and says so", async () => {
    const c = clientFor(server, account());
    await c.storeMemory(DB_CONFIG);
    llm.setFallback(() => ({ status: 503, body: '{"error":"down"}' }));
    const res = await c.searchMemories({ query: "数据库连接池配置" });
    expect(res.results[0]?.memoryKey).toBe("db_config_001");
    expect(res.searchQueryExpanded).not.toContain("Redis");
    expect(res.searchQueryExpanded.split(", ")).toContain("database");
    expect(res.message).toBe(
      "query expansion unavailable (the LLM endpoint answered HTTP 503): searched on the query as given",
    );
    const zh = await clientFor(server, account(), "user", "zh").searchMemories({ query: "数据库连接池配置" });
    expect(zh.message).toContain("查询扩展不可用（LLM 端点返回了 HTTP 503），已按原查询搜索");
  });

  it("rewrites a paraphrase into the words a memory uses, and finds a memory the query shares no word with", async () => {
    const c = clientFor(server, account());
    await c.storeMemory({
      memoryKey: "bastion_001",
      memoryType: "project_fact",
      summary: "Production access",
      content: "SSH to production goes through the bastion host at 10.20.0.5.",
    });
    const query = "上生产之前要先连的那台跳转机器";
    const before = llm.requests.length;
    llm.setFallback((req) =>
      req.messages[0]!.content.includes(query)
        ? {
            content: JSON.stringify({ terms: ["堡垒机", "bastion host", "jump server"], expanded_query: "堡垒机地址" }),
          }
        : { content: "{}" },
    );
    // Every result: with the local embedder, whose evidence counts little beside the words, the rewrite's
    // terms lift the memory (it holds "bastion host") but not far (0.07: a third of the terms are held).
    const withRewrite = await c.searchMemories({ query, minRelevanceScore: 0 });
    expect(withRewrite.results[0]?.memoryKey).toBe("bastion_001");
    expect(withRewrite.searchQueryExpanded.split(", ")).toEqual(
      expect.arrayContaining(["堡垒机", "bastion host", "jump server", "堡垒机地址"]),
    );
    // One request, with the rewrite's prompt: the other language, synonyms, the name of what is described.
    expect(llm.requests.length - before).toBe(1);
    expect(llm.requests.at(-1)!.messages[0]!.content).toContain("没有说出名字的事物的常用名称");
    // Keyword mode asks no LLM: the query alone holds only 生产 (production) of the memory.
    const keywordOnly = await c.searchMemories({ query, searchMode: "keyword", minRelevanceScore: 0 });
    const unaided = keywordOnly.results.find((r) => r.memoryKey === "bastion_001")?.relevanceScore ?? 0;
    expect(withRewrite.results[0]!.relevanceScore).toBeGreaterThan(2 * unaided);
  });

  it("keeps ten of a hostile rewrite's terms, and none too long to be a search term", async () => {
    const c = clientFor(server, account());
    await c.storeMemory(DB_CONFIG);
    const terms = [`${"x".repeat(5000)}`, ...Array.from({ length: 500 }, (_, i) => `term${i}`)];
    llm.setFallback(() => ({ content: JSON.stringify({ terms, expanded_query: "y".repeat(100_000) }) }));
    const res = await c.searchMemories({ query: "数据库连接池有多大" });
    const expanded = res.searchQueryExpanded.split(", ");
    expect(expanded.filter((t) => /^term\d+$/.test(t))).toEqual(Array.from({ length: 10 }, (_, i) => `term${i}`));
    expect(expanded.every((t) => t.length <= 240)).toBe(true);
  });

  it("gives a slow LLM one attempt within its timeout, then searches on the query and says so", async () => {
    const c = clientFor(server, account());
    await c.storeMemory(DB_CONFIG);
    llm.setFallback(() => ({ delayMs: 1500, content: JSON.stringify({ terms: ["too late"] }) }));
    const before = llm.requests.length;
    const res = await c.searchMemories({ query: "数据库连接池的大小" });
    // Not waited for: the LLM's terms (at 1.5 s, past its 500 ms timeout) are not in the search, whatever the machine's load.
    expect(llm.requests.length - before).toBe(1);
    expect(res.results[0]?.memoryKey).toBe("db_config_001");
    expect(res.message).toContain("query expansion unavailable (the LLM did not answer within 500 ms)");
    expect(res.searchQueryExpanded).not.toContain("too late");
  });
});

describe("MemRecall search before and after the user's index loads", () => {
  const dir = mkdtempSync(join(tmpdir(), "memrecall-index-"));
  const path = join(dir, "memories.sqlite");
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ SQLITE_PATH: path });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gives the same keys and scores, whatever other users store", async () => {
    const other = clientFor(server, account());
    for (let i = 0; i < 120; i++)
      await other.storeMemory({ memoryKey: `k8s_${i}`, summary: "kubernetes 集群", content: `kubernetes node ${i}` });
    const who = account();
    const c = clientFor(server, who);
    for (let i = 0; i < 60; i++)
      await c.storeMemory({ memoryKey: `cfg_${i}`, summary: "配置", content: `配置项 ${i}` });
    await c.storeMemory({ memoryKey: "m", summary: "kubernetes 部署配置", content: "kubernetes 部署的配置" });

    // A fresh server: nothing of this user is loaded, so the first search reads the store's full-text index.
    await server.close();
    server = await startServer({ SQLITE_PATH: path });
    const fresh = clientFor(server, who);
    const cold = await fresh.searchMemories({ query: "kubernetes 配置", searchMode: "keyword", limit: 10 });
    await new Promise((r) => setTimeout(r, 300));
    // limit 9 misses the result cache; the index has loaded meanwhile.
    const warm = await fresh.searchMemories({ query: "kubernetes 配置", searchMode: "keyword", limit: 9 });
    expect(cold.results[0]?.memoryKey).toBe("m");
    expect(warm.results.map((r) => [r.memoryKey, r.relevanceScore])).toEqual(
      cold.results.slice(0, 9).map((r) => [r.memoryKey, r.relevanceScore]),
    );
  });

  it("leaves out memories older than time_range_days, before and after the index loads", async () => {
    const who = account();
    const c = clientFor(server, who);
    await c.storeMemory({ memoryKey: "old", summary: "旧的数据库配置", content: "数据库配置 十天前" });
    await c.storeMemory({ memoryKey: "new", summary: "新的数据库配置", content: "数据库配置 今天" });
    await server.close();
    const db = new Database(path);
    db.prepare("UPDATE memories SET created_at = created_at - ? WHERE user_id = ? AND memory_key = 'old'").run(
      10 * 86_400_000,
      `user:${who}`,
    );
    db.close();
    server = await startServer({ SQLITE_PATH: path });
    const fresh = clientFor(server, who);
    const cold = await fresh.searchMemories({
      query: "数据库配置",
      searchMode: "keyword",
      timeRangeDays: 5,
      minRelevanceScore: 0,
    });
    await new Promise((r) => setTimeout(r, 300));
    const warm = await fresh.searchMemories({
      query: "数据库配置",
      searchMode: "hybrid",
      timeRangeDays: 5,
      minRelevanceScore: 0,
    });
    const all = await fresh.searchMemories({
      query: "数据库配置",
      searchMode: "hybrid",
      timeRangeDays: 30,
      minRelevanceScore: 0,
    });
    expect(cold.results.map((r) => r.memoryKey)).toEqual(["new"]);
    expect(warm.results.map((r) => r.memoryKey)).toEqual(["new"]);
    expect(all.results.map((r) => r.memoryKey).sort()).toEqual(["new", "old"]);
  });
});

describe("MemRecall durability", () => {
  const dir = mkdtempSync(join(tmpdir(), "memrecall-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("finds a memory after the server restarts on the same SQLite file", async () => {
    const env = { SQLITE_PATH: join(dir, "memories.sqlite") };
    const who = account();
    const first = await startServer(env);
    await clientFor(first, who).storeMemory(DB_CONFIG);
    await first.close();
    const second = await startServer(env);
    try {
      const c = clientFor(second, who);
      expect((await c.searchMemories({ query: "数据库配置" })).results[0]?.memoryKey).toBe("db_config_001");
      expect((await c.getMemoryDetail({ memoryKey: "db_config_001" })).content).toBe(DB_CONFIG.content);
    } finally {
      await second.close();
    }
  });

  it("serves the same memories from PostgreSQL to two replicas sharing Redis, invalidating caches across them", async () => {
    const env = {
      MEMORY_STORE: "postgres",
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
      REDIS_URL: "redis://127.0.0.1:6379",
    };
    const [one, two] = await Promise.all([startServer(env), startServer(env)]);
    try {
      const who = account();
      const a = clientFor(one, who);
      const b = clientFor(two, who);
      expect((await b.searchMemories({ query: "数据库配置" })).results).toEqual([]);
      await a.storeMemory(DB_CONFIG);
      expect((await b.searchMemories({ query: "数据库配置" })).results[0]?.memoryKey).toBe("db_config_001");
      await b.deleteMemory({ memoryKey: "db_config_001" });
      expect((await failure(a.getMemoryDetail({ memoryKey: "db_config_001" }))).code).toBe(Code.NotFound);
      expect((await a.searchMemories({ query: "数据库配置" })).results).toEqual([]);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
