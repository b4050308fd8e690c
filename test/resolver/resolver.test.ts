import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, Code } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import { LogicPropertyResolverService, MissingParamsSchema } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { manyMetricsBundle } from "../fixtures/many-metrics-bundle";
import { clientWith, failure } from "../helpers/rpc";
import { type ChatRequest, type Reply, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const MONTH_START = (y: number, m: number) => Date.parse(`${y}-${String(m).padStart(2, "0")}-01T00:00:00+08:00`);
const COMPANY = [{ company_id: "company_000001" }];
const QUESTION = "注册资金大于100万人民币的企业有哪些？想知道这些药企的药品上市情况，并且这些企业的健康度怎么样？";

/** The logic property a resolver prompt is about (its system message names it). */
function propertyOf(req: ChatRequest): string {
  return /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1] ?? "";
}

/** Answers each property's prompt from a table, JSON-encoding objects. */
function answers(table: Record<string, unknown | ((req: ChatRequest) => Reply)>): (req: ChatRequest) => Reply {
  return (req) => {
    const entry = table[propertyOf(req)];
    if (typeof entry === "function") return (entry as (r: ChatRequest) => Reply)(req);
    return { content: JSON.stringify(entry ?? { _error: "unscripted" }) };
  };
}

const healthParams = {
  weights: { growth: 0.4, breadth: 0.3, stability: 0.3 },
  focus_categories: ["片剂", "注射剂"],
  as_of: NOW,
};

