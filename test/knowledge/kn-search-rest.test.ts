import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server";

/**
 * `POST /kn/kn_search`, the spec's route (kn-search-proxy.zh.md): its JSON
 * body in snake_case, its answer shapes (brief and full schema, nodes keyed
 * `<object_type_id>_name`), and errors in the platform's
 * `{code, description, details, solution, link}`.
 */

const KN_IDS = [{ knowledge_network_id: "kn_medical" }];

interface Answer {
  status: number;
  traceId: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read field by field in the expectations
  body: Record<string, any>;
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "silent" });
});
afterAll(() => server.close());

async function knSearch(
  body: unknown,
  headers: Record<string, string> = { "x-account-id": "user_123" },
): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/kn/kn_search`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    traceId: res.headers.get("x-trace-id"),
    // biome-ignore lint/suspicious/noExplicitAny: a JSON body, read field by field in the expectations
    body: (await res.json()) as Record<string, any>,
  };
}

describe("POST /kn/kn_search", () => {
  it("answers the brief schema and nodes in the spec's shapes", async () => {
    const session_id = randomUUID();
    const res = await knSearch({ query: "上气道梗阻有哪些症状", kn_ids: KN_IDS, session_id });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      "action_types",
      "nodes",
      "object_types",
      "relation_types",
      "session_id",
    ]);
    expect(res.body["session_id"]).toBe(session_id);
    const disease = res.body["object_types"].find((o: { concept_id: string }) => o.concept_id === "disease");
    expect(Object.keys(disease).sort()).toEqual([
      "comment",
      "concept_id",
      "concept_name",
      "data_properties",
      "kn_id",
      "logic_properties",
    ]);
    expect(disease.data_properties).toContainEqual({ name: "disease_name", display_name: "疾病名称" });
    const relation = res.body["relation_types"].find((r: { concept_id: string }) => r.concept_id === "has_symptom");
    expect(relation).toEqual({
      concept_id: "has_symptom",
      concept_name: "疾病症状",
      source_object_type_id: "disease",
      target_object_type_id: "symptom",
      kn_id: "kn_medical",
    });
    for (const a of res.body["action_types"])
      expect(Object.keys(a).sort()).toEqual([
        "action_type",
        "comment",
        "id",
        "kn_id",
        "name",
        "object_type_id",
        "object_type_name",
        "tags",
      ]);
    expect(res.body["nodes"]).toEqual([
      {
        object_type_id: "disease",
        disease_name: "上、下气道梗阻",
        unique_identities: { disease_id: "disease_004790" },
        final_score: expect.any(Number),
        data_properties: expect.objectContaining({ disease_name: "上、下气道梗阻", age: "儿童" }),
        object_type_name: "疾病",
        kn_id: "kn_medical",
      },
    ]);
  });

  it("answers the full schema with schema_brief=false", async () => {
    const res = await knSearch({
      query: "上气道梗阻有哪些症状",
      kn_ids: KN_IDS,
      only_schema: true,
      retrieval_config: { concept_retrieval: { schema_brief: false } },
    });
    const disease = res.body["object_types"].find((o: { concept_id: string }) => o.concept_id === "disease");
    expect(disease).toMatchObject({
      concept_type: "object_type",
      primary_keys: ["disease_id"],
      display_key: "disease_name",
      tags: ["疾病"],
    });
    expect(disease.data_properties.find((p: { name: string }) => p.name === "disease_name")).toEqual({
      name: "disease_name",
      display_name: "疾病名称",
      type: "varchar",
      comment: expect.any(String),
      condition_operations: ["==", "!=", "like", "not_like", "in", "not_in"],
    });
    expect(res.body["relation_types"][0]).toMatchObject({ concept_type: "relation_type", comment: expect.any(String) });
  });

  it("leaves nodes and message out with only_schema", async () => {
    const res = await knSearch({ query: "上气道梗阻", kn_ids: KN_IDS, only_schema: true });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("nodes");
    expect(res.body).not.toHaveProperty("message");
  });

  it("says why in message when no instance is found", async () => {
    const res = await knSearch({
      query: "上气道梗阻",
      kn_ids: KN_IDS,
      retrieval_config: { semantic_instance_retrieval: { min_direct_relevance: 0.99 } },
    });
    expect(res.body["nodes"]).toEqual([]);
    expect(res.body["message"]).toMatch(/^No related instance data was found: .*min_direct_relevance=0\.99/);
    const zh = await knSearch(
      {
        query: "上气道梗阻",
        kn_ids: KN_IDS,
        retrieval_config: { semantic_instance_retrieval: { min_direct_relevance: 0.99 } },
      },
      { "x-account-id": "u-1", "accept-language": "zh" },
    );
    // The spec's note (data-retrieval's words) for a caller that asks for Chinese.
    expect(zh.body["message"]).toMatch(/^未查询到相关实例数据：.*min_direct_relevance=0\.99/);
  });

  it("reads null as absent, as the spec's nullable fields allow", async () => {
    const res = await knSearch({
      query: "上气道梗阻",
      kn_ids: KN_IDS,
      session_id: null,
      additional_context: null,
      only_schema: null,
      retrieval_config: {
        concept_retrieval: null,
        semantic_instance_retrieval: { per_type_instance_limit: null },
        property_filter: null,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body["nodes"].map((n: { disease_name: string }) => n.disease_name)).toEqual(["上、下气道梗阻"]);
  });

  it("refuses a key the spec does not list, naming it and the known ones", async () => {
    const res = await knSearch({
      query: "上气道梗阻",
      kn_ids: KN_IDS,
      retrieval_config: { concept_retrieval: { topk: 3 } },
      enable_rerank: true,
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(["code", "description", "details", "link", "solution"]);
    expect(res.body["code"]).toBe("INVALID_ARGUMENT");
    const violations = res.body["details"]["field_violations"] as { field: string; description: string }[];
    expect(violations).toContainEqual({
      field: "enable_rerank",
      description: expect.stringMatching(/^not a field of the kn_search request; its fields are .*retrieval_config/),
    });
    expect(violations).toContainEqual({
      field: "retrieval_config.concept_retrieval.topk",
      description: expect.stringMatching(/^not a field of concept_retrieval; its fields are top_k/),
    });
    expect(res.body["solution"]).not.toBe("");
    expect(res.body["details"]["trace_id"]).toBe(res.traceId);
  });

  it("rejects out-of-range settings with the field's path", async () => {
    const res = await knSearch({
      query: "肺炎",
      kn_ids: KN_IDS,
      retrieval_config: { semantic_instance_retrieval: { semantic_field_keep_ratio: 0 } },
    });
    expect(res.status).toBe(400);
    expect(res.body["details"]["field_violations"]).toEqual([
      {
        field: "retrieval_config.semantic_instance_retrieval.semantic_field_keep_ratio",
        description: "must be from 0.01 to 1",
      },
    ]);
  });

  it("refuses an unknown x-account-type, and defaults it to user when absent", async () => {
    const bad = await knSearch({ query: "肺炎", kn_ids: KN_IDS }, { "x-account-id": "u-1", "x-account-type": "robot" });
    expect(bad.status).toBe(400);
    expect(bad.body["details"]["field_violations"]).toEqual([expect.objectContaining({ field: "x-account-type" })]);
    const session_id = randomUUID();
    const asUser = await knSearch({ query: "上气道梗阻", kn_ids: KN_IDS, session_id }, { "x-account-id": "u-1" });
    const again = await knSearch(
      { query: "上气道梗阻", kn_ids: KN_IDS, session_id },
      { "x-account-id": "u-1", "x-account-type": "user" },
    );
    expect(asUser.body["nodes"]).toHaveLength(1);
    // Same account and type, same session: the node was returned already.
    expect(again.body["nodes"]).toEqual([]);
  });

  it("takes a body without content-type as JSON (the spec's default), and refuses another type", async () => {
    const plain = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: { "x-account-id": "user_123" },
      // Bytes, not a string: fetch would label a string text/plain.
      body: new TextEncoder().encode(
        JSON.stringify({ query: "肺炎", kn_ids: [{ knowledge_network_id: "kn_medical" }], only_schema: true }),
      ),
    });
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { object_types: unknown[] }).object_types.length).toBeGreaterThan(0);
    const text = await fetch(`${server.baseUrl}/kn/kn_search`, {
      method: "POST",
      headers: { "content-type": "text/plain", "x-account-id": "user_123" },
      body: "{}",
    });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({
      code: "UNSUPPORTED_CONTENT_TYPE",
      solution: expect.stringContaining("application/json"),
    });
  });

  it("answers 404 with the platform's error body for an unknown network", async () => {
    const res = await knSearch({ query: "肺炎", kn_ids: [{ knowledge_network_id: "kn_nope" }] });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      code: "KNOWLEDGE_NETWORK_NOT_FOUND",
      description: expect.stringContaining("kn_nope"),
      link: "",
    });
  });
});
