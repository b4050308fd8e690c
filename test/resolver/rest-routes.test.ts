import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { decode } from "@toon-format/toon";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { text } from "../../src/errors/text";
import { invalidArgument } from "../../src/errors/tool-error";
import { resolverError } from "../../src/resolver/rest-routes";
import { type ChatRequest, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { type Answer, callOk, connectHttp, withoutIds } from "../mcp/mcp-client";

/**
 * Issue 23 point 5: the resolver's two REST paths honour `response_format`
 * as the platform's tool routes do — JSON by default, the MCP tool
 * get_logic_properties_values's compact answer as TOON or YAML with its own
 * content type, anything else a 400 naming the allowed values — and write
 * errors always as JSON: at the spec's path in its §9.1 shape, at the
 * platform's path in the platform's envelope {code, description, solution,
 * link, details}, MISSING_INPUT_PARAMS's list structured in both.
 */

const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const YEAR_START = Date.parse("2026-01-01T00:00:00+08:00");
const COMPANY = [{ company_id: "company_000001" }];
const SPEC_PATH = "/api/kn/logic-property-resolver";
const PLATFORM_PATH = "/api/agent-retrieval/in/v1/kn/logic-property-resolver";
const PATHS = [SPEC_PATH, PLATFORM_PATH];
const JSON_TYPE = "application/json; charset=utf-8";

/** A metric the context settles without the LLM, and an operator the scripted LLM fills. */
const BODY = {
  kn_id: "kn_medical",
  ot_id: "company",
  query: "今年以来这些药企的药品上市数量和健康度",
  _instance_identities: COMPANY,
  properties: ["approved_drug_count", "business_health_score"],
  additional_context: `instant=true, start=${YEAR_START}, end=${NOW}；健康度权重 growth=0.4, breadth=0.3, stability=0.3`,
  now_ms: NOW,
};
const HEALTH = { weights: { growth: 0.4, breadth: 0.3, stability: 0.3 }, focus_categories: ["片剂"], as_of: NOW };

function scripted(req: ChatRequest) {
  const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1];
  if (property === "business_health_score") return { content: JSON.stringify({ business_health_score: HEALTH }) };
  return { content: JSON.stringify({ _error: "缺少必填参数: start (时间范围开始时间戳)" }) };
}

