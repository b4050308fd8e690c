import type { MessageInitShape } from "@bufbuild/protobuf";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { type ConceptSchema, KnowledgeRetrievalService } from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { failure } from "../helpers/rpc";
import { type ChatRequest, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

const QUERY = {
  originQuery: "哪些药企的药品上市最多",
  processedQuery: "药企 药品 上市 数量",
  intent: [{ querySegment: "药企", confidence: 0.9, reasoning: "问企业", relatedConcepts: [{ concept_name: "企业" }] }],
};
const CONCEPTS: MessageInitShape<typeof ConceptSchema>[] = [
  {
    conceptType: "object_type",
    conceptId: "company",
    conceptName: "企业",
    conceptDetail: { comment: "药品生产企业", data_properties: [{ name: "company_name", display_name: "企业名称" }] },
  },
  {
    conceptType: "object_type",
    conceptId: "symptom",
    conceptName: "症状",
    conceptDetail: { comment: "疾病的临床症状" },
  },
  {
    conceptType: "object_type",
    conceptId: "drug",
    conceptName: "药品",
    conceptDetail: { comment: "上市药品", data_properties: [{ name: "approval_no", display_name: "批准文号" }] },
  },
  {
    conceptType: "relation_type",
    conceptId: "produces",
    conceptName: "生产",
    conceptDetail: { source_object_type_id: "company", target_object_type_id: "drug" },
  },
];

/** The numbered lines the LLM was shown, by number. */
function numbered(req: ChatRequest): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of req.messages[1]!.content.matchAll(/^(\d+)\. \[\w+\] \S+ \((\w+)\)/gm)) out.set(m[2]!, Number(m[1]));
  return out;
}

describe("RerankConcepts with an LLM", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: Client<typeof KnowledgeRetrievalService>;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    client = createClient(
      KnowledgeRetrievalService,
      createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1" }),
    );
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });
  beforeEach(() => llm.setFallback(() => ({ content: '{"selected": []}' })));

  it("orders the concepts the LLM picks, drops the rest, and scores (n − k) / n", async () => {
    llm.setFallback((req) => {
      const n = numbered(req);
      return { content: JSON.stringify({ selected: [n.get("drug"), n.get("company"), n.get("produces")] }) };
    });
    const before = llm.requests.length;
    const res = await client.rerankConcepts({ queryUnderstanding: QUERY, concepts: CONCEPTS });
    expect(llm.requests.length - before).toBe(1);
    const prompt = llm.requests[before]!.messages[1]!.content;
    expect(prompt).toContain("药企 药品 上市 数量（原问题：哪些药企的药品上市最多）");
    expect(prompt).toContain("相关概念: 企业");
    expect(prompt).toContain("属性: 企业名称");
    expect(res.rerankedConcepts.map((c) => [c.conceptId, c.rank, c.score])).toEqual([
      ["drug", 1, 1],
      ["company", 2, 0.667],
      ["produces", 3, 0.333],
    ]);
    expect(res.filteredCount).toBe(3);
    expect(res.rerankedConcepts[1]!.conceptDetail).toEqual(CONCEPTS[0]!.conceptDetail);
  });

  it("asks in batches of batch_size, in parallel, and merges by score (ties across batches in input order)", async () => {
    llm.setFallback((req) => {
      const n = numbered(req);
      // In each batch, pick what it holds of drug and company, drug first.
      return {
        content: JSON.stringify({ selected: ["drug", "company"].flatMap((id) => (n.has(id) ? [n.get(id)] : [])) }),
      };
    });
    const before = llm.requests.length;
    const res = await client.rerankConcepts({ queryUnderstanding: QUERY, concepts: CONCEPTS, batchSize: 1 });
    expect(llm.requests.length - before).toBe(4);
    expect(res.rerankedConcepts.map((c) => [c.conceptId, c.score])).toEqual([
      ["company", 1],
      ["drug", 1],
    ]);
  });

  it("repairs an answer naming numbers not in the list, then fails with UNAVAILABLE suggesting vector", async () => {
    llm.queue({ content: '{"selected": [9]}' }, { content: '{"selected": [2]}' });
    const ok = await client.rerankConcepts({ queryUnderstanding: QUERY, concepts: CONCEPTS });
    expect(ok.rerankedConcepts.map((c) => c.conceptId)).toEqual(["symptom"]);

    llm.queue({ content: "no idea" }, { content: '{"selected": "drug"}' });
    const err = await failure(client.rerankConcepts({ queryUnderstanding: QUERY, concepts: CONCEPTS }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_BAD_ANSWER");
    expect(err.findDetails(AgentHintSchema)[0]?.message).toContain('action="vector"');
  });

  it("answers the spec's JSON on POST /tools/knowledge_rerank", async () => {
    llm.setFallback((req) => ({ content: JSON.stringify({ selected: [numbered(req).get("obj_123")] }) }));
    const res = await fetch(`${server.baseUrl}/tools/knowledge_rerank`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        query_understanding: { origin_query: "查询用户信息", processed_query: "查询用户信息", intent: [] },
        concepts: [
          {
            concept_type: "object_type",
            concept_id: "obj_123",
            concept_name: "用户",
            concept_detail: { comment: "用户相关信息" },
          },
          { concept_type: "relation_type", concept_id: "rel_456", concept_name: "属于", concept_detail: {} },
        ],
        action: "llm",
        batch_size: 128,
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      reranked_concepts: [
        {
          concept_type: "object_type",
          concept_id: "obj_123",
          concept_name: "用户",
          concept_detail: { comment: "用户相关信息" },
          score: 1,
          rank: 1,
        },
      ],
      filtered_count: 1,
    });
  });
});

