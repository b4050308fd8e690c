import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatRequest, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import {
  type Answer,
  callFails,
  callOk,
  callRaw,
  connectHttp,
  fieldsOf,
  KN,
  QUESTION,
  read,
  TOOL_NAMES,
  type ToolFailure,
  withoutIds,
} from "./mcp-client";

/**
 * MCP over Streamable HTTP at POST /mcp, driven by the SDK's own client
 * against the real service on a loopback port: the handshake, the tool
 * listing, every tool with good and bad arguments, the formats, accounts,
 * and the HTTP edges (methods, headers, CORS, sizes, trace ids).
 */

const PACKAGE_VERSION = "0.1.0";
const account = () => `u-mcp-${randomUUID().slice(0, 8)}`;

/** The arguments each tool's inputSchema lists: the zod schema's fields, then the two format arguments. */
const ARGUMENTS: Record<(typeof TOOL_NAMES)[number], string[]> = {
  retrieve_schema: [
    "query",
    "kn_ids",
    "session_id",
    "additional_context",
    "top_k",
    "skip_llm",
    "return_union",
    "session_type",
  ],
  retrieve_keyword_context: ["query", "kn_ids", "session_id", "object_type_id", "session_type"],
  kn_search: ["query", "kn_ids", "session_id", "additional_context", "retrieval_config", "only_schema"],
  knowledge_rerank: ["query_understanding", "concepts", "action", "batch_size", "session_id"],
  search_schema: ["query", "kn_id", "search_scope", "max_concepts", "schema_brief", "enable_rerank"],
  get_action_info: ["kn_id", "at_id", "_instance_identities"],
  find_skills: ["kn_id", "object_type_id", "instance_identities", "skill_query", "top_k"],
  query_object_instance: [
    "kn_id",
    "ot_id",
    "condition",
    "limit",
    "properties",
    "sort",
    "cursor",
    "need_total",
    "include_logic_params",
  ],
  query_instance_subgraph: ["kn_id", "relation_type_paths", "include_logic_params"],
  get_logic_properties_values: [
    "kn_id",
    "ot_id",
    "query",
    "unique_identities",
    "properties",
    "additional_context",
    "now_ms",
    "timezone",
    "options",
    "_instance_identities",
  ],
  search_memories: [
    "query",
    "search_mode",
    "keywords",
    "memory_types",
    "time_range_days",
    "limit",
    "min_relevance_score",
    "session_id",
    "as_of",
  ],
  get_memory_detail: ["memory_key"],
  extract_search_keywords: ["query", "context", "max_keywords"],
  expand_context_window: ["reason", "current_size", "requested_size", "current_iteration", "max_iterations"],
  handoff: [
    "reason",
    "search_summary",
    "relevant_memory_keys",
    "confidence",
    "needs_more_info",
    "follow_up_question",
    "iteration_used",
    "context_window_used",
    "reasoning",
  ],
  store_memory: [
    "memory_key",
    "memory_type",
    "summary",
    "content",
    "keywords",
    "metadata",
    "supersedes",
    "sensitive",
    "stated_at",
  ],
  remember: ["messages", "memory_types", "dry_run", "mode"],
  delete_memory: ["memory_key"],
  recall: [
    "messages",
    "context_window",
    "max_iterations",
    "max_searches_per_iteration",
    "max_results_per_search",
    "memory_types",
    "time_range_days",
    "strategy",
  ],
};

const DB_MEMORY = {
  memory_key: "db_config_001",
  memory_type: "project_fact",
  summary: "生产环境 PostgreSQL 数据库配置",
  content: "数据库配置：host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200。",
  metadata: { source: "chat", turn: 12 },
};

const RERANK_ARGS = {
  query_understanding: { origin_query: QUESTION, processed_query: "上气道梗阻 症状" },
  concepts: [
    { concept_type: "object_type", concept_id: "symptom", concept_name: "症状" },
    { concept_type: "object_type", concept_id: "facility", concept_name: "设备" },
    { concept_type: "relation_type", concept_id: "has_symptom", concept_name: "疾病症状" },
  ],
};