describe("the resolver's REST routes: response_format and error shapes", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let mcp: McpClient;
  beforeAll(async () => {
    llm = await startScriptedLlm(scripted);
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    mcp = await connectHttp(server.baseUrl, { "x-account-id": "u-rest" });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await llm?.close();
  });
  beforeEach(() => {
    llm.setFallback(scripted);
  });

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}${url}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-rest", ...headers },
      body: JSON.stringify(body),
    });

  /** What the MCP tool answers for BODY in `format`, read back. */
  const toolAnswer = (format: "toon" | "yaml") =>
    callOk(mcp, "get_logic_properties_values", { ...BODY, response_format: format });

  it.each(PATHS)("%s?response_format=toon answers the MCP tool's compact answer as TOON", async (path) => {
    const res = await post(`${path}?response_format=toon`, BODY);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/toon; charset=utf-8");
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
    const answer = decode(text) as Answer;
    expect(answer["trace_id"]).toBe(res.headers.get("x-trace-id"));
    expect(answer["identity_keys"]).toEqual(["company_id"]);
    expect((answer["rows"] as Answer[])[0]).toMatchObject({ row: 0, company_id: "company_000001" });
    expect((answer["metrics"] as Answer[]).map((m) => m["property"])).toEqual(["approved_drug_count"]);
    expect(withoutIds(answer)).toEqual(withoutIds(await toolAnswer("toon")));
  });

  it.each(PATHS)("%s?response_format=yaml answers the same compact answer as YAML", async (path) => {
    const res = await post(`${path}?response_format=yaml`, BODY);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/yaml; charset=utf-8");
    const answer = parseYaml(await res.text()) as Answer;
    expect(answer["trace_id"]).toBe(res.headers.get("x-trace-id"));
    expect(withoutIds(answer)).toEqual(withoutIds(await toolAnswer("yaml")));
  });

  it.each(PATHS)("%s answers JSON, the values passed through, without response_format and with json", async (path) => {
    for (const url of [path, `${path}?response_format=json`]) {
      const res = await post(url, BODY);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(JSON_TYPE);
      const body = (await res.json()) as { datas: Record<string, unknown>[] };
      expect(Object.keys(body)).toEqual(["datas"]);
      expect(body.datas[0]).toMatchObject({
        company_id: "company_000001",
        approved_drug_count: { datas: [expect.objectContaining({ times: [NOW] })] },
        business_health_score: expect.objectContaining({ weights: HEALTH.weights }),
      });
    }
  });

  it("refuses an unknown response_format at the spec's path in its shape, naming the allowed values, before any work", async () => {
    const before = llm.requests.length;
    const res = await post(`${SPEC_PATH}?response_format=xml`, BODY);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe(JSON_TYPE);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      error_code: "INVALID_ARGUMENT",
      field_violations: [{ field: "response_format", description: 'must be "json", "toon" or "yaml"' }],
      trace_id: res.headers.get("x-trace-id"),
    });
    expect(body["message"]).toContain('"json", "toon" or "yaml"');
    expect(llm.requests.length).toBe(before);
  });

  it("refuses an unknown response_format at the platform's path in its envelope", async () => {
    const before = llm.requests.length;
    const res = await post(`${PLATFORM_PATH}?response_format=xml`, BODY);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe(JSON_TYPE);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({
      code: "INVALID_ARGUMENT",
      description: 'invalid request: response_format: must be "json", "toon" or "yaml"',
      details: {
        field_violations: [{ field: "response_format", description: 'must be "json", "toon" or "yaml"' }],
        trace_id: res.headers.get("x-trace-id"),
      },
      solution: "Correct the fields named in the violations and call again.",
      link: "",
    });
    expect(llm.requests.length).toBe(before);
  });

  it("writes MISSING_INPUT_PARAMS as JSON when TOON was asked, its list structured in both shapes", async () => {
    const missingBody = {
      ...BODY,
      query: "这些药企的药品上市数量",
      properties: ["approved_drug_count"],
      additional_context: "",
    };
    // In Chinese, the spec's own words (§9.1).
    const zh = { "accept-language": "zh" };
    const spec = await post(`${SPEC_PATH}?response_format=toon`, missingBody, zh);
    expect(spec.status).toBe(400);
    expect(spec.headers.get("content-type")).toBe(JSON_TYPE);
    const specBody = (await spec.json()) as {
      error_code: string;
      message: string;
      missing: { property: string; params: { name: string; type: string; hint: string }[] }[];
      trace_id: string;
    };
    expect(specBody.error_code).toBe("MISSING_INPUT_PARAMS");
    expect(specBody.message).toBe("dynamic_params 缺少必需的 input 参数");
    expect(specBody.missing.map((m) => m.property)).toEqual(["approved_drug_count"]);
    expect(specBody.missing[0]!.params.map((p) => p.name)).toEqual(expect.arrayContaining(["start", "end"]));
    expect(specBody.missing[0]!.params.find((p) => p.name === "start")).toEqual({
      name: "start",
      type: "INTEGER",
      hint: expect.stringContaining("additional_context"),
    });

    const platform = await post(`${PLATFORM_PATH}?response_format=toon`, missingBody, zh);
    expect(platform.status).toBe(400);
    expect(platform.headers.get("content-type")).toBe(JSON_TYPE);
    const envelope = (await platform.json()) as {
      code: string;
      description: string;
      solution: string;
      link: string;
      details: { missing: unknown; llm_errors: string; trace_id: string };
    };
    expect(envelope.code).toBe("MISSING_INPUT_PARAMS");
    expect(envelope.description).toBe("dynamic_params 缺少必需的 input 参数");
    expect(envelope.solution).toContain("additional_context");
    expect(envelope.link).toBe("");
    expect(envelope.details.missing).toEqual(specBody.missing);
    expect(envelope.details.llm_errors).toContain("缺少必填参数: start");
    expect(envelope.details.trace_id).toBe(platform.headers.get("x-trace-id"));
  });

  it("refuses unknown body keys at both paths, naming them in each shape", async () => {
    const spec = await post(SPEC_PATH, { ...BODY, response_format: "toon" });
    expect(spec.status).toBe(400);
    const specBody = (await spec.json()) as { error_code: string; field_violations: { field: string }[] };
    expect(specBody.error_code).toBe("INVALID_ARGUMENT");
    expect(specBody.field_violations.map((v) => v.field)).toEqual(["response_format"]);

    const platform = await post(PLATFORM_PATH, { ...BODY, limit: 5 });
    expect(platform.status).toBe(400);
    const envelope = (await platform.json()) as { code: string; details: { field_violations: { field: string }[] } };
    expect(envelope.code).toBe("INVALID_ARGUMENT");
    expect(envelope.details.field_violations.map((v) => v.field)).toEqual(["limit"]);
  });

  it("names _instance_identities in the platform envelope's violations", async () => {
    const res = await post(PLATFORM_PATH, { ...BODY, unique_identities: COMPANY });
    expect(res.status).toBe(400);
    const envelope = (await res.json()) as { details: { field_violations: { field: string; description: string }[] } };
    expect(envelope.details.field_violations).toEqual([
      { field: "_instance_identities", description: "conflicts with unique_identities: give one of the two" },
    ]);
  });

  it("answers an unknown object type at the platform's path as 404 in the envelope", async () => {
    const res = await post(`${PLATFORM_PATH}?response_format=toon`, { ...BODY, ot_id: "no_such_type" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe(JSON_TYPE);
    const envelope = (await res.json()) as { code: string; description: string; details: { trace_id: string } };
    expect(envelope.code).toBe("OBJECT_TYPE_NOT_FOUND");
    expect(envelope.description).toBe("object type no_such_type does not exist in knowledge network kn_medical");
    expect(envelope.details.trace_id).toBe(res.headers.get("x-trace-id"));
  });
});

describe("the spec's error body (§9.1) in one language", () => {
  const err = invalidArgument([{ field: "ot_id", description: text("required, e.g. company", "必填，例如 company") }], {
    message: text("Pass ot_id.", "传入 ot_id。"),
  });

  it.each([
    ["en", "invalid request: ot_id: required, e.g. company", "required, e.g. company", "Pass ot_id."],
    ["zh", "请求无效：ot_id：必填，例如 company", "必填，例如 company", "传入 ot_id。"],
  ] as const)("renders message, violations and hint in %s, never both", (language, message, description, hint) => {
    expect(resolverError(err, "t-1", language)).toEqual({
      error_code: "INVALID_ARGUMENT",
      message,
      field_violations: [{ field: "ot_id", description }],
      hint,
      trace_id: "t-1",
    });
  });
});
