import { randomUUID } from "node:crypto";
import { type Client, Code } from "@connectrpc/connect";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { callOk, connectHttp } from "../mcp/mcp-client";

/**
 * Spec §7 (内容过滤: 敏感记忆内容需要额外权限验证): a memory stored as
 * sensitive shows its content and metadata only to calls carrying the
 * `memories:sensitive` scope in `x-account-scopes`; every other call of the
 * owner sees key, summary, keywords and `redacted`, on every read path.
 */

const SCOPE_HEADER = "x-account-scopes";
const SECRET = {
  memoryKey: "db_password_prod",
  memoryType: "credential",
  summary: "生产数据库的连接口令",
  content: "postgres 账号 analytics_rw 的密码是 Tr0ub4dor&3，每季度轮换",
  keywords: [{ keyword: "口令", weight: 1 }],
  metadata: { rotated: "2026-01" },
  sensitive: true,
};
const PLAIN = {
  memoryKey: "db_host_prod",
  memoryType: "project_fact",
  summary: "生产数据库地址",
  content: "生产数据库 host=pg-prod.internal port=5432",
};

const account = () => `u-sens-${randomUUID().slice(0, 8)}`;

describe("sensitive memories", () => {
  let server: TestServer;
  let owner: string;
  let plain: Client<typeof MemRecallService>;
  let permitted: Client<typeof MemRecallService>;
  beforeAll(async () => {
    server = await startServer();
    owner = account();
    plain = clientWith(MemRecallService, server.baseUrl, { "x-account-id": owner });
    permitted = clientWith(MemRecallService, server.baseUrl, {
      "x-account-id": owner,
      [SCOPE_HEADER]: "kn:read, memories:sensitive",
    });
    const stored = await plain.storeMemory(SECRET);
    expect(stored).toMatchObject({ memoryKey: SECRET.memoryKey, created: true, sensitive: true });
    // Keywords were given: nothing was extracted from the content.
    expect(stored.keywords.map((k) => k.keyword)).toEqual(["口令"]);
    await plain.storeMemory(PLAIN);
  });
  afterAll(() => server.close());

  it("GetMemoryDetail withholds content and metadata without the scope and returns them with it", async () => {
    const withheld = await plain.getMemoryDetail({ memoryKey: SECRET.memoryKey });
    expect(withheld).toMatchObject({
      memoryKey: SECRET.memoryKey,
      summary: SECRET.summary,
      content: "",
      sensitive: true,
      redacted: true,
    });
    expect(withheld.metadata).toEqual({});
    expect(withheld.keywords.map((k) => k.keyword)).toEqual(["口令"]);

    const shown = await permitted.getMemoryDetail({ memoryKey: SECRET.memoryKey });
    expect(shown).toMatchObject({ content: SECRET.content, sensitive: true, redacted: false });
    expect(shown.metadata).toEqual(SECRET.metadata);
    // The same cache entry serves both: a second read without the scope is still redacted.
    expect((await plain.getMemoryDetail({ memoryKey: SECRET.memoryKey })).content).toBe("");
    // An ordinary memory is not affected.
    expect(await plain.getMemoryDetail({ memoryKey: PLAIN.memoryKey })).toMatchObject({
      content: PLAIN.content,
      sensitive: false,
      redacted: false,
    });
  });

  it("SearchMemories finds it by its summary, with the preview withheld without the scope, in the text answer too", async () => {
    const res = await plain.searchMemories({ query: "生产数据库的口令", minRelevanceScore: 0.1 });
    const hit = res.results.find((r) => r.memoryKey === SECRET.memoryKey);
    expect(hit).toMatchObject({ summary: SECRET.summary, contentPreview: "", sensitive: true, redacted: true });
    expect(res.results.find((r) => r.memoryKey === PLAIN.memoryKey)).toMatchObject({ redacted: false });

    const shown = await permitted.searchMemories({ query: "生产数据库的口令", minRelevanceScore: 0.1 });
    expect(shown.results.find((r) => r.memoryKey === SECRET.memoryKey)).toMatchObject({
      contentPreview: SECRET.content,
      sensitive: true,
      redacted: false,
    });

    const text = await plain.searchMemories({
      query: "生产数据库的口令",
      minRelevanceScore: 0.1,
      outputFormat: "json",
    });
    expect(text.text).not.toContain("Tr0ub4dor");
    const rows = (JSON.parse(text.text) as { results: Record<string, unknown>[] }).results;
    expect(rows.find((r) => r["memory_key"] === SECRET.memoryKey)).toMatchObject({ redacted: true, sensitive: true });
  });

  it("is never found by what its content says, with or without the scope", async () => {
    for (const c of [plain, permitted]) {
      for (const searchMode of ["keyword", "semantic", "hybrid"]) {
        const res = await c.searchMemories({ query: "Tr0ub4dor analytics_rw 轮换", searchMode, minRelevanceScore: 0 });
        expect(
          res.results.map((r) => r.memoryKey),
          searchMode,
        ).not.toContain(SECRET.memoryKey);
      }
    }
  });

  it("needs a summary, and refuses a malformed scope header with a violation on it", async () => {
    const noSummary = await failure(
      plain.storeMemory({ memoryKey: "s2", content: "secret", sensitive: true, summary: "" }),
    );
    expect(noSummary.code).toBe(Code.InvalidArgument);
    expect(noSummary.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual(["summary"]);

    const bad = clientWith(MemRecallService, server.baseUrl, {
      "x-account-id": owner,
      [SCOPE_HEADER]: "Memories:SENSITIVE!",
    });
    const err = await failure(bad.getMemoryDetail({ memoryKey: SECRET.memoryKey }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual([SCOPE_HEADER]);
  });

  describe("over MCP", () => {
    let mcpPlain: McpClient;
    let mcpPermitted: McpClient;
    beforeAll(async () => {
      mcpPlain = await connectHttp(server.baseUrl, { "x-account-id": owner });
      mcpPermitted = await connectHttp(server.baseUrl, {
        "x-account-id": owner,
        [SCOPE_HEADER]: "memories:sensitive",
      });
    });
    afterAll(async () => {
      await mcpPlain?.close();
      await mcpPermitted?.close();
    });

    it("get_memory_detail and search_memories redact without the scope and show with it", async () => {
      const withheld = await callOk(mcpPlain, "get_memory_detail", { memory_key: SECRET.memoryKey });
      expect(withheld).toMatchObject({ memory_key: SECRET.memoryKey, summary: SECRET.summary, redacted: true });
      expect(withheld).not.toHaveProperty("content");
      expect(withheld).not.toHaveProperty("metadata");
      const shown = await callOk(mcpPermitted, "get_memory_detail", { memory_key: SECRET.memoryKey });
      expect(shown).toMatchObject({ content: SECRET.content, sensitive: true, metadata: SECRET.metadata });
      expect(shown).not.toHaveProperty("redacted");

      const args = { query: "生产数据库的口令", min_relevance_score: 0.1, output_format: "json" };
      const found = (await callOk(mcpPlain, "search_memories", args))["results"] as Record<string, unknown>[];
      expect(found.find((r) => r["memory_key"] === SECRET.memoryKey)).toMatchObject({ redacted: true });
      expect(JSON.stringify(found)).not.toContain("Tr0ub4dor");
      const all = (await callOk(mcpPermitted, "search_memories", args))["results"] as Record<string, unknown>[];
      expect(all.find((r) => r["memory_key"] === SECRET.memoryKey)).toMatchObject({
        content_preview: SECRET.content,
      });
    });

    it("store_memory takes sensitive and says so", async () => {
      const stored = await callOk(mcpPlain, "store_memory", {
        memory_key: "api_token",
        summary: "对接计费系统的 API token",
        content: "token=sk-live-0000",
        sensitive: true,
      });
      expect(stored).toMatchObject({ memory_key: "api_token", created: true, sensitive: true });
      expect(await callOk(mcpPlain, "get_memory_detail", { memory_key: "api_token" })).toMatchObject({
        redacted: true,
      });
    });
  });
});

/**
 * With Redis as the session store, MemRecall's caches (mem:search, mem:detail) live in Redis, which
 * every replica shares and whose operators may read it: a sensitive memory's content and metadata
 * are never among what is cached, in plain text or otherwise; callers with the scope still get them.
 */
describe("sensitive memories with Redis as the cache", () => {
  const REDIS_URL = "redis://127.0.0.1:6379";
  let server: TestServer;
  let redis: Redis;
  const owner = account();
  beforeAll(async () => {
    server = await startServer({ REDIS_URL, LOG_LEVEL: "warn" });
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await keysOf(owner);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await server.close();
  });

  /** Every key of the owner's (accountKey and sessionKey hold the account id as written: it needs no escaping). */
  async function keysOf(who: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await redis.scan(cursor, "MATCH", `cl:*${who}*`, "COUNT", 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== "0");
    return keys;
  }

  /** What a key holds, as text, whatever its type. */
  async function textOf(key: string): Promise<string> {
    const type = await redis.type(key);
    if (type === "string") return (await redis.get(key)) ?? "";
    if (type === "list") return (await redis.lrange(key, 0, -1)).join("\n");
    if (type === "set") return (await redis.smembers(key)).join("\n");
    if (type === "hash") return JSON.stringify(await redis.hgetall(key));
    return "";
  }

  it("caches searches and reads of the owner without the sensitive memory's content or metadata, and still shows them with the scope", async () => {
    const plain = clientWith(MemRecallService, server.baseUrl, { "x-account-id": owner });
    const permitted = clientWith(MemRecallService, server.baseUrl, {
      "x-account-id": owner,
      [SCOPE_HEADER]: "memories:sensitive",
    });
    await plain.storeMemory(SECRET);
    await plain.storeMemory(PLAIN);
    const search = { query: "生产数据库的口令", minRelevanceScore: 0.1 };
    // Each twice: the second answer comes from the cache.
    for (let i = 0; i < 2; i++) {
      for (const [c, shown] of [
        [plain, false],
        [permitted, true],
      ] as const) {
        const detail = await c.getMemoryDetail({ memoryKey: SECRET.memoryKey });
        expect(detail).toMatchObject({ content: shown ? SECRET.content : "", redacted: !shown });
        expect(detail.metadata).toEqual(shown ? SECRET.metadata : {});
        expect((await c.getMemoryDetail({ memoryKey: PLAIN.memoryKey })).content).toBe(PLAIN.content);
        const found = await c.searchMemories(search);
        expect(found.results.find((r) => r.memoryKey === SECRET.memoryKey)).toMatchObject({
          contentPreview: shown ? SECRET.content : "",
          redacted: !shown,
        });
      }
    }

    const keys = await keysOf(owner);
    // The caches were written (the test looks where they are).
    expect(keys.some((k) => k.includes(":mem:search:"))).toBe(true);
    expect(keys.some((k) => k.includes(":mem:detail:"))).toBe(true);
    const cachedText = (await Promise.all(keys.map(textOf))).join("\n");
    expect(cachedText).toContain(PLAIN.content);
    expect(cachedText).toContain(SECRET.summary);
    expect(cachedText).not.toContain("Tr0ub4dor");
    expect(cachedText).not.toContain("analytics_rw");
    expect(cachedText).not.toContain("rotated");
  });
});