/** One bad call per tool: its arguments and the argument the error must name. */
const BAD_CALLS: [name: string, args: Record<string, unknown>, field: string][] = [
  ["retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 0 }, "top_k"],
  ["retrieve_keyword_context", { query: "上气道梗阻".repeat(50), kn_ids: KN, session_id: "s" }, "query"],
  ["kn_search", { query: "   ", kn_ids: KN }, "query"],
  ["knowledge_rerank", { ...RERANK_ARGS, action: "bm25" }, "action"],
  ["get_logic_properties_values", { kn_id: "kn_medical", ot_id: "company", query: "q", properties: [] }, "properties"],
  ["search_memories", { query: "数据库", limit: 11 }, "limit"],
  ["get_memory_detail", { memory_key: "" }, "memory_key"],
  ["extract_search_keywords", { query: "数据库配置", max_keywords: 11 }, "max_keywords"],
  ["expand_context_window", { reason: "more", current_size: 5, requested_size: 3 }, "requested_size"],
  ["handoff", { reason: "done", search_summary: "nothing", confidence: 2 }, "confidence"],
  ["store_memory", { memory_key: "k" }, "content"],
  ["delete_memory", { memory_key: 42 }, "memory_key"],
  ["recall", { messages: [{ role: "assistant", content: "你好" }] }, "messages"],
];

function expectInvalid(e: ToolFailure, field: string): void {
  expect(e.code).toBe("INVALID_ARGUMENT");
  expect(e.reason).toMatch(/^[A-Z_]+$/);
  expect(fieldsOf(e)).toContain(field);
  expect(e.message).toContain(field);
  expect(e.next_step).toEqual(expect.any(String));
  expect(e.next_step!.length).toBeGreaterThan(10);
  expect(e.trace_id).toMatch(/^[0-9a-f]{32}$/);
}

describe("MCP over Streamable HTTP", () => {
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startServer();
    client = await connectHttp(server.baseUrl, { "x-account-id": account() });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  describe("handshake and tools/list", () => {
    it("initializes with the server's name, version, instructions and the tools capability", () => {
      expect(client.getServerVersion()).toMatchObject({
        name: "context-loader",
        title: "Context Loader",
        version: PACKAGE_VERSION,
      });
      const instructions = client.getInstructions() ?? "";
      expect(instructions).toContain("retrieve_schema");
      expect(instructions).toContain("search_memories");
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
      expect(client.getServerCapabilities()?.resources).toBeUndefined();
    });

    it("lists every tool with titles, descriptions, annotations and generated input schemas", async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      for (const tool of tools) {
        const name = tool.name as (typeof TOOL_NAMES)[number];
        expect(tool.title, name).toMatch(/\S/);
        expect(tool.description?.length, name).toBeGreaterThan(40);
        expect(tool.annotations, name).toEqual({
          title: tool.title,
          readOnlyHint: !["store_memory", "remember", "delete_memory"].includes(name),
          destructiveHint: name === "delete_memory",
          openWorldHint: false,
        });
        expect(tool.inputSchema.type, name).toBe("object");
        expect(Object.keys(tool.inputSchema.properties ?? {}), name).toEqual([
          ...ARGUMENTS[name],
          "output_format",
          "response_format",
        ]);
        expect(tool.inputSchema["$schema"], name).toBeUndefined();
        // Unknown arguments are refused, and the schema says so.
        expect(tool.inputSchema["additionalProperties"], name).toBe(false);
      }
      const byName = new Map(tools.map((t) => [t.name, t]));
      const schema = byName.get("retrieve_schema")!.inputSchema;
      expect(schema.required).toEqual(["query", "kn_ids"]);
      expect(schema.properties).not.toHaveProperty("compact_format");
      expect(schema.properties!["top_k"]).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 10 });
      expect(schema.properties!["output_format"]).toMatchObject({ enum: ["json", "yaml", "toon"], default: "toon" });
      expect(schema.properties!["response_format"]).toMatchObject({ enum: ["json", "yaml", "toon"] });
      expect(byName.get("retrieve_keyword_context")!.inputSchema.properties).not.toHaveProperty("compact_format");
      expect(byName.get("store_memory")!.inputSchema.required).toEqual(["memory_key", "content"]);
      expect(byName.get("handoff")!.inputSchema.required).toEqual(["reason", "search_summary", "confidence"]);
      // The zod .describe() texts reach the agent.
      expect(byName.get("search_memories")!.inputSchema.properties!["query"]).toMatchObject({
        type: "string",
        description: expect.stringContaining("搜索查询"),
      });
      expect(byName.get("knowledge_rerank")!.inputSchema.properties!["action"]).toMatchObject({
        enum: ["llm", "vector"],
      });
    });
  });

  describe("every tool with valid arguments", () => {
    it("retrieve_schema ranks has_symptom first and describes both of its object types", async () => {
      const a = await callOk(client, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 3 });
      expect(a["session_id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(a["round"]).toBe(1);
      expect(a["kn_id"]).toBe("kn_medical");
      const relations = a["relation_types"] as Answer[];
      expect(relations).toHaveLength(3);
      expect(relations[0]).toMatchObject({ id: "has_symptom", name: "疾病症状", from: "disease", to: "symptom" });
      const types = a["object_types"] as Answer[];
      expect(types.map((t) => t["id"])).toEqual(expect.arrayContaining(["disease", "symptom"]));
      expect(types.find((t) => t["id"] === "disease")).toMatchObject({
        name: "疾病",
        display_key: "disease_name",
        primary_keys: "disease_id",
      });
      expect(a["default_operations"]).toBe("==, !=, like, not_like, in, not_in");
      const properties = a["properties"] as Answer[];
      expect(properties).toContainEqual(
        expect.objectContaining({ object_type: "disease", name: "disease_name", operations: "default" }),
      );
      expect(properties).toContainEqual(expect.objectContaining({ object_type: "symptom", name: "symptom_name" }));
    });

    it("retrieve_keyword_context finds 上、下气道梗阻 for 上气道梗阻 with its neighbours, in the schema's session", async () => {
      const schema = await callOk(client, "retrieve_schema", { query: QUESTION, kn_ids: KN });
      const a = await callOk(client, "retrieve_keyword_context", {
        query: "上气道梗阻",
        kn_ids: KN,
        session_id: schema["session_id"],
        object_type_id: "disease",
      });
      expect(a["session_id"]).toBe(schema["session_id"]);
      expect(a["keyword"]).toBe("上气道梗阻");
      const instances = a["instances"] as Answer[];
      expect(instances[0]).toMatchObject({ id: "disease_004790", name: "上、下气道梗阻", already_returned: false });
      expect(instances[0]!["score"]).toBeGreaterThan(0.5);
      const neighbors = a["neighbors"] as Answer[];
      expect(neighbors.length).toBeGreaterThan(3);
      expect(neighbors.every((n) => n["of"] === "disease_004790")).toBe(true);
      expect(neighbors).toContainEqual(
        expect.objectContaining({ relation: "has_symptom", direction: "outgoing", type: "symptom", name: "呼吸困难" }),
      );
      expect(neighbors).toContainEqual(
        expect.objectContaining({ relation: "has_complication", type: "disease", name: "呼吸衰竭" }),
      );
      expect(a["statistics"]).toMatchObject({ total_instances: 1, total_neighbors: neighbors.length });
      const props = a["properties"] as Record<string, Answer[]>;
      // The disease table is keyed by its primary key column, so it has no separate id column.
      expect(props["disease"]).toContainEqual(
        expect.objectContaining({ disease_id: "disease_004790", disease_name: "上、下气道梗阻" }),
      );
      expect(props["disease"]![0]).not.toHaveProperty("id");
      expect(props["symptom"]!.map((s) => s["symptom_name"])).toContain("呼吸困难");
    });

    it("kn_search returns the concepts and the matching instance", async () => {
      const a = await callOk(client, "kn_search", { query: "上气道梗阻", kn_ids: KN });
      expect(a["session_id"]).toMatch(/\S/);
      expect((a["object_types"] as Answer[]).map((o) => o["id"])).toContain("disease");
      expect((a["relation_types"] as Answer[]).map((o) => o["id"])).toContain("has_symptom");
      const nodes = a["nodes"] as Record<string, Answer[]>;
      expect(nodes["disease"]?.[0]).toMatchObject({ name: "上、下气道梗阻", disease_id: "disease_004790" });
    });

    it("knowledge_rerank with action=vector keeps the related concepts first and drops the unrelated", async () => {
      const a = await callOk(client, "knowledge_rerank", { ...RERANK_ARGS, action: "vector" });
      const concepts = a["concepts"] as Answer[];
      expect(concepts.length).toBeGreaterThan(0);
      expect(concepts.map((c) => c["rank"])).toEqual(concepts.map((_, i) => i + 1));
      expect(concepts.map((c) => c["id"])).not.toContain("facility");
      expect(["symptom", "has_symptom"]).toContain(concepts[0]!["id"]);
      // filtered_count is how many were kept (proto, README, RPC), whatever the tool description says.
      expect(a["filtered_count"]).toBe(concepts.length);
    });

    it("store_memory, search_memories, get_memory_detail, delete_memory: the memory's whole life", async () => {
      const stored = await callOk(client, "store_memory", DB_MEMORY);
      expect(stored).toMatchObject({ memory_key: "db_config_001", created: true, content_truncated: false });
      expect((stored["keywords"] as Answer[]).map((k) => k["keyword"])).toContain("PostgreSQL");

      const found = await callOk(client, "search_memories", { query: "数据库配置" });
      expect(found["total_found"]).toBe(1);
      expect((found["results"] as Answer[])[0]).toMatchObject({
        memory_key: "db_config_001",
        summary: DB_MEMORY.summary,
        memory_type: "project_fact",
      });

      const detail = await callOk(client, "get_memory_detail", { memory_key: "db_config_001" });
      expect(detail).toMatchObject({
        memory_key: "db_config_001",
        summary: DB_MEMORY.summary,
        content: DB_MEMORY.content,
        metadata: DB_MEMORY.metadata,
      });

      expect(await callOk(client, "delete_memory", { memory_key: "db_config_001" })).toEqual({ deleted: true });
      const gone = await callFails(client, "get_memory_detail", { memory_key: "db_config_001" });
      expect(gone).toMatchObject({ code: "NOT_FOUND", reason: "MEMORY_NOT_FOUND", next_tool: "search_memories" });
      expect(gone.message).toContain("db_config_001");
      expect(await callOk(client, "search_memories", { query: "数据库配置" })).toMatchObject({ total_found: 0 });
      expect(await callOk(client, "delete_memory", { memory_key: "db_config_001" })).toEqual({ deleted: false });
    });

    it("store_memory twice under one key overwrites", async () => {
      await callOk(client, "store_memory", { memory_key: "pref", content: "折线图" });
      const again = await callOk(client, "store_memory", { memory_key: "pref", content: "柱状图，深色主题" });
      expect(again["created"]).toBe(false);
      expect(await callOk(client, "get_memory_detail", { memory_key: "pref" })).toMatchObject({
        content: "柱状图，深色主题",
      });
    });

    it("extract_search_keywords without an LLM extracts locally and says so", async () => {
      const a = await callOk(client, "extract_search_keywords", {
        query: "我之前配置的 PostgreSQL 数据库参数是什么",
        max_keywords: 3,
      });
      expect(a["method"]).toBe("fallback");
      const keywords = a["keywords"] as Answer[];
      expect(keywords.length).toBeLessThanOrEqual(3);
      expect(keywords.map((k) => k["keyword"])).toContain("PostgreSQL");
      expect(a["message"]).toContain("LLM_BASE_URL");
    });

    it("expand_context_window approves a larger window and counts the iteration", async () => {
      expect(
        await callOk(client, "expand_context_window", { reason: "结果太少", current_size: 5, requested_size: 10 }),
      ).toMatchObject({ approved: true, new_size: 10, iteration: 2, max_iterations: 3 });
    });

    it("handoff ends the task and lists the relevant memories", async () => {
      const a = await callOk(client, "handoff", {
        reason: "已找到相关记忆",
        search_summary: "数据库配置在 db_config_001",
        relevant_memory_keys: ["db_config_001"],
        confidence: 0.9,
      });
      expect(a["task_completed"]).toBe(true);
      expect(a["message"]).toContain("db_config_001");
      expect(a["message"]).toContain("90%");
    });
  });

  describe("every tool with bad arguments", () => {
    it.each(BAD_CALLS)(
      "%s names the bad argument in plain text, whatever the format asked",
      async (name, args, field) => {
        expectInvalid(await callFails(client, name, args), field);
        const e = await callFails(client, name, { ...args, output_format: "json" });
        expectInvalid(e, field);
        expect(e.invalid_arguments!.find((v) => v.field === field)!.description).toMatch(/\S/);
        expect(e.trace_id).toMatch(/^[0-9a-f]{32}$/);
      },
    );

    it("reports unknown and invalid arguments together, and lists the arguments there are", async () => {
      const e = await callFails(client, "search_memories", { query: "", limt: 3, mode: "x" });
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(fieldsOf(e).sort()).toEqual(["limt", "mode", "query"]);
      expect(e.next_step).toContain("The arguments of search_memories are: query, search_mode, keywords");
    });

    it("refuses an unknown argument even when it is an Object.prototype name", async () => {
      for (const extra of ["constructor", "toString", "hasOwnProperty"]) {
        const e = await callFails(client, "get_memory_detail", { memory_key: "x", [extra]: 1 });
        expect(e.code, extra).toBe("INVALID_ARGUMENT");
        expect(fieldsOf(e), extra).toEqual([extra]);
      }
    });

    it("says what to do next in the tools' names, not the RPCs'", async () => {
      const noSession = await callFails(client, "retrieve_keyword_context", {
        query: "上气道梗阻",
        kn_ids: KN,
        object_type_id: "disease",
      });
      expect(noSession).toMatchObject({ code: "INVALID_ARGUMENT", reason: "SESSION_ID_REQUIRED" });
      expect(fieldsOf(noSession)).toEqual(["session_id"]);
      expect(noSession.next_step).toBe("Pass the session_id that retrieve_schema returned.");

      const unknownSession = await callFails(client, "retrieve_keyword_context", {
        query: "上气道梗阻",
        kn_ids: KN,
        session_id: randomUUID(),
        object_type_id: "disease",
      });
      expect(unknownSession).toMatchObject({ reason: "SCHEMA_NOT_IN_SESSION", next_tool: "retrieve_schema" });
      expect(unknownSession.next_step).toContain("Call retrieve_schema with the full question");

      const schema = await callOk(client, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 2 });
      const wrongType = await callFails(client, "retrieve_keyword_context", {
        query: "阿司匹林",
        kn_ids: KN,
        session_id: schema["session_id"],
        object_type_id: "drugs",
      });
      expect(wrongType).toMatchObject({ reason: "OBJECT_TYPE_NOT_IN_SCHEMA", next_tool: "retrieve_schema" });
      expect(wrongType.valid_values).toEqual(expect.arrayContaining(["disease", "symptom"]));
      expect(fieldsOf(wrongType)).toEqual(["object_type_id"]);
    });

    it("answers an unknown tool with a JSON-RPC error -32602 naming the tools", async () => {
      const err = await client.callTool({ name: "retrieve_everything", arguments: {} }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32602);
      expect((err as McpError).message).toContain('unknown tool "retrieve_everything"');
      expect((err as McpError).message).toContain("retrieve_schema, retrieve_keyword_context");
    });
  });

  describe("output formats", () => {
    it("writes the same answer in TOON, YAML and JSON", async () => {
      const args = { query: "上气道梗阻", kn_ids: KN };
      const answers = await Promise.all(
        (["toon", "yaml", "json"] as const).map(async (f) => {
          const { isError, text } = await callRaw(client, "kn_search", { ...args, output_format: f });
          expect(isError).toBe(false);
          return { format: f, text, data: withoutIds(read(text, f)) };
        }),
      );
      const [toon, yaml, json] = answers;
      expect(yaml!.data).toEqual(toon!.data);
      expect(json!.data).toEqual(toon!.data);
      expect((toon!.data["nodes"] as Record<string, unknown[]>)["disease"]).toHaveLength(1);
      // Each is really written in its own format.
      expect(() => JSON.parse(toon!.text)).toThrow();
      expect(json!.text.startsWith("{")).toBe(true);
      expect(yaml!.text).toMatch(/^kn_id: kn_medical$/m);
      // A column empty in every row (the relation comments here) is left out.
      expect(toon!.text).toMatch(/^relation_types\[\d+\]\{id,name,from,to\}:$/m);
      expect(toon!.text.length).toBeLessThan(json!.text.length);
    });

    it("writes the same memory in the three formats, and the default is TOON", async () => {
      await callOk(client, "store_memory", { ...DB_MEMORY, memory_key: "fmt" });
      const texts = await Promise.all(
        [undefined, "toon", "yaml", "json"].map(async (f) => {
          const { text } = await callRaw(client, "get_memory_detail", {
            memory_key: "fmt",
            ...(f === undefined ? {} : { output_format: f }),
          });
          return text;
        }),
      );
      expect(texts[0]).toBe(texts[1]);
      expect(read(texts[2]!, "yaml")).toEqual(read(texts[1]!, "toon"));
      expect(read(texts[3]!, "json")).toEqual(read(texts[1]!, "toon"));
      expect(read(texts[3]!, "json")).toMatchObject({ memory_key: "fmt", metadata: DB_MEMORY.metadata });
    });

    it("writes errors as the same plain text in every format, with no structured content", async () => {
      const bad = { memory_key: "" };
      const results = await Promise.all(
        (["toon", "yaml", "json"] as const).map((f) =>
          client.callTool({ name: "get_memory_detail", arguments: { ...bad, output_format: f } }),
        ),
      );
      const texts = results.map((r) => {
        expect(r.isError).toBe(true);
        expect(r.structuredContent).toBeUndefined();
        const [block] = r.content as { type: string; text: string }[];
        // The trace id differs from call to call.
        return block!.text.replace(/Trace id: \S+/, "Trace id: …");
      });
      expect(texts[1]).toBe(texts[0]);
      expect(texts[2]).toBe(texts[0]);
      expect(() => JSON.parse(texts[2]!)).toThrow();
      expect(texts[0]!.split("\n")).toEqual([
        expect.stringMatching(/^INVALID_ARGUMENT \(INVALID_ARGUMENT\): .*memory_key/),
        "Invalid arguments:",
        expect.stringMatching(/^- memory_key: \S/),
        "Next step: Correct the fields named in the violations and call again.",
        "Trace id: …",
      ]);
    });

    it("refuses output_format xml naming output_format (the error in TOON), with the other problems", async () => {
      const e = await callFails(client, "get_memory_detail", { memory_key: "k", output_format: "xml" });
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(fieldsOf(e)).toEqual(["output_format"]);
      expect(e.invalid_arguments![0]!.description).toContain('"json", "yaml" or "toon"');
      const both = await callFails(client, "get_memory_detail", { memory_key: "", output_format: "xml" });
      expect(fieldsOf(both).sort()).toEqual(["memory_key", "output_format"]);
    });

    it("accepts response_format as another name for output_format", async () => {
      const { isError, text } = await callRaw(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        response_format: "json",
      });
      expect(isError).toBe(false);
      expect(JSON.parse(text)).toMatchObject({ approved: true, new_size: 2 });
      const yaml = await callRaw(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        response_format: "yaml",
        output_format: "yaml",
      });
      expect(read(yaml.text, "yaml")).toMatchObject({ approved: true, new_size: 2 });
      // "" is proto's unset string: it is no format at all, so it cannot conflict.
      const unset = await callRaw(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        response_format: "json",
        output_format: "",
      });
      expect(unset.isError, unset.text).toBe(false);
      expect(JSON.parse(unset.text)).toMatchObject({ approved: true });
    });

    it("refuses output_format and response_format that disagree, and a bad response_format", async () => {
      const e = await callFails(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        output_format: "toon",
        response_format: "json",
      });
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(fieldsOf(e)).toEqual(["response_format"]);
      expect(e.message).toContain("output_format");
      const bad = await callFails(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        response_format: "markdown",
      });
      expect(fieldsOf(bad)).toEqual(["response_format"]);
      const both = await callFails(client, "expand_context_window", {
        reason: "r",
        current_size: 1,
        requested_size: 2,
        output_format: "xml",
        response_format: "markdown",
      });
      expect(fieldsOf(both)).toEqual(["output_format", "response_format"]);
    });
  });

  describe("accounts", () => {
    const memoryCalls: [string, Record<string, unknown>][] = [
      ["search_memories", { query: "数据库" }],
      ["get_memory_detail", { memory_key: "k" }],
      ["extract_search_keywords", { query: "数据库配置" }],
      ["expand_context_window", { reason: "r", current_size: 1, requested_size: 2 }],
      ["handoff", { reason: "r", search_summary: "s", confidence: 0.5 }],
      ["store_memory", { memory_key: "k", content: "c" }],
      ["remember", { messages: [{ role: "user", content: "记住：测试" }] }],
      ["delete_memory", { memory_key: "k" }],
    ];

    it("refuses every MemRecall tool without x-account-id (ACCOUNT_REQUIRED), before looking at the arguments", async () => {
      const anonymous = await connectHttp(server.baseUrl);
      try {
        for (const [name, args] of memoryCalls) {
          const e = await callFails(anonymous, name, args);
          expect(e, name).toMatchObject({ code: "UNAUTHENTICATED", reason: "ACCOUNT_REQUIRED" });
          expect(e.next_step, name).toContain("x-account-id");
          // Bad arguments too: the account comes first, as in the RPCs.
          const bad = await callFails(anonymous, name, { bogus: true });
          expect(bad.reason, name).toBe("ACCOUNT_REQUIRED");
        }
        // The knowledge tools need no account.
        const schema = await callOk(anonymous, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 1 });
        expect((schema["relation_types"] as Answer[])[0]!["id"]).toBe("has_symptom");
      } finally {
        await anonymous.close();
      }
    });

    it("refuses the anonymous account type (ANONYMOUS_NOT_ALLOWED), before the arguments", async () => {
      const anonymous = await connectHttp(server.baseUrl, { "x-account-id": "guest", "x-account-type": "anonymous" });
      try {
        for (const [name, args] of memoryCalls) {
          const e = await callFails(anonymous, name, { ...args, output_format: "json" });
          expect(e, name).toMatchObject({ code: "PERMISSION_DENIED", reason: "ANONYMOUS_NOT_ALLOWED" });
          expect((await callFails(anonymous, name, { memory_key: 1 })).reason, name).toBe("ANONYMOUS_NOT_ALLOWED");
        }
      } finally {
        await anonymous.close();
      }
    });

    it("keeps two accounts' memories apart", async () => {
      const alice = await connectHttp(server.baseUrl, { "x-account-id": account() });
      const bob = await connectHttp(server.baseUrl, { "x-account-id": account() });
      try {
        await callOk(alice, "store_memory", { ...DB_MEMORY, memory_key: "alice_db" });
        expect(await callOk(alice, "search_memories", { query: "数据库配置" })).toMatchObject({ total_found: 1 });
        expect(await callOk(bob, "search_memories", { query: "数据库配置" })).toMatchObject({ total_found: 0 });
        expect((await callFails(bob, "get_memory_detail", { memory_key: "alice_db" })).code).toBe("NOT_FOUND");
        expect(await callOk(bob, "delete_memory", { memory_key: "alice_db" })).toEqual({ deleted: false });
        expect(await callOk(alice, "get_memory_detail", { memory_key: "alice_db" })).toMatchObject({
          content: DB_MEMORY.content,
        });
        // An app account with the same id is another owner.
        const app = await connectHttp(server.baseUrl, { "x-account-id": "shared-id", "x-account-type": "app" });
        const user = await connectHttp(server.baseUrl, { "x-account-id": "shared-id", "x-account-type": "user" });
        await callOk(app, "store_memory", { memory_key: "app_note", content: "仅应用可见" });
        expect((await callFails(user, "get_memory_detail", { memory_key: "app_note" })).code).toBe("NOT_FOUND");
        await Promise.all([app.close(), user.close()]);
      } finally {
        await Promise.all([alice.close(), bob.close()]);
      }
    });
  });

  describe("tools that need an LLM when none is configured", () => {
    it("knowledge_rerank action=llm is FAILED_PRECONDITION LLM_NOT_CONFIGURED, suggesting vector", async () => {
      const e = await callFails(client, "knowledge_rerank", { ...RERANK_ARGS, action: "llm" });
      expect(e).toMatchObject({ code: "FAILED_PRECONDITION", reason: "LLM_NOT_CONFIGURED", valid_values: ["vector"] });
      expect(e.next_step).toContain('action="vector"');
      // llm is the default action.
      expect((await callFails(client, "knowledge_rerank", RERANK_ARGS)).reason).toBe("LLM_NOT_CONFIGURED");
    });

    it("retrieve_schema skip_llm=false is FAILED_PRECONDITION LLM_NOT_CONFIGURED naming skip_llm", async () => {
      const e = await callFails(client, "retrieve_schema", {
        query: QUESTION,
        kn_ids: KN,
        skip_llm: false,
        output_format: "json",
      });
      expect(e).toMatchObject({ code: "FAILED_PRECONDITION", reason: "LLM_NOT_CONFIGURED" });
      expect(fieldsOf(e)).toEqual(["skip_llm"]);
      expect(e.next_step).toContain("skip_llm=true");
    });

    it("get_logic_properties_values is FAILED_PRECONDITION LLM_NOT_CONFIGURED with a next step", async () => {
      const e = await callFails(client, "get_logic_properties_values", {
        kn_id: "kn_medical",
        ot_id: "company",
        query: "近三个月的批准药品数",
        unique_identities: [{ company_id: "company_000001" }],
        properties: ["approved_drug_count"],
      });
      expect(e).toMatchObject({ code: "FAILED_PRECONDITION", reason: "LLM_NOT_CONFIGURED" });
      expect(e.next_step).toContain("additional_context");
    });
  });

  describe("raw HTTP", () => {
    const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const listRequest = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

    it("answers GET and DELETE /mcp with 405 Allow: POST", async () => {
      for (const method of ["GET", "DELETE"]) {
        const res = await fetch(`${server.baseUrl}/mcp`, { method, headers: { accept: "text/event-stream" } });
        expect(res.status, method).toBe(405);
        expect(res.headers.get("allow"), method).toBe("POST");
        await res.body?.cancel();
      }
    });

    it("answers a stateless POST: JSON, no session id, the x-trace-id header", async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, { method: "POST", headers: MCP_HEADERS, body: listRequest });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(res.headers.get("mcp-session-id")).toBeNull();
      expect(res.headers.get("x-trace-id")).toMatch(/^[0-9a-f]{32}$/);
      const body = (await res.json()) as { id: number; result: { tools: { name: string }[] } };
      expect(body.id).toBe(1);
      expect(body.result.tools).toHaveLength(TOOL_NAMES.length);
    });

    it("refuses a POST that does not accept both JSON and SSE with 406 and a JSON-RPC error", async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: listRequest,
      });
      expect(res.status).toBe(406);
      const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.code).toBeLessThan(0);
      expect(body.error.message).toContain("text/event-stream");
    });

    it("answers malformed JSON with 400 and JSON-RPC error -32700", async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: '{"jsonrpc": "2.0", "id": 1, "method": ',
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { code: number }; id: unknown };
      expect(body.error.code).toBe(-32700);
      expect(body.id).toBeNull();
    });

    it("answers a malformed tools/call (arguments not an object, no name) with JSON-RPC error -32602", async () => {
      const malformed = [{ name: "kn_search", arguments: "上气道梗阻" }, { arguments: { query: "上气道梗阻" } }];
      for (const [i, params] of malformed.entries()) {
        const res = await fetch(`${server.baseUrl}/mcp`, {
          method: "POST",
          headers: MCP_HEADERS,
          body: JSON.stringify({ jsonrpc: "2.0", id: 10 + i, method: "tools/call", params }),
        });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { id: number; error?: { code: number; message: string } };
        expect(body.id).toBe(10 + i);
        expect(body.error?.code, JSON.stringify(params)).toBe(-32602);
        expect(body.error?.message).toContain("Invalid tools/call request");
      }
    });

    it("refuses an unknown mcp-protocol-version with 400 naming the supported ones, echoing at most 40 characters of it", async () => {
      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, "mcp-protocol-version": "9".repeat(4000) },
        body: listRequest,
      });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text.length).toBeLessThan(400);
      expect(text).not.toContain("9".repeat(41));
      const body = JSON.parse(text) as { error: { code: number; message: string } };
      expect(body.error.message).toMatch(
        /unsupported mcp-protocol-version "9{40}"… \(4000 characters\); this server speaks .*2025-06-18/,
      );
      res.headers.forEach((value, name) => {
        expect(value.length, name).toBeLessThan(100);
      });
      const known = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, "mcp-protocol-version": "2025-06-18" },
        body: listRequest,
      });
      expect(known.status).toBe(200);
      await known.body?.cancel();
    });

    it("answers bad identity headers with 400 and a JSON-RPC error naming the header", async () => {
      const bad: Record<string, string>[] = [{ "x-account-type": "robot" }, { "x-account-id": "x".repeat(300) }];
      for (const headers of bad) {
        const res = await fetch(`${server.baseUrl}/mcp`, {
          method: "POST",
          headers: { ...MCP_HEADERS, ...headers },
          body: listRequest,
        });
        expect(res.status).toBe(400);
        expect(res.headers.get("x-trace-id")).toMatch(/^[0-9a-f]{32}$/);
        const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
        expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
        expect(body.error.message).toContain(Object.keys(headers)[0]);
      }
    });

    it("takes the trace id from traceparent, echoes it in x-trace-id and logs the tool call under it", async () => {
      const traceId = randomUUID().replaceAll("-", "");
      const traced = await connectHttp(server.baseUrl, {
        "x-account-id": account(),
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      });
      try {
        await callOk(traced, "expand_context_window", { reason: "r", current_size: 1, requested_size: 2 });
        const failed = await callFails(traced, "get_memory_detail", { memory_key: "" });
        expect(failed.trace_id).toBe(traceId);
      } finally {
        await traced.close();
      }
      const lines = server.logs.filter((l) => l["trace_id"] === traceId);
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: "mcp tool", tool: "expand_context_window", route: "/mcp" }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({ msg: "mcp tool failed", tool: "get_memory_detail", reason: "INVALID_ARGUMENT" }),
      );

      const res = await fetch(`${server.baseUrl}/mcp`, {
        method: "POST",
        headers: { ...MCP_HEADERS, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
        body: listRequest,
      });
      expect(res.headers.get("x-trace-id")).toBe(traceId);
      await res.body?.cancel();
    });
  });
});

