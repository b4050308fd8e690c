import { type Client, Code } from "@connectrpc/connect";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogicPropertyResolverService } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { callFails, connectHttp } from "../mcp/mcp-client";

/**
 * Issue 23 point 9: a time parameter given explicitly in additional_context
 * that the spec does not allow (step ∉ day|week|month|quarter|year, start/end
 * not ms timestamps in 2000..2100, instant not a boolean, …) is the caller's
 * mistake: INVALID_ARGUMENT naming `additional_context.<key>` and what is
 * allowed, on every transport, before the service asks whether it has an LLM —
 * never LLM_NOT_CONFIGURED, never a question to the LLM.
 */

const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const COMPANY = [{ company_id: "company_000001" }];
const REQUEST = {
  kn_id: "kn_medical",
  ot_id: "company",
  query: "这些企业的药品上市数量",
  unique_identities: COMPANY,
  properties: ["approved_drug_count"],
};
const SPEC_PATH = "/api/kn/logic-property-resolver";
const PLATFORM_PATH = "/api/agent-retrieval/in/v1/kn/logic-property-resolver";
const STEPS = /must be one calendar unit: day, week, month, quarter or year/;
const WINDOW = /must be a millisecond timestamp between 946684800000 \(2000-01-01\) and 4102444800000 \(2100-01-01\)/;

/** additional_context, the violations' fields, and what each description must say (in field order). */
const CASES: [string, string, string[], RegExp[]][] = [
  [
    "JSON step=hour and start=100",
    JSON.stringify({ instant: false, step: "hour", start: 100, end: NOW }),
    ["additional_context.start", "additional_context.step"],
    [/^got "start": 100; must be a millisecond timestamp/, STEPS],
  ],
  [
    "free-text step=hour and start=100",
    "趋势查询 step=hour，start=100",
    ["additional_context.start", "additional_context.step"],
    [/^got start=100; /, /^got step=hour; must be one calendar unit/],
  ],
  [
    "start in seconds",
    `start=1709251200, end=${NOW}, instant=true`,
    ["additional_context.start"],
    [/looks like seconds: multiply by 1000$/],
  ],
  [
    "start after end",
    "start=2024-03-31, end=2024-03-01, instant=true",
    ["additional_context.start"],
    [/^got start=2024-03-31, end=2024-03-01; must not be after end$/],
  ],
  [
    "instant neither true nor false",
    JSON.stringify({ instant: "yes" }),
    ["additional_context.instant"],
    [/^got "instant": "yes"; must be true .* or false/],
  ],
  [
    "an unknown time zone",
    "timezone=Mars/Olympus，instant=true",
    ["additional_context.timezone"],
    [/^got timezone=Mars\/Olympus; must be an IANA time zone/],
  ],
  ["now_ms that is no timestamp", "now_ms=abc", ["additional_context.now_ms"], [WINDOW]],
];

type Transport = "rpc" | "spec path" | "platform path" | "mcp";

interface Refusal {
  reason: string;
  fields: string[];
  descriptions: string[];
  /** The whole error as text, to show what it does not say. */
  text: string;
}