describe("ResolveLogicProperties on the sample network", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: Client<typeof LogicPropertyResolverService>;
  /** A caller that asks for Chinese: the spec's texts are checked in its words. */
  let zhClient: Client<typeof LogicPropertyResolverService>;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    client = clientWith(LogicPropertyResolverService, server.baseUrl);
    zhClient = clientWith(LogicPropertyResolverService, server.baseUrl, { "accept-language": "zh" });
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });
  beforeEach(() => llm.setFallback(() => ({ content: '{"_error":"unscripted"}' })));

  it("resolves an instant metric and an operator with object and array parameters in one call", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: { approved_drug_count: { instant: true, start: MONTH_START(2025, 11), end: NOW } },
        business_health_score: { business_health_score: healthParams },
      }),
    );
    const before = llm.requests.length;
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: QUESTION,
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count", "business_health_score"],
      additionalContext: "company_id=company_000001；即时查询instant=true",
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    expect(llm.requests.length - before).toBe(2);
    const [row] = res.datas;
    expect(row).toMatchObject({ company_id: "company_000001" });
    const metric = row!["approved_drug_count"] as {
      model: { unit_type: string };
      datas: { times: number[]; values: unknown[] }[];
    };
    expect(metric.model.unit_type).toBe("countUnit");
    expect(metric.datas[0]!.times).toEqual([NOW]);
    const score = row!["business_health_score"] as { score: number; level: string; weights: unknown };
    expect(score.score).toBeGreaterThanOrEqual(0);
    expect(score.level).toMatch(/^[A-E]$/);
    expect(score.weights).toEqual(healthParams.weights);
    // The operator's prompt carries its parameter schema from the operator market.
    const operatorPrompt = llm.requests.slice(before).find((r) => propertyOf(r) === "business_health_score")!;
    expect(operatorPrompt.messages[1]!.content).toContain("算子参数定义");
    expect(operatorPrompt.messages[1]!.content).toContain("focus_categories");
    expect(res.debug?.nowMs).toBe(BigInt(NOW));
    expect(res.debug?.properties.map((p) => p.property).sort()).toEqual([
      "approved_drug_count",
      "business_health_score",
    ]);
    expect(new Set(res.debug?.properties.map((p) => p.spanId)).size).toBe(2);
  });

  it("lets a time fact win over the LLM: 上个月 is computed, the LLM's start is replaced and debug says so", async () => {
    llm.setFallback(
      answers({ approved_drug_count: { approved_drug_count: { instant: true, start: 946684800000, end: NOW } } }),
    );
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "上个月这些企业上市了多少药品",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    const params = res.debug!.dynamicParams!["approved_drug_count"] as { start: number; end: number };
    expect(params.start).toBe(MONTH_START(2026, 10));
    expect(params.end).toBe(MONTH_START(2026, 11) - 1);
    expect(res.debug!.properties[0]!.notes.join("\n")).toMatch(
      /the LLM gave start=946684800000; the time fact \d+ wins/,
    );
  });

  it("answers a trend query with monthly buckets", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: {
          approved_drug_count: { instant: false, start: MONTH_START(2026, 1), end: NOW, step: "month" },
        },
      }),
    );
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "今年这些企业每月的药品上市数量趋势",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
    });
    const metric = res.datas[0]!["approved_drug_count"] as { step: string; datas: { times: number[] }[] };
    expect(metric.step).toBe("month");
    expect(metric.datas[0]!.times).toEqual(Array.from({ length: 11 }, (_, i) => MONTH_START(2026, i + 1)));
  });

  it("repairs an answer that breaks the metric rules, once", async () => {
    let calls = 0;
    llm.setFallback(
      answers({
        approved_drug_count: () => ({
          content: JSON.stringify({
            approved_drug_count: {
              instant: false,
              start: MONTH_START(2026, 1),
              end: NOW,
              ...(calls++ === 0 ? {} : { step: "quarter" }),
            },
          }),
        }),
      }),
    );
    const before = llm.requests.length;
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "这些企业的药品上市趋势",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    expect(res.debug!.properties[0]!.repairs).toBe(1);
    const repair = llm.requests[before + 1]!;
    expect(repair.messages.at(-1)!.content).toContain("step");
    expect((res.datas[0]!["approved_drug_count"] as { step: string }).step).toBe("quarter");
  });

  it("fails the whole call with MISSING_INPUT_PARAMS when an answer cannot be repaired, naming property, parameter and hint", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: { approved_drug_count: { instant: false, start: MONTH_START(2026, 1), end: NOW } },
        business_health_score: { business_health_score: healthParams },
      }),
    );
    const err = await failure(
      zhClient.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "这些企业的药品上市趋势和健康度",
        uniqueIdentities: COMPANY,
        properties: ["approved_drug_count", "business_health_score"],
        nowMs: BigInt(NOW),
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.rawMessage).toBe("dynamic_params 缺少必需的 input 参数");
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("MISSING_INPUT_PARAMS");
    const missing = err.findDetails(MissingParamsSchema)[0]!;
    expect(missing.missing).toEqual([
      expect.objectContaining({
        property: "approved_drug_count",
        params: [expect.objectContaining({ name: "step", type: "STRING" })],
      }),
    ]);
    expect(missing.missing[0]!.params[0]!.hint).toContain("step=month");
    expect(missing.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(err.findDetails(AgentHintSchema)[0]?.message).toContain("additional_context");
  });

  it("passes the LLM's _error on as missing parameters with hints in the caller's language, without a repair round", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: { _error: "缺少必填参数: start (时间范围开始时间戳), end (时间范围结束时间戳)" },
      }),
    );
    const request = {
      knId: "kn_medical",
      otId: "company",
      query: "这些企业的药品上市数量",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
    };
    const before = llm.requests.length;
    const err = await failure(client.resolveLogicProperties(request));
    expect(llm.requests.length - before).toBe(1);
    const startHint = (e: typeof err) =>
      e.findDetails(MissingParamsSchema)[0]!.missing[0]!.params.find((p) => p.name === "start")!.hint;
    const names = err.findDetails(MissingParamsSchema)[0]!.missing[0]!.params.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["instant", "start", "end"]));
    expect(startHint(err)).toContain("time range");
    expect(startHint(await failure(zhClient.resolveLogicProperties(request)))).toContain("时间范围");
  });

  it("retries the LLM after a 429 and succeeds", async () => {
    llm.queue({ status: 429, body: '{"error":"rate limited"}' });
    llm.setFallback(
      answers({
        approved_drug_count: { approved_drug_count: { instant: true, start: MONTH_START(2025, 1), end: NOW } },
      }),
    );
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "2025年以来这些企业上市了多少药品",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      additionalContext: "instant=true",
    });
    expect(res.datas).toHaveLength(1);
  });

  it("keeps rows in request order and reports identities with no row", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: { approved_drug_count: { instant: true, start: MONTH_START(2025, 1), end: NOW } },
      }),
    );
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "2025年以来上市了多少药品",
      uniqueIdentities: [
        { company_id: "company_000003" },
        { company_id: "company_999999" },
        { company_id: "company_000001" },
      ],
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      additionalContext: "instant=true",
    });
    expect(res.datas.map((d) => d["company_id"])).toEqual(["company_000003", "company_999999", "company_000001"]);
    expect(res.datas[1]!["approved_drug_count"]).toBeNull();
    expect(res.unmatchedIdentities).toEqual([{ company_id: "company_999999" }]);
  });

  it("resolves without the LLM when additional_context gives every parameter (an instant query needs no step)", async () => {
    const before = llm.requests.length;
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "这些企业的药品上市数量",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      additionalContext: `start=${MONTH_START(2025, 1)}，end=${NOW}，instant=true`,
    });
    expect(llm.requests.length).toBe(before);
    expect((res.datas[0]!["approved_drug_count"] as { datas: unknown[] }).datas).toHaveLength(1);
  });

  it.each([
    [{ properties: ["company_name"] }, "properties[0]", /data property of company/],
    [
      { properties: ["revenue"] },
      "properties[0]",
      /not a logic property of company; its logic properties: approved_drug_count, business_health_score/,
    ],
    [{ uniqueIdentities: [{ company_name: "x" }] }, "unique_identities[0]", /missing primary key company_id/],
  ])("rejects %o with a field violation", async (change, field, description) => {
    const err = await failure(
      client.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "q",
        uniqueIdentities: COMPANY,
        properties: ["approved_drug_count"],
        ...change,
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    const violation = err.findDetails(BadRequestSchema)[0]!.fieldViolations.find((v) => v.field === field);
    expect(violation?.description).toMatch(description);
  });

  it("takes the network from the x-kn-id header when kn_id is empty, and names both ways when neither is given", async () => {
    const request = {
      otId: "company",
      query: "这些企业的药品上市数量",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      additionalContext: `start=${MONTH_START(2025, 1)}，end=${NOW}，instant=true`,
    };
    const withHeader = clientWith(LogicPropertyResolverService, server.baseUrl, { "x-kn-id": "kn_medical" });
    const res = await withHeader.resolveLogicProperties(request);
    expect((res.datas[0]!["approved_drug_count"] as { datas: unknown[] }).datas).toHaveLength(1);
    const err = await failure(client.resolveLogicProperties(request));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(ErrorInfoSchema)[0]!.reason).toBe("KN_ID_REQUIRED");
    expect(err.findDetails(BadRequestSchema)[0]!.fieldViolations.map((v) => v.field)).toEqual(["kn_id"]);
  });

  it("rejects a request with neither spelling of identities, or both", async () => {
    const neither = await failure(
      client.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "q",
        properties: ["approved_drug_count"],
      }),
    );
    expect(neither.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!.field).toBe("unique_identities");
    const both = await failure(
      client.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "q",
        properties: ["approved_drug_count"],
        uniqueIdentities: COMPANY,
        instanceIdentities: COMPANY,
      }),
    );
    expect(both.findDetails(BadRequestSchema)[0]!.fieldViolations[0]!.field).toBe("instance_identities");
  });

  it("answers the spec's JSON shapes on POST /api/kn/logic-property-resolver", async () => {
    llm.setFallback(answers({ approved_drug_count: { _error: "缺少必填参数: start" } }));
    const res = await fetch(`${server.baseUrl}/api/kn/logic-property-resolver`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-account-id": "u-1",
        "x-account-type": "user",
        "accept-language": "zh",
      },
      body: JSON.stringify({
        kn_id: "kn_medical",
        ot_id: "company",
        query: "药品上市情况",
        _instance_identities: COMPANY,
        properties: ["approved_drug_count"],
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      error_code: string;
      message: string;
      missing: { property: string }[];
      trace_id: string;
    };
    expect(body).toMatchObject({
      error_code: "MISSING_INPUT_PARAMS",
      message: "dynamic_params 缺少必需的 input 参数",
      missing: [{ property: "approved_drug_count" }],
    });
    expect(body.trace_id).toBe(res.headers.get("x-trace-id"));

    llm.setFallback(
      answers({
        approved_drug_count: { approved_drug_count: { instant: true, start: MONTH_START(2025, 1), end: NOW } },
      }),
    );
    const ok = await fetch(`${server.baseUrl}/api/kn/logic-property-resolver`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-1" },
      body: JSON.stringify({
        kn_id: "kn_medical",
        ot_id: "company",
        query: "2025年以来上市了多少药品",
        unique_identities: COMPANY,
        properties: ["approved_drug_count"],
        now_ms: NOW,
        additional_context: "instant=true",
      }),
    });
    expect(ok.status).toBe(200);
    const okBody = (await ok.json()) as { datas: Record<string, unknown>[] };
    expect(okBody.datas[0]).toMatchObject({ company_id: "company_000001" });
    expect(Object.keys(okBody)).toEqual(["datas"]);
  });
});