describe("MCP over HTTP: CORS and the request size limit", () => {
  const ORIGIN = "http://agent-ui.example:8080";
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ CORS_ALLOWED_ORIGINS: ORIGIN, READ_MAX_BYTES: "4096" });
  });
  afterAll(() => server?.close());

  it("lets an allowed origin's preflight send the MCP and identity headers", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version, x-account-id",
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(/,\s*/);
    expect(allowed).toEqual(
      expect.arrayContaining(["mcp-protocol-version", "x-account-id", "x-account-type", "traceparent", "content-type"]),
    );

    const other = await fetch(`${server.baseUrl}/mcp`, {
      method: "OPTIONS",
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    expect(other.status).toBe(403);
    await other.body?.cancel();
  });

  it("exposes x-trace-id and mcp-protocol-version to the allowed origin on the POST itself", async () => {
    const res = await fetch(`${server.baseUrl}/mcp`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    expect(exposed).toContain("x-trace-id");
    expect(exposed).toContain("mcp-protocol-version");
    await res.body?.cancel();
  });

  it("answers a body over READ_MAX_BYTES with 413 and a JSON-RPC error; one under it is served", async () => {
    const call = (content: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "store_memory", arguments: { memory_key: "big", content } },
      });
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-account-id": account(),
    };
    const small = await fetch(`${server.baseUrl}/mcp`, { method: "POST", headers, body: call("小".repeat(500)) });
    expect(small.status).toBe(200);
    expect(((await small.json()) as { result: { isError?: boolean } }).result.isError).toBeUndefined();

    const res = await fetch(`${server.baseUrl}/mcp`, { method: "POST", headers, body: call("大".repeat(20_000)) });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null });
    expect(body.error.code).toBeLessThan(0);
    expect(body.error.message).toContain("4096");
  });

  it("the MCP client works across origins too", async () => {
    const client = await connectHttp(server.baseUrl, { origin: ORIGIN, "x-account-id": account() });
    try {
      expect((await client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
    } finally {
      await client.close();
    }
  });
});

