import { readFileSync } from "node:fs";
import { type Client, Code } from "@connectrpc/connect";
import type { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { LogicPropertyResolverService, MissingParamsSchema } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { clientWith, failure } from "../helpers/rpc";
import { type ChatRequest, type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import { callOk, connectHttp } from "../mcp/mcp-client";

/**
 * Every example of the platform tool's two OpenAPI files for the resolver
 * (get_logic_properties_values and logic-property-resolver), sent as they are
 * to our REST route at the platform's path, to the RPC and to the MCP tool:
 * the same rows come back, in the shape the files' 200 example shows; the
 * missing-parameter example's shape at the spec's path (the platform's own
 * path answers it in the platform's error envelope, as its code does).
 */

type Body = Record<string, unknown>;
interface OpenApi {
  paths: Record<
    string,
    {
      post: {
        requestBody: { content: Record<string, { examples?: Record<string, { value: Body }> }> };
        responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: Body }> }> }>;
      };
    }
  >;
}

const load = (name: string) => parseYaml(readFileSync(`test/fixtures/upstream/${name}`, "utf8")) as OpenApi;
const PATH = "/api/agent-retrieval/in/v1/kn/logic-property-resolver";
const FILES = ["anchor-get_logic_properties_values.openapi.yaml", "anchor-logic-property-resolver.openapi.yaml"];

const requestExamples = FILES.flatMap((file) => {
  const post = load(file).paths[PATH]!.post;
  return Object.entries(post.requestBody.content["application/json"]!.examples ?? {}).map(
    ([name, e]) => [`${file} ${name}`, e.value] as const,
  );
});
const responseExamples = load(FILES[1]!).paths[PATH]!.post.responses["200"]!.content!["application/json"]!.examples!;

const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const YEAR_AGO = NOW - 365 * 86_400_000;

/** The scripted LLM's parameters for the sample company's two logic properties. */
function answer(req: ChatRequest) {
  const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1];
  if (property === "approved_drug_count")
    return { content: JSON.stringify({ approved_drug_count: { instant: true, start: YEAR_AGO, end: NOW } }) };
  if (property === "business_health_score")
    return {
      content: JSON.stringify({
        business_health_score: {
          weights: { growth: 0.4, breadth: 0.3, stability: 0.3 },
          focus_categories: ["片剂"],
          as_of: NOW,
        },
      }),
    };
  return { content: '{"_error":"unscripted"}' };
}

describe("the resolver's OpenAPI examples (the platform's get_logic_properties_values)", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let rpc: Client<typeof LogicPropertyResolverService>;
  let mcp: McpClient;
  beforeAll(async () => {
    llm = await startScriptedLlm(answer);
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
    rpc = clientWith(LogicPropertyResolverService, server.baseUrl);
    mcp = await connectHttp(server.baseUrl, { "x-account-id": "u-anchor" });
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await llm?.close();
  });

  it("finds the request examples in both files (the suite is not vacuous)", () => {
    expect(requestExamples.length).toBeGreaterThanOrEqual(2);
  });

  it.each(requestExamples)("%s: the REST route answers the 200 example's shape", async (_name, example) => {
    const res = await fetch(`${server.baseUrl}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...example, now_ms: NOW }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { datas: Body[] };
    const shown = responseExamples["成功示例"]!.value as { datas: Body[] };
    // The rows the example shows: one per identity, its primary key and each property with the example's fields.
    expect(body.datas).toHaveLength(shown.datas.length);
    expect(body.datas[0]).toMatchObject({ company_id: "company_000001" });
    const metric = body.datas[0]!["approved_drug_count"] as Body;
    expect(Object.keys(metric)).toEqual(
      expect.arrayContaining(Object.keys(shown.datas[0]!["approved_drug_count"] as Body)),
    );
    const score = body.datas[0]!["business_health_score"] as Body;
    expect(Object.keys(score)).toEqual(
      expect.arrayContaining(Object.keys(shown.datas[0]!["business_health_score"] as Body)),
    );
  });

  it.each(requestExamples)("%s: the RPC and the MCP tool give the same rows", async (_name, example) => {
    const rest = (await (
      await fetch(`${server.baseUrl}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...example, now_ms: NOW }),
      })
    ).json()) as { datas: Body[] };
    const identities = (example["_instance_identities"] ?? example["unique_identities"]) as Body[];
    const viaRpc = await rpc.resolveLogicProperties({
      knId: example["kn_id"] as string,
      otId: example["ot_id"] as string,
      query: example["query"] as string,
      uniqueIdentities: identities as never,
      properties: example["properties"] as string[],
      additionalContext: (example["additional_context"] as string | undefined) ?? "",
      nowMs: BigInt(NOW),
    });
    expect(viaRpc.datas).toEqual(rest.datas);
    // The MCP tool takes the example's arguments as they are (either spelling of the identities).
    const tool = await callOk(mcp, "get_logic_properties_values", { ...example, now_ms: NOW, output_format: "json" });
    expect((tool["rows"] as Body[])[0]).toMatchObject({ company_id: "company_000001" });
    expect((tool["metrics"] as Body[]).map((m) => m["property"])).toEqual(["approved_drug_count"]);
  });

  it("answers the missing-parameter example's shape at the spec's path, and its list in the platform's envelope at the platform's", async () => {
    const [, example] = requestExamples[0]!;
    const shown = responseExamples["缺参示例"]!.value;
    const ask = (path: string) => {
      llm.queue({ content: JSON.stringify({ _error: "缺少时间范围：请说明统计的起止时间" }) });
      return fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...example, properties: ["approved_drug_count"], now_ms: NOW }),
      });
    };
    const spec = await ask("/api/kn/logic-property-resolver");
    expect(spec.status).toBe(400);
    const body = (await spec.json()) as Body;
    expect(Object.keys(body)).toEqual(expect.arrayContaining(Object.keys(shown)));
    expect(body["error_code"]).toBe("MISSING_INPUT_PARAMS");
    const missing = body["missing"] as { property: string; params: Body[] }[];
    expect(missing[0]!.property).toBe("approved_drug_count");
    expect(Object.keys(missing[0]!.params[0]!)).toEqual(expect.arrayContaining(["name", "type", "hint"]));
    // The platform's code answers 400 in its envelope (ANCHOR-TOOLS §15.7): the same list, structured, in details.
    const platform = await ask(PATH);
    expect(platform.status).toBe(400);
    const envelope = (await platform.json()) as { code: string; details: { missing: unknown } };
    expect(envelope.code).toBe("MISSING_INPUT_PARAMS");
    expect(envelope.details.missing).toEqual(missing);
    // The RPC says the same as FAILED_PRECONDITION with the MissingParams detail.
    llm.queue({ content: JSON.stringify({ _error: "缺少时间范围：请说明统计的起止时间" }) });
    const err = await failure(
      rpc.resolveLogicProperties({
        knId: "kn_medical",
        otId: "company",
        query: example["query"] as string,
        uniqueIdentities: [{ company_id: "company_000001" }],
        properties: ["approved_drug_count"],
        nowMs: BigInt(NOW),
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(MissingParamsSchema)[0]?.missing[0]?.property).toBe("approved_drug_count");
  });
});
