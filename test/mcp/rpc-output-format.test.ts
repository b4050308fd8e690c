import { Code, createClient, type Client as RpcClient } from "@connectrpc/connect";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { LogicPropertyResolverService } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { transports } from "../helpers/clients";
import { clientWith, failure } from "../helpers/rpc";
import { type ChatRequest, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { type Answer, callOk, connectHttp, KN, QUESTION, read, withoutIds } from "./mcp-client";

/**
 * The RPCs' output_format: set, `text` holds the same compact answer the MCP
 * tool returns (written in that format) and the structured fields are empty
 * but for what the next call needs; unset, the structured answer as before.
 */

const RPC_KN = [{ knowledgeNetworkId: "kn_medical" }];
const FORMATS = ["toon", "yaml", "json"] as const;
const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const MONTH_START = Date.parse("2026-11-01T00:00:00+08:00");

describe("output_format on the RPCs", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let knowledge: RpcClient<typeof KnowledgeRetrievalService>;
  let resolver: RpcClient<typeof LogicPropertyResolverService>;
  let memrecall: RpcClient<typeof MemRecallService>;
  let mcp: McpClient;
  beforeAll(async () => {
    llm = await startScriptedLlm((req: ChatRequest) => {
      const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1];
      if (property !== "approved_drug_count") return { content: '{"_error":"unscripted"}' };
      return { content: JSON.stringify({ approved_drug_count: { instant: true, start: MONTH_START, end: NOW } }) };
    });
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    knowledge = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-rpc-format" });
    resolver = clientWith(LogicPropertyResolverService, server.baseUrl, { "x-account-id": "u-rpc-format" });
    memrecall = clientWith(MemRecallService, server.baseUrl, { "x-account-id": "u-rpc-format" });
    mcp = await connectHttp(server.baseUrl, { "x-account-id": "u-rpc-format" });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await llm?.close();
  });

  describe("RetrieveSchema", () => {
    it.each(FORMATS)("with output_format %s answers the MCP tool's answer in text, the rest empty", async (format) => {
      const res = await knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN, topK: 3, outputFormat: format });
      expect(res.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.round).toBe(1);
      expect(res.objectTypes).toEqual([]);
      expect(res.relationTypes).toEqual([]);
      expect(res.actionTypes).toEqual([]);
      expect(res.objects).toBe("");
      expect(res.relations).toBe("");
      expect(res.rankingMethod).toBe("");
      const text = read(res.text, format);
      expect(text["session_id"]).toBe(res.sessionId);
      expect(text["round"]).toBe(1);
      const tool = await callOk(mcp, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 3 });
      expect(withoutIds(text)).toEqual(withoutIds(tool));
      expect((text["relation_types"] as Answer[])[0]).toMatchObject({ id: "has_symptom" });
    });

    it("without output_format answers as before: the compact YAML texts, or the structured concepts", async () => {
      const compact = await knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN, topK: 3 });
      expect(compact.text).toBe("");
      expect(compact.objects).toContain("objects:");
      expect(compact.relations).toContain("has_symptom");
      expect(compact.objectTypes).toEqual([]);

      const full = await knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN, topK: 3, compactFormat: false });
      expect(full.text).toBe("");
      expect(full.rankingMethod).toBe("embedding_lexical");
      // The structured answer and the text answer carry the same facts.
      const tool = await callOk(mcp, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 3 });
      expect(full.relationTypes.map((r) => [r.conceptId, r.sourceObjectTypeId, r.targetObjectTypeId])).toEqual(
        (tool["relation_types"] as Answer[]).map((r) => [r["id"], r["from"], r["to"]]),
      );
      expect(full.objectTypes.map((o) => o.conceptId)).toEqual((tool["object_types"] as Answer[]).map((o) => o["id"]));
    });
  });

  describe("RetrieveKeywordContext", () => {
    it.each(FORMATS)("with output_format %s answers the MCP tool's answer in text", async (format) => {
      const rpcSchema = await knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN, outputFormat: "json" });
      const res = await knowledge.retrieveKeywordContext({
        query: "上气道梗阻",
        knIds: RPC_KN,
        sessionId: rpcSchema.sessionId,
        objectTypeId: "disease",
        outputFormat: format,
      });
      expect(res.sessionId).toBe(rpcSchema.sessionId);
      expect(res.keywordContext).toBeUndefined();
      expect(res.keywordContextText).toBe("");
      expect(res.warnings).toEqual([]);
      const text = read(res.text, format);
      expect((text["instances"] as Answer[])[0]).toMatchObject({ name: "上、下气道梗阻" });

      const toolSchema = await callOk(mcp, "retrieve_schema", { query: QUESTION, kn_ids: KN });
      const tool = await callOk(mcp, "retrieve_keyword_context", {
        query: "上气道梗阻",
        kn_ids: KN,
        session_id: toolSchema["session_id"],
        object_type_id: "disease",
      });
      expect(withoutIds(text)).toEqual(withoutIds(tool));
    });

    it("without output_format answers as before (compact YAML text; structured with compact_format=false)", async () => {
      const schema = await knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN });
      const args = { query: "上气道梗阻", knIds: RPC_KN, sessionId: schema.sessionId, objectTypeId: "disease" };
      const compact = await knowledge.retrieveKeywordContext(args);
      expect(compact.text).toBe("");
      expect(compact.keywordContextText).toContain("上、下气道梗阻");
      const full = await knowledge.retrieveKeywordContext({ ...args, compactFormat: false });
      expect(full.text).toBe("");
      expect(full.keywordContext?.instances[0]).toMatchObject({
        instanceId: "disease_004790",
        instanceName: "上、下气道梗阻",
      });
      expect(full.keywordContext?.instances[0]?.neighbors.length).toBeGreaterThan(3);
    });
  });

  describe("KnSearch", () => {
    it.each(FORMATS)("with output_format %s answers the MCP tool's answer in text, the rest empty", async (format) => {
      const res = await knowledge.knSearch({ query: "上气道梗阻", knIds: RPC_KN, outputFormat: format });
      expect(res.sessionId).toMatch(/\S/);
      expect(res.objectTypes).toEqual([]);
      expect(res.relationTypes).toEqual([]);
      expect(res.actionTypes).toEqual([]);
      expect(res.nodes).toEqual([]);
      expect(res.message).toBe("");
      const text = read(res.text, format);
      expect(text["session_id"]).toBe(res.sessionId);
      const tool = await callOk(mcp, "kn_search", { query: "上气道梗阻", kn_ids: KN });
      expect(withoutIds(text)).toEqual(withoutIds(tool));
      expect((text["nodes"] as Record<string, Answer[]>)["disease"]?.[0]).toMatchObject({ name: "上、下气道梗阻" });
    });

    it("without output_format answers the structured concepts and nodes, as before", async () => {
      const res = await knowledge.knSearch({ query: "上气道梗阻", knIds: RPC_KN });
      expect(res.text).toBe("");
      expect(res.objectTypes.map((o) => o.conceptId)).toContain("disease");
      expect(res.nodes[0]).toMatchObject({ objectTypeId: "disease", instanceName: "上、下气道梗阻" });
      const tool = await callOk(mcp, "kn_search", { query: "上气道梗阻", kn_ids: KN });
      expect(res.relationTypes.map((r) => r.conceptId)).toEqual(
        (tool["relation_types"] as Answer[]).map((r) => r["id"]),
      );
    });

    it("answers the same text over every transport (binary protobuf and gRPC included)", async () => {
      const texts = await Promise.all(
        Object.entries(transports(server.baseUrl)).map(async ([name, transport]) => {
          const res = await createClient(KnowledgeRetrievalService, transport).knSearch({
            query: "上气道梗阻",
            knIds: RPC_KN,
            outputFormat: "yaml",
          });
          return [name, withoutIds(read(res.text, "yaml"))] as const;
        }),
      );
      for (const [name, text] of texts.slice(1)) expect(text, name).toEqual(texts[0]![1]);
    });
  });

  describe("ResolveLogicProperties", () => {
    const args = {
      knId: "kn_medical",
      otId: "company",
      query: "这些企业本月上市了多少药品",
      uniqueIdentities: [{ company_id: "company_000001" }],
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
    };

    it("with output_format toon answers the MCP tool's answer in text, trace_id beside it", async () => {
      const res = await resolver.resolveLogicProperties({ ...args, outputFormat: "toon" });
      expect(res.datas).toEqual([]);
      expect(res.unmatchedIdentities).toEqual([]);
      expect(res.debug).toBeUndefined();
      expect(res.traceId).toMatch(/^[0-9a-f]{32}$/);
      const text = read(res.text, "toon");
      expect(text["trace_id"]).toBe(res.traceId);
      expect((text["rows"] as Answer[])[0]).toMatchObject({ company_id: "company_000001" });
      expect(text["metrics"]).toEqual([
        expect.objectContaining({ property: "approved_drug_count", unit_type: "countUnit" }),
      ]);
      expect(text["points"]).toEqual([expect.objectContaining({ row: 0, property: "approved_drug_count", time: NOW })]);

      const tool = await callOk(mcp, "get_logic_properties_values", {
        kn_id: "kn_medical",
        ot_id: "company",
        query: args.query,
        unique_identities: args.uniqueIdentities,
        properties: args.properties,
        now_ms: NOW,
      });
      expect(withoutIds(text)).toEqual(withoutIds(tool));

      // Unset: the structured answer with the same rows.
      const plain = await resolver.resolveLogicProperties(args);
      expect(plain.text).toBe("");
      expect(plain.datas).toHaveLength(1);
      expect(plain.datas[0]).toMatchObject({ company_id: "company_000001" });
    });
  });

  describe("SearchMemories", () => {
    beforeAll(async () => {
      await memrecall.storeMemory({
        memoryKey: "db_prod",
        summary: "生产环境数据库配置",
        content: "PostgreSQL 16, host=pg-prod.internal port=5432, database orders",
        memoryType: "project_fact",
      });
    });

    it.each(FORMATS)(
      "with output_format %s answers the MCP tool's answer in text, the results empty",
      async (format) => {
        const res = await memrecall.searchMemories({
          query: "数据库配置",
          minRelevanceScore: 0.1,
          outputFormat: format,
        });
        expect(res.success).toBe(true);
        expect(res.results).toEqual([]);
        expect(res.totalFound).toBe(0);
        const text = read(res.text, format);
        expect(text["total_found"]).toBe(1);
        expect((text["results"] as Answer[])[0]).toMatchObject({
          memory_key: "db_prod",
          summary: "生产环境数据库配置",
        });
        const tool = await callOk(mcp, "search_memories", { query: "数据库配置", min_relevance_score: 0.1 });
        expect(text).toEqual(tool);
      },
    );

    it("without output_format answers the structured results as before", async () => {
      const res = await memrecall.searchMemories({ query: "数据库配置", minRelevanceScore: 0.1 });
      expect(res.text).toBe("");
      expect(res.results.map((r) => r.memoryKey)).toEqual(["db_prod"]);
    });
  });

  describe("output_format xml", () => {
    const cases: [string, () => Promise<unknown>][] = [
      ["RetrieveSchema", () => knowledge.retrieveSchema({ query: QUESTION, knIds: RPC_KN, outputFormat: "xml" })],
      [
        "RetrieveKeywordContext",
        () =>
          knowledge.retrieveKeywordContext({
            query: "上气道梗阻",
            knIds: RPC_KN,
            sessionId: "s",
            objectTypeId: "disease",
            outputFormat: "xml",
          }),
      ],
      ["KnSearch", () => knowledge.knSearch({ query: "上气道梗阻", knIds: RPC_KN, outputFormat: "xml" })],
      [
        "ResolveLogicProperties",
        () =>
          resolver.resolveLogicProperties({
            knId: "kn_medical",
            otId: "company",
            query: "q",
            uniqueIdentities: [{ company_id: "company_000001" }],
            properties: ["approved_drug_count"],
            outputFormat: "xml",
          }),
      ],
      ["SearchMemories", () => memrecall.searchMemories({ query: "数据库配置", outputFormat: "xml" })],
    ];

    it.each(cases)("%s is INVALID_ARGUMENT with a BadRequest violation on output_format", async (_name, call) => {
      const before = llm.requests.length;
      const err = await failure(call());
      expect(err.code).toBe(Code.InvalidArgument);
      const violations = err.findDetails(BadRequestSchema)[0]?.fieldViolations ?? [];
      expect(violations.map((v) => v.field)).toEqual(["output_format"]);
      expect(violations[0]!.description).toContain('"json", "yaml" or "toon"');
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_ARGUMENT");
      // Refused before any work.
      expect(llm.requests.length).toBe(before);
    });

    it("is reported together with the other invalid fields", async () => {
      const err = await failure(knowledge.retrieveSchema({ query: "", knIds: RPC_KN, topK: 500, outputFormat: "xml" }));
      const fields = err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field);
      expect(fields?.sort()).toEqual(["output_format", "query", "top_k"]);
    });
  });
});