describe("MCP over HTTP with an LLM (scripted)", () => {
  const NOW = Date.parse("2026-11-22T10:30:00+08:00");
  const MONTH_START = Date.parse("2026-11-01T00:00:00+08:00");
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: Client;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    client = await connectHttp(server.baseUrl, { "x-account-id": account() });
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await llm?.close();
  });

  it("get_logic_properties_values resolves a metric with the parameters the LLM generated", async () => {
    llm.setFallback((req: ChatRequest) => {
      const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1];
      if (property !== "approved_drug_count") return { content: '{"_error":"unscripted"}' };
      return { content: JSON.stringify({ approved_drug_count: { instant: true, start: MONTH_START, end: NOW } }) };
    });
    const before = llm.requests.length;
    const a = await callOk(client, "get_logic_properties_values", {
      kn_id: "kn_medical",
      ot_id: "company",
      query: "这些企业本月上市了多少药品",
      unique_identities: [{ company_id: "company_000001" }],
      properties: ["approved_drug_count"],
      now_ms: NOW,
    });
    expect(llm.requests.length - before).toBe(1);
    expect(a["identity_keys"]).toEqual(["company_id"]);
    const rows = a["rows"] as Answer[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ row: 0, company_id: "company_000001" });
    // The metric's series is rows of the points table, its unit said once in metrics.
    expect(a["metrics"]).toEqual([
      expect.objectContaining({ property: "approved_drug_count", unit_type: "countUnit" }),
    ]);
    expect(a["points"]).toEqual([expect.objectContaining({ row: 0, property: "approved_drug_count", time: NOW })]);
    expect(a["trace_id"]).toMatch(/^[0-9a-f]{32}$/);
  });

  it("get_logic_properties_values takes the platform tool's arguments: _instance_identities, kn_id from x-kn-id", async () => {
    llm.setFallback(() => ({
      content: JSON.stringify({ approved_drug_count: { instant: true, start: MONTH_START, end: NOW } }),
    }));
    const platformClient = await connectHttp(server.baseUrl, { "x-account-id": account(), "x-kn-id": "kn_medical" });
    try {
      const args = {
        ot_id: "company",
        query: "这些企业本月上市了多少药品",
        _instance_identities: [{ company_id: "company_000001" }],
        properties: ["approved_drug_count"],
        now_ms: NOW,
      };
      const a = await callOk(platformClient, "get_logic_properties_values", args);
      expect(a["rows"]).toEqual([expect.objectContaining({ company_id: "company_000001" })]);
      // Both spellings at once is refused, naming the platform's.
      const both = await callFails(platformClient, "get_logic_properties_values", {
        ...args,
        unique_identities: [{ company_id: "company_000001" }],
      });
      expect(fieldsOf(both)).toEqual(["_instance_identities"]);
    } finally {
      await platformClient.close();
    }
    // Without the header, an empty kn_id names both ways to give it.
    const missing = await callFails(client, "get_logic_properties_values", {
      ot_id: "company",
      query: "q",
      unique_identities: [{ company_id: "company_000001" }],
      properties: ["approved_drug_count"],
    });
    expect(missing).toMatchObject({ code: "INVALID_ARGUMENT", reason: "KN_ID_REQUIRED" });
    expect(missing.message).toContain("x-kn-id");
  });

  it("knowledge_rerank with action=llm keeps what the LLM picked, in its order", async () => {
    llm.setFallback((req: ChatRequest) => {
      const numbers = new Map<string, number>();
      for (const m of req.messages[1]!.content.matchAll(/^(\d+)\. \[\w+\] \S+ \((\w+)\)/gm))
        numbers.set(m[2]!, Number(m[1]));
      return { content: JSON.stringify({ selected: [numbers.get("has_symptom"), numbers.get("symptom")] }) };
    });
    const a = await callOk(client, "knowledge_rerank", { ...RERANK_ARGS, action: "llm" });
    expect((a["concepts"] as Answer[]).map((c) => [c["id"], c["rank"]])).toEqual([
      ["has_symptom", 1],
      ["symptom", 2],
    ]);
    expect(a["filtered_count"]).toBe(2);
  });

  it("extract_search_keywords asks the LLM and returns its keywords", async () => {
    llm.queue({
      content: JSON.stringify({
        keywords: [
          { keyword: "PostgreSQL", weight: 1, type: "entity" },
          { keyword: "连接池", weight: 0.8, type: "concept" },
        ],
        expanded_query: "PostgreSQL 连接池配置",
      }),
    });
    const a = await callOk(client, "extract_search_keywords", { query: "上周配置的 PostgreSQL 连接池" });
    expect(a).toMatchObject({ method: "llm", expanded_query: "PostgreSQL 连接池配置" });
    expect(a["keywords"]).toEqual([
      { keyword: "PostgreSQL", weight: 1, type: "entity" },
      { keyword: "连接池", weight: 0.8, type: "concept" },
    ]);
  });

  it("retrieve_schema with skip_llm=false lets the LLM rank the relation types", async () => {
    llm.setFallback((req: ChatRequest) => {
      const n = /^(\d+)\. has_symptom /m.exec(req.messages[1]!.content)?.[1];
      return { content: JSON.stringify({ selected: n === undefined ? [] : [Number(n)] }) };
    });
    const { isError, text } = await callRaw(client, "retrieve_schema", {
      query: QUESTION,
      kn_ids: KN,
      skip_llm: false,
      output_format: "json",
    });
    expect(isError, text).toBe(false);
    const a = JSON.parse(text) as Answer;
    expect(a["ranking_method"]).toBe("llm");
    expect((a["relation_types"] as Answer[])[0]!["id"]).toBe("has_symptom");
  });
});