describe("ResolveLogicProperties: answers, schemas and the REST contract in detail", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: Client<typeof LogicPropertyResolverService>;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    client = clientWith(LogicPropertyResolverService, server.baseUrl);
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });
  beforeEach(() => llm.setFallback(() => ({ content: '{"_error":"unscripted"}' })));

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-1", ...headers },
      body: JSON.stringify(body),
    });

  it("checks an operator's object parameter against the operator market schema and repairs it", async () => {
    let calls = 0;
    llm.setFallback(
      answers({
        business_health_score: () => ({
          content: JSON.stringify({
            business_health_score:
              calls++ === 0 ? { ...healthParams, weights: { growth: 0.5, quality: 0.5 } } : healthParams,
          }),
        }),
      }),
    );
    const before = llm.requests.length;
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "这些企业的健康度怎么样",
      uniqueIdentities: COMPANY,
      properties: ["business_health_score"],
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    expect(res.debug!.properties[0]!.repairs).toBe(1);
    expect(llm.requests[before + 1]!.messages.at(-1)!.content).toContain("weights.quality is not allowed");
    expect(res.datas[0]!["business_health_score"]).toMatchObject({
      level: expect.any(String),
      weights: healthParams.weights,
    });
    const firstPrompt = llm.requests[before]!.messages.reduce((n, m) => n + m.content.length, 0);
    expect(res.debug!.properties[0]!.promptChars).toBeGreaterThan(firstPrompt);
  });

  it("reads the fenced answer after a brace-laden preamble, and drops a step the LLM added to an instant query", async () => {
    llm.setFallback(
      answers({
        approved_drug_count: () => ({
          content: `格式示例 {"x": {}} 如下：\n\`\`\`json\n${JSON.stringify({ approved_drug_count: { instant: true, start: MONTH_START(2026, 1), end: NOW, step: "month" } })}\n\`\`\``,
        }),
      }),
    );
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "今年以来上市了多少药品",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    const debug = res.debug!.properties[0]!;
    expect(debug.repairs).toBe(0);
    expect(debug.notes.join("\n")).toContain('instant=true, so step="month" was dropped');
    expect(res.debug!.dynamicParams).toMatchObject({ approved_drug_count: { instant: true } });
    expect(JSON.stringify(res.debug!.dynamicParams)).not.toContain("step");
  });

  it("asks again when the answer is not keyed by the property and names none of its parameters", async () => {
    let calls = 0;
    llm.setFallback(
      answers({
        approved_drug_count: () => ({
          content: JSON.stringify(
            calls++ === 0
              ? { result: "ok" }
              : { approved_drug_count: { instant: true, start: MONTH_START(2026, 1), end: NOW } },
          ),
        }),
      }),
    );
    const before = llm.requests.length;
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "今年以来上市了多少药品",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    expect(res.debug!.properties[0]!.repairs).toBe(1);
    expect(llm.requests[before + 1]!.messages.at(-1)!.content).toContain('the answer has no "approved_drug_count" key');
  });

  it("answers MISSING_INPUT_PARAMS at the platform's path in its envelope, the list, the LLM's reason and debug in details", async () => {
    llm.setFallback(answers({ approved_drug_count: { _error: "缺少必填参数: start" } }));
    const body = {
      kn_id: "kn_medical",
      ot_id: "company",
      query: "药品上市情况",
      unique_identities: COMPANY,
      properties: ["approved_drug_count"],
      options: { return_debug: true },
    };
    const platform = await post("/api/agent-retrieval/in/v1/kn/logic-property-resolver", body, {
      "accept-language": "zh",
    });
    // The platform answers it 400 in its envelope (its OpenAPI's 200 example is not what its code does).
    expect(platform.status).toBe(400);
    expect(platform.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const answer = (await platform.json()) as {
      code: string;
      description: string;
      solution: string;
      link: string;
      details: {
        missing: { property: string; params: { name: string; type: string; hint: string }[] }[];
        llm_errors: string;
        debug: { properties: { raw_answers: string[] }[] };
        trace_id: string;
      };
    };
    expect(Object.keys(answer).sort()).toEqual(["code", "description", "details", "link", "solution"]);
    expect(answer.code).toBe("MISSING_INPUT_PARAMS");
    expect(answer.description).toBe("dynamic_params 缺少必需的 input 参数");
    expect(answer.solution).toContain("additional_context");
    expect(answer.details.missing[0]!.property).toBe("approved_drug_count");
    expect(answer.details.missing[0]!.params.find((p) => p.name === "start")).toEqual({
      name: "start",
      type: "INTEGER",
      hint: expect.stringContaining("时间范围"),
    });
    expect(answer.details.llm_errors).toContain("缺少必填参数: start");
    expect(answer.details.debug.properties[0]!.raw_answers[0]).toContain("_error");
    expect(answer.details.trace_id).toBe(platform.headers.get("x-trace-id"));

    const spec = await post("/api/kn/logic-property-resolver", body);
    expect(spec.status).toBe(400);
    const specAnswer = (await spec.json()) as Record<string, unknown>;
    expect(Object.keys(specAnswer)).toEqual([
      "error_code",
      "message",
      "missing",
      "hint",
      "llm_errors",
      "debug",
      "trace_id",
    ]);

    const err = await failure(
      client.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "药品上市情况",
        uniqueIdentities: COMPANY,
        properties: ["approved_drug_count"],
      }),
    );
    expect(err.findDetails(ErrorInfoSchema)[0]!.metadata["llm_errors"]).toContain("缺少必填参数: start");
  });

  it("names _instance_identities in REST violations, refuses empty key values and takes options: null as the defaults", async () => {
    const both = await post("/api/kn/logic-property-resolver", {
      kn_id: "kn_medical",
      ot_id: "company",
      query: "q",
      properties: ["approved_drug_count"],
      unique_identities: COMPANY,
      _instance_identities: COMPANY,
    });
    expect(both.status).toBe(400);
    expect(((await both.json()) as { field_violations: { field: string }[] }).field_violations[0]!.field).toBe(
      "_instance_identities",
    );

    const empty = await post("/api/kn/logic-property-resolver", {
      kn_id: "kn_medical",
      ot_id: "company",
      query: "q",
      properties: ["approved_drug_count"],
      unique_identities: [{ company_id: " " }],
    });
    expect(empty.status).toBe(400);
    expect(
      ((await empty.json()) as { field_violations: { field: string; description: string }[] }).field_violations[0],
    ).toEqual({
      field: "unique_identities[0].company_id",
      description: "a primary key value must not be empty",
    });

    const nullOptions = await post("/api/kn/logic-property-resolver", {
      kn_id: "kn_medical",
      ot_id: "company",
      query: "今年以来上市了多少药品",
      unique_identities: COMPANY,
      properties: ["approved_drug_count"],
      additional_context: `instant=true, start=${MONTH_START(2026, 1)}, end=${NOW}`,
      options: null,
    });
    expect(nullOptions.status).toBe(200);
  });

  it("computes periods in the request's timezone even when additional_context names another", async () => {
    const res = await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "今年以来的即时值",
      uniqueIdentities: COMPANY,
      properties: ["approved_drug_count"],
      additionalContext: "timezone=America/New_York；instant=true",
      timezone: "UTC",
      nowMs: BigInt(NOW),
      options: { returnDebug: true },
    });
    expect(res.debug!.timezone).toBe("UTC");
    expect(res.debug!.dynamicParams).toMatchObject({ approved_drug_count: { start: Date.UTC(2026, 0, 1) } });
  });
});