describe("explicit time parameters the spec does not allow", () => {
  let server: TestServer;
  let rpc: Client<typeof LogicPropertyResolverService>;
  let mcp: McpClient;
  beforeAll(async () => {
    // No LLM: a request that reached the LLM check would fail LLM_NOT_CONFIGURED instead.
    server = await startServer();
    rpc = clientWith(LogicPropertyResolverService, server.baseUrl);
    mcp = await connectHttp(server.baseUrl, { "x-account-id": "u-explicit" });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-account-id": "u-explicit" },
      body: JSON.stringify(body),
    });

  /** The request refused over `transport`, with that transport's own code, status and content type checked. */
  async function refusal(
    transport: Transport,
    change: { properties?: string[]; additional_context: string },
  ): Promise<Refusal> {
    const request = { ...REQUEST, ...change };
    if (transport === "rpc") {
      const err = await failure(
        rpc.resolveLogicProperties({
          knId: request.kn_id,
          otId: request.ot_id,
          query: request.query,
          uniqueIdentities: request.unique_identities,
          properties: request.properties,
          additionalContext: request.additional_context,
        }),
      );
      expect(err.code).toBe(Code.InvalidArgument);
      const violations = err.findDetails(BadRequestSchema)[0]?.fieldViolations ?? [];
      return {
        reason: err.findDetails(ErrorInfoSchema)[0]?.reason ?? "",
        fields: violations.map((v) => v.field),
        descriptions: violations.map((v) => v.description),
        text: JSON.stringify({ message: err.rawMessage, details: err.details }),
      };
    }
    if (transport === "mcp") {
      const failed = await callFails(mcp, "get_logic_properties_values", request);
      expect(failed.code).toBe("INVALID_ARGUMENT");
      const violations = failed.invalid_arguments ?? [];
      return {
        reason: failed.reason,
        fields: violations.map((v) => v.field),
        descriptions: violations.map((v) => v.description),
        text: JSON.stringify(failed),
      };
    }
    const res = await post(transport === "spec path" ? SPEC_PATH : PLATFORM_PATH, request);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const text = await res.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    if (transport === "spec path") {
      const violations = body["field_violations"] as { field: string; description: string }[];
      return {
        reason: body["error_code"] as string,
        fields: violations.map((v) => v.field),
        descriptions: violations.map((v) => v.description),
        text,
      };
    }
    expect(Object.keys(body).sort()).toEqual(["code", "description", "details", "link", "solution"]);
    expect(body["solution"]).toContain("additional_context");
    const violations = (body["details"] as { field_violations: { field: string; description: string }[] })
      .field_violations;
    return {
      reason: body["code"] as string,
      fields: violations.map((v) => v.field),
      descriptions: violations.map((v) => v.description),
      text,
    };
  }

  const transports: Transport[] = ["rpc", "spec path", "platform path", "mcp"];
  it.each(
    CASES.flatMap(([name, context, fields, descriptions]) =>
      transports.map((t) => [name, t, context, fields, descriptions] as const),
    ),
  )(
    "%s over %s: INVALID_ARGUMENT naming the field and what it allows",
    async (_n, transport, context, fields, says) => {
      const r = await refusal(transport, { additional_context: context });
      expect(r.reason).toBe("INVALID_ARGUMENT");
      expect(r.fields).toEqual(fields);
      for (const [i, pattern] of says.entries()) expect(r.descriptions[i]).toMatch(pattern);
      expect(r.text).not.toContain("LLM_NOT_CONFIGURED");
      expect(r.text).not.toContain("LLM_BASE_URL");
    },
  );

  it.each(transports)("reports every problem at once over %s: a data property and a bad step", async (transport) => {
    const r = await refusal(transport, {
      properties: ["company_name", "approved_drug_count"],
      additional_context: "step=hour",
    });
    expect(r.fields).toEqual(["properties[0]", "additional_context.step"]);
    expect(r.descriptions[0]).toMatch(/company_name is a data property of company/);
  });

  it("says it in Chinese to a caller that asks for Chinese", async () => {
    const zh = clientWith(LogicPropertyResolverService, server.baseUrl, { "accept-language": "zh" });
    const err = await failure(
      zh.resolveLogicProperties({
        knId: REQUEST.kn_id,
        otId: REQUEST.ot_id,
        query: REQUEST.query,
        uniqueIdentities: REQUEST.unique_identities,
        properties: ["company_name", "approved_drug_count"],
        additionalContext: "start=2024-03-31, end=2024-03-01, instant=true",
      }),
    );
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => [v.field, v.description])).toEqual([
      ["properties[0]", "company_name 是 company 的数据属性，不是逻辑属性：请用 QueryObjectInstances 读取"],
      ["additional_context.start", "收到 start=2024-03-31, end=2024-03-01；不能晚于 end"],
    ]);
    expect(err.rawMessage).toMatch(/^请求无效：/);
  });

  it("leaves a step in the context alone when no requested metric takes one (the operator's LLM reads it as text)", async () => {
    const err = await failure(
      rpc.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "这些企业的健康度",
        uniqueIdentities: COMPANY,
        properties: ["business_health_score"],
        additionalContext: "step=hour",
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("LLM_NOT_CONFIGURED");
  });

  it("does not hold against the request a timezone or now_ms in the context that its own fields override", async () => {
    const res = await post(SPEC_PATH, {
      ...REQUEST,
      timezone: "UTC",
      now_ms: NOW,
      additional_context: `timezone=Mars/Olympus, now_ms=abc, instant=true, start=2026-01-01, end=${NOW}`,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { datas: { company_id: string; approved_drug_count: { datas: unknown[] } }[] };
    expect(body.datas[0]!.company_id).toBe("company_000001");
    expect(body.datas[0]!.approved_drug_count.datas).toHaveLength(1);
  });
});

describe("explicit time parameters the spec does not allow, with an LLM configured", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  beforeAll(async () => {
    llm = await startScriptedLlm(() => ({
      content: JSON.stringify({ approved_drug_count: { instant: true, start: NOW - 86_400_000, end: NOW } }),
    }));
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
  });

  it("refuses them without asking the LLM to guess around them", async () => {
    const err = await failure(
      clientWith(LogicPropertyResolverService, server.baseUrl).resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: "这些企业的药品上市数量",
        uniqueIdentities: COMPANY,
        properties: ["approved_drug_count"],
        additionalContext: JSON.stringify({ step: "hour", start: 100 }),
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field)).toEqual([
      "additional_context.start",
      "additional_context.step",
    ]);
    expect(llm.requests).toHaveLength(0);
  });
});