describe("RerankConcepts without an LLM", () => {
  let server: TestServer;
  let client: Client<typeof KnowledgeRetrievalService>;
  beforeAll(async () => {
    server = await startServer();
    client = createClient(
      KnowledgeRetrievalService,
      createConnectTransport({ baseUrl: server.baseUrl, httpVersion: "1.1" }),
    );
  });
  afterAll(() => server.close());

  it("refuses action=llm naming the setting and suggesting vector", async () => {
    const err = await failure(client.rerankConcepts({ queryUnderstanding: QUERY, concepts: CONCEPTS }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toContain("LLM_BASE_URL");
    expect(err.findDetails(AgentHintSchema)[0]?.validValues).toEqual(["vector"]);
  });

  it("keeps a concept named in the question with action=vector (the README's example)", async () => {
    const res = await client.rerankConcepts({
      queryUnderstanding: { originQuery: "哪些药企生产的药最多", processedQuery: "药企 药品 数量" },
      concepts: [
        { conceptType: "object_type", conceptId: "company", conceptName: "企业" },
        { conceptType: "object_type", conceptId: "drug", conceptName: "药品" },
      ],
      action: "vector",
    });
    expect(res.rerankedConcepts[0]?.conceptId).toBe("drug");
  });

  it("reranks by embeddings with action=vector: the related concepts first, the unrelated dropped", async () => {
    const res = await client.rerankConcepts({
      queryUnderstanding: { originQuery: "药品的批准文号", processedQuery: "药品 批准文号" },
      concepts: CONCEPTS,
      action: "vector",
    });
    const ids = res.rerankedConcepts.map((c) => c.conceptId);
    expect(ids[0]).toBe("drug");
    expect(ids).not.toContain("symptom");
    expect(res.filteredCount).toBe(ids.length);
    res.rerankedConcepts.forEach((c, i) => {
      expect(c.rank).toBe(i + 1);
      expect(c.score).toBeGreaterThan(0);
      expect(c.score).toBeLessThanOrEqual(1);
      if (i > 0) expect(c.score).toBeLessThanOrEqual(res.rerankedConcepts[i - 1]!.score);
    });
  });

  it("rejects bad input with field violations", async () => {
    const err = await failure(
      client.rerankConcepts({
        queryUnderstanding: { originQuery: "q" },
        concepts: [CONCEPTS[0]!, { conceptType: "action_type", conceptId: "a", conceptName: "x" }],
        action: "bm25",
        batchSize: 0,
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(
      err
        .findDetails(BadRequestSchema)[0]!
        .fieldViolations.map((v) => v.field)
        .sort(),
    ).toEqual(["action", "batch_size", "concepts[1].concept_type", "query_understanding.processed_query"]);
    const twice = await failure(
      client.rerankConcepts({
        queryUnderstanding: QUERY,
        concepts: [CONCEPTS[0]!, CONCEPTS[2]!, { ...CONCEPTS[0]! }],
        action: "vector",
      }),
    );
    expect(twice.findDetails(BadRequestSchema)[0]!.fieldViolations).toEqual([
      expect.objectContaining({
        field: "concepts[2].concept_id",
        description: "object_type company is listed twice (first at concepts[0])",
      }),
    ]);
    const none = await failure(client.rerankConcepts({ concepts: CONCEPTS }));
    expect(none.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!.field).toBe("query_understanding");
  });

  it("refuses unknown fields on POST /tools/knowledge_rerank and reads null as absent", async () => {
    const post = (body: unknown) =>
      fetch(`${server.baseUrl}/tools/knowledge_rerank`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const concepts = [{ concept_type: "object_type", concept_id: "drug", concept_name: "药品", concept_detail: null }];
    const typo = await post({
      query_understanding: { origin_query: "药品", processed_query: "药品" },
      concepts,
      actoin: "vector",
    });
    expect(typo.status).toBe(400);
    const body = (await typo.json()) as { detail: { field_violations: { field: string }[] } };
    expect(body.detail.field_violations.map((v) => v.field)).toEqual(["actoin"]);
    const nulls = await post({
      query_understanding: { origin_query: "药品", processed_query: "药品", intent: null },
      concepts,
      action: "vector",
      batch_size: null,
      session_id: null,
    });
    expect(nulls.status).toBe(200);
    expect(await nulls.json()).toMatchObject({
      reranked_concepts: [{ concept_id: "drug", concept_detail: {}, rank: 1 }],
      filtered_count: 1,
    });
  });
});