describe("ResolveLogicProperties concurrency", () => {
  let dir: string;
  let llm: ScriptedLlm;
  let server: TestServer;
  const PROPERTIES = Array.from({ length: 8 }, (_, i) => `metric_${i + 1}`);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "cl-resolver-"));
    const bundle = manyMetricsBundle("kn_many", PROPERTIES, MONTH_START(2026, 1));
    writeFileSync(join(dir, "many.json"), JSON.stringify(bundle));
    llm = await startScriptedLlm(() => ({ delayMs: 150, content: "" }));
    llm.setFallback((req) => ({
      delayMs: 150,
      content: JSON.stringify({ [propertyOf(req)]: { instant: true, start: MONTH_START(2026, 1), end: NOW } }),
    }));
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, KN_BUNDLE: join(dir, "many.json") });
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("asks the LLM about each property separately, at most max_concurrency at a time", async () => {
    const before = llm.requests.length;
    const res = await clientWith(LogicPropertyResolverService, server.baseUrl).resolveLogicProperties({
      knId: "kn_many",
      otId: "company",
      query: "这家企业的各项指标",
      uniqueIdentities: [{ company_id: "c1" }],
      properties: PROPERTIES,
      nowMs: BigInt(NOW),
      options: { maxConcurrency: 4 },
    });
    expect(
      Object.keys(res.datas[0]!)
        .filter((k) => k.startsWith("metric_"))
        .sort(),
    ).toEqual([...PROPERTIES].sort());
    const arrivals = llm.requests.slice(before).map((r) => r.at);
    expect(arrivals).toHaveLength(8);
    // The first four arrive together; the next four only as answers (150 ms each) come back.
    const first = Math.min(...arrivals);
    const early = arrivals.filter((t) => t - first < 100).length;
    expect(early).toBe(4);
    expect(new Set(llm.requests.slice(before).map(propertyOf))).toEqual(new Set(PROPERTIES));
  });
});

