import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startServer, type TestServer } from "../helpers/server";

/**
 * `POST /tools/knowledge_retrieve` as existing agent configurations call it:
 * plain JSON with the spec's field names (data-retrieval-tools §7.1), the
 * caller in x-account-id, answers and error bodies in the spec's shapes
 * (keyword-context-recall §5, §7.3, §7.4, §8).
 */

const KN_IDS = [{ knowledge_network_id: "kn_medical" }];
const QUESTION = "上气道梗阻有哪些症状";
const SYMPTOMS = ["symptom_000020", "symptom_000028", "symptom_000547", "symptom_000660", "symptom_000837"];

interface Answer {
  status: number;
  traceId: string | null;
  body: Record<string, unknown>;
}

interface ErrorBody {
  error: string;
  status_code: number;
  detail: Record<string, unknown>;
}

interface Neighbor {
  instance_id: string;
  object_type_id: string;
  instance_name: string;
  relation_type_id: string;
  relation_direction: string;
  properties?: Record<string, unknown>;
}

interface KeywordContext {
  keyword: string;
  object_type_id: string;
  matched_field: string;
  instances: {
    instance_id: string;
    instance_name: string;
    properties?: Record<string, unknown>;
    neighbors: Neighbor[];
  }[];
  statistics: { total_instances: number; total_neighbors: number; matched_fields: string[] };
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "silent" });
});
afterAll(() => server.close());