describe("ResolveLogicProperties when a dependency is down", () => {
  const ask = (server: TestServer, property: string) =>
    clientWith(LogicPropertyResolverService, server.baseUrl).resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "药品上市情况",
      uniqueIdentities: COMPANY,
      properties: [property],
    });

  it("reports an unreachable LLM as UNAVAILABLE after its retries", async () => {
    const server = await startServer({ LLM_BASE_URL: "http://127.0.0.1:1/v1", LLM_TIMEOUT_MS: "500" });
    try {
      const err = await failure(ask(server, "approved_drug_count"));
      expect(err.code).toBe(Code.Unavailable);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_UNREACHABLE");
    } finally {
      await server.close();
    }
  });

  it("reports an unreachable platform at once, before any LLM call", async () => {
    const llm = await startScriptedLlm();
    const server = await startServer({
      LLM_BASE_URL: llm.baseUrl,
      ONTOLOGY_MANAGER_URL: "http://127.0.0.1:1",
      ONTOLOGY_QUERY_URL: "http://127.0.0.1:1",
    });
    try {
      const err = await failure(ask(server, "approved_drug_count"));
      expect(err.code).toBe(Code.Unavailable);
      expect(err.findDetails(ErrorInfoSchema)[0]?.metadata["upstream"]).toBe("ontology-manager");
      expect(llm.requests).toHaveLength(0);
    } finally {
      await server.close();
      await llm.close();
    }
  });

  it("needs an LLM when a parameter is not given, and says which setting", async () => {
    const server = await startServer();
    try {
      const err = await failure(ask(server, "business_health_score"));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toContain("LLM_BASE_URL");
    } finally {
      await server.close();
    }
  });
});