async function retrieve(body: unknown, rawBody?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${server.baseUrl}/tools/knowledge_retrieve`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-account-id": "user_123", ...headers },
    body: rawBody ?? JSON.stringify(body),
  });
  return {
    status: res.status,
    traceId: res.headers.get("x-trace-id"),
    body: (await res.json()) as Record<string, unknown>,
  };
}

/** A caller that asks for Chinese, the language of the spec's error texts. */
const ZH = { "accept-language": "zh" };

/** Step one in a new session; returns the session id. */
async function recallSchema(): Promise<string> {
  const session_id = randomUUID();
  const res = await retrieve({ query: QUESTION, top_k: 5, kn_ids: KN_IDS, session_id });
  expect(res.status).toBe(200);
  return session_id;
}

function keywordCall(session_id: string, extra: Record<string, unknown> = {}) {
  return retrieve({
    query: "上气道梗阻",
    kn_ids: KN_IDS,
    session_id,
    enable_keyword_context: true,
    object_type_id: "disease",
    ...extra,
  });
}

/** An error answer: the spec's three top-level keys and nothing else, the status in the body too. */
function errorOf(res: Answer, status: number): ErrorBody {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(["detail", "error", "status_code"]);
  const body = res.body as unknown as ErrorBody;
  expect(body.status_code).toBe(status);
  return body;
}

describe("schema mode (enable_keyword_context false)", () => {
  it("answers the spec's compact YAML texts by default and echoes the session id", async () => {
    const session_id = randomUUID();
    const res = await retrieve({ query: QUESTION, top_k: 5, kn_ids: KN_IDS, session_id });
    expect(res.status).toBe(200);
    expect(res.body["session_id"]).toBe(session_id);
    expect(typeof res.body["objects"]).toBe("string");
    expect(typeof res.body["relations"]).toBe("string");
    expect(res.body).not.toHaveProperty("object_types");
    const relations = parse(res.body["relations"] as string) as {
      relations: Record<string, { name: string; from: string; to: string }>;
    };
    expect(Object.keys(relations.relations)).toHaveLength(5);
    expect(relations.relations["has_symptom"]).toMatchObject({ name: "疾病症状", from: "disease", to: "symptom" });
    const objects = parse(res.body["objects"] as string) as {
      objects: Record<string, { name: string; properties: { name: string }[] }>;
    };
    expect(objects.objects["disease"]?.name).toBe("疾病");
    expect(objects.objects["disease"]?.properties.map((p) => p.name)).toContain("disease_name");
    expect(objects.objects["symptom"]?.properties.map((p) => p.name)).toContain("symptom_name");
  });

  it("generates a UUID session id when the call has none", async () => {
    const res = await retrieve({ query: QUESTION, kn_ids: KN_IDS });
    expect(res.status).toBe(200);
    expect(res.body["session_id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("answers the spec's full JSON with compact_format false: concepts with properties, operations and keys", async () => {
    const res = await retrieve({
      query: QUESTION,
      top_k: 5,
      kn_ids: KN_IDS,
      session_id: randomUUID(),
      compact_format: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("objects");
    const objectTypes = res.body["object_types"] as Record<string, unknown>[];
    const relationTypes = res.body["relation_types"] as Record<string, unknown>[];
    expect(relationTypes).toHaveLength(5);
    for (const o of objectTypes) {
      expect(o).toMatchObject({
        concept_type: "object_type",
        concept_id: expect.any(String),
        concept_name: expect.any(String),
        primary_key_field: expect.any(String),
      });
      expect(o).not.toHaveProperty("source_object_type_id");
    }
    const disease = objectTypes.find((o) => o["concept_id"] === "disease");
    expect(disease).toMatchObject({ concept_name: "疾病", primary_key_field: "disease_id" });
    const diseaseName = (disease!["properties"] as Record<string, unknown>[]).find((p) => p["name"] === "disease_name");
    expect(diseaseName).toMatchObject({
      display_name: "疾病名称",
      type: "varchar",
      condition_operations: ["==", "!=", "like", "not_like", "in", "not_in"],
    });
    for (const r of relationTypes) {
      expect(r).toMatchObject({
        concept_type: "relation_type",
        concept_id: expect.any(String),
        source_object_type_id: expect.any(String),
        target_object_type_id: expect.any(String),
      });
    }
    expect(relationTypes.find((r) => r["concept_id"] === "has_symptom")).toMatchObject({
      concept_name: "疾病症状",
      source_object_type_id: "disease",
      target_object_type_id: "symptom",
    });
  });
});

describe("keyword mode (enable_keyword_context true)", () => {
  it("answers keyword_context as the spec's compact {context, matched_properties}: 上气道梗阻 finds 上、下气道梗阻 with its properties and symptoms", async () => {
    const session_id = await recallSchema();
    const res = await keywordCall(session_id);
    expect(res.status).toBe(200);
    expect(res.body["session_id"]).toBe(session_id);
    expect(res.body).not.toHaveProperty("objects");
    const compact = res.body["keyword_context"] as { context: string; matched_properties: string[] };
    expect(compact.matched_properties).toEqual(["disease_name"]);
    const context = parse(compact.context) as {
      keyword: string;
      object_type_id: string;
      instances: {
        instance_id: string;
        instance_name: string;
        properties: Record<string, unknown>;
        neighbors: Record<string, string[]>;
      }[];
    };
    expect(context).toMatchObject({ keyword: "上气道梗阻", object_type_id: "disease" });
    expect(context.instances.map((i) => i.instance_id)).toEqual(["disease_004790"]);
    const [instance] = context.instances;
    expect(instance?.instance_name).toBe("上、下气道梗阻");
    expect(instance?.properties).toMatchObject({
      disease_id: "disease_004790",
      disease_name: "上、下气道梗阻",
      age: "儿童",
      treatment: "手术治疗、药物治疗",
    });
    expect(instance?.neighbors["has_symptom 疾病症状 (outgoing)"]).toEqual([
      "呼吸困难 [symptom:symptom_000020]",
      "咳嗽 [symptom:symptom_000028]",
      "吞咽困难 [symptom:symptom_000547]",
      "气喘 [symptom:symptom_000660]",
      "流涎 [symptom:symptom_000837]",
    ]);
  });

  it("answers keyword_context as the spec's object with compact_format false", async () => {
    const session_id = await recallSchema();
    const res = await keywordCall(session_id, { compact_format: false });
    expect(res.status).toBe(200);
    const context = res.body["keyword_context"] as KeywordContext;
    expect(context).toMatchObject({ keyword: "上气道梗阻", object_type_id: "disease", matched_field: "disease_name" });
    expect(context.statistics).toMatchObject({ total_instances: 1, matched_fields: ["disease_name"] });
    const [instance] = context.instances;
    expect(instance).toMatchObject({
      instance_id: "disease_004790",
      instance_name: "上、下气道梗阻",
      properties: { disease_name: "上、下气道梗阻" },
    });
    const symptoms = instance!.neighbors.filter((n) => n.relation_type_id === "has_symptom");
    expect(symptoms.map((n) => n.instance_id)).toEqual(SYMPTOMS);
    expect(symptoms[0]).toMatchObject({
      object_type_id: "symptom",
      instance_name: "呼吸困难",
      relation_direction: "outgoing",
      properties: { symptom_id: "symptom_000020", symptom_name: "呼吸困难" },
    });
    expect(context.statistics.total_neighbors).toBe(instance!.neighbors.length);
  });

  it("ignores top_k, skip_llm and return_union, which agent configurations send on every call", async () => {
    const session_id = await recallSchema();
    // In schema mode skip_llm=false without an LLM would be refused, and top_k=1 would keep one relation type.
    const res = await keywordCall(session_id, { compact_format: false, top_k: 1, skip_llm: false, return_union: true });
    expect(res.status).toBe(200);
    const context = res.body["keyword_context"] as KeywordContext;
    expect(context.instances[0]?.instance_id).toBe("disease_004790");
    // Neighbours over every relation type the step-one schema (top_k 5) recalled.
    expect(new Set(context.instances[0]?.neighbors.map((n) => n.relation_type_id))).toEqual(
      new Set(["has_symptom", "has_complication", "designated_to", "has_alias", "checks"]),
    );
  });
});

describe("the spec's error bodies", () => {
  it("answers 400 'Schema信息不存在' when the session has no schema (the spec's §7.3 call, without object_type_id)", async () => {
    const session_id = randomUUID();
    const call = { query: "上气道梗阻", kn_ids: KN_IDS, session_id, enable_keyword_context: true };
    const body = errorOf(await retrieve(call, undefined, ZH), 400);
    // The spec's words, in this service's terms: the schema is recalled by RetrieveSchema.
    expect(body.error).toBe("Schema信息不存在，请先调用RetrieveSchema召回schema");
    expect(body.detail).toMatchObject({
      message: "请先用问题和这个session_id调用RetrieveSchema召回schema",
      session_id,
    });
    const en = errorOf(await retrieve(call), 400);
    expect(en.error).toBe("this session has no recalled schema: recall it with RetrieveSchema first");
  });

  it("answers 400 'object_type_id参数必须提供' with the spec's message and suggestion when the schema is there", async () => {
    const session_id = await recallSchema();
    const res = await retrieve(
      { query: "上气道梗阻", kn_ids: KN_IDS, session_id, enable_keyword_context: true },
      undefined,
      ZH,
    );
    const body = errorOf(res, 400);
    expect(body.error).toBe("object_type_id参数必须提供，用于指定关键词所属的对象类型");
    expect(body.detail).toMatchObject({
      message:
        "召回关键词上下文时，object_type_id参数必须提供。因为即使有关键词，也有很多对象类型，无法知道这个关键词属于哪个对象类型。",
      suggestion: "请提供object_type_id参数，例如：object_type_id='person'",
    });
  });

  it("answers 400 'session_id参数必须提供' (§8.3) for keyword mode without a session", async () => {
    const res = await retrieve(
      { query: "上气道梗阻", kn_ids: KN_IDS, enable_keyword_context: true, object_type_id: "disease" },
      undefined,
      ZH,
    );
    const body = errorOf(res, 400);
    expect(body.error).toBe("session_id参数必须提供，用于存储和检索schema信息");
    expect(body.detail).toMatchObject({
      message: "session_id参数必须提供，用于存储和检索schema信息",
      reason: "SESSION_ID_REQUIRED",
    });
  });

  it("refuses an unknown top-level key, naming it", async () => {
    const body = errorOf(await retrieve({ query: QUESTION, kn_ids: KN_IDS, topk: 5 }), 400);
    expect(body.error).toContain('"topk"');
    expect(body.detail["reason"]).toBe("INVALID_ARGUMENT");
  });

  it("refuses object_type_id in schema mode, saying it belongs to keyword mode", async () => {
    const body = errorOf(
      await retrieve({ query: QUESTION, kn_ids: KN_IDS, session_id: randomUUID(), object_type_id: "disease" }),
      400,
    );
    expect(body.detail["field_violations"]).toEqual([
      { field: "object_type_id", description: "only used with enable_keyword_context=true" },
    ]);
    expect(body.detail["suggestion"]).toContain("enable_keyword_context=true");
  });

  it("refuses a body that is not JSON", async () => {
    const body = errorOf(await retrieve(undefined, '{"query": "上气道梗阻",'), 400);
    expect(body.detail["reason"]).toBe("INVALID_JSON");
    expect(body.error).toMatch(/not valid JSON/);
  });

  it("names in detail.trace_id the trace id of the x-trace-id response header", async () => {
    const res = await retrieve({
      query: "上气道梗阻",
      kn_ids: KN_IDS,
      session_id: randomUUID(),
      enable_keyword_context: true,
    });
    const body = errorOf(res, 400);
    expect(res.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(body.detail["trace_id"]).toBe(res.traceId);
  });
});
