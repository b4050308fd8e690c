import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogicPropertyResolverService } from "../../gen/contextloader/resolver/v1/resolver_pb";
import { clientWith } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { type LogLine, startServer, type TestServer } from "../helpers/server";

/**
 * The fields of a property's log lines: the call's (trace_id, rpc, account),
 * then the property's (span_id, property), then the line's own, in that order,
 * whether the property was settled from the facts alone or asked of the LLM.
 */

const NOW = Date.parse("2026-11-22T10:30:00+08:00");
const JAN = Date.parse("2025-01-01T00:00:00+08:00");
const RPC = "contextloader.resolver.v1.LogicPropertyResolverService/ResolveLogicProperties";

/** The line's keys after pino's own (level, time, pid, hostname). */
const fieldsOf = (line: LogLine) => Object.keys(line).filter((k) => !["level", "time", "pid", "hostname"].includes(k));

/** The fields of "dynamic_params generated", in order. */
const GENERATED_FIELDS = ["trace_id", "rpc", "account", "span_id", "property", "ms", "repairs", "problems", "msg"];

describe("the resolver's log lines per property", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted" });
  });
  afterAll(async () => {
    await server?.close();
    await llm?.close();
  });

  const call = async (traceId: string, account: string, additionalContext: string) => {
    const client = clientWith(LogicPropertyResolverService, server.baseUrl, {
      "x-account-id": account,
      traceparent: `00-${traceId}-b7ad6b7169203331-01`,
    });
    await client.resolveLogicProperties({
      knId: "kn_medical",
      otId: "company",
      query: "这些企业的药品上市数量",
      uniqueIdentities: [{ company_id: "company_000001" }],
      properties: ["approved_drug_count"],
      additionalContext,
      nowMs: BigInt(NOW),
    });
    return server.logs.filter((l) => l["trace_id"] === traceId);
  };

  it("puts the call's and the property's fields on dynamic_params generated, without the LLM", async () => {
    const traceId = randomUUID().replaceAll("-", "");
    const lines = await call(traceId, "u-log-facts", `start=${JAN}，end=${NOW}，instant=true`);
    const generated = lines.filter((l) => l.msg === "dynamic_params generated");
    expect(generated).toHaveLength(1);
    expect(fieldsOf(generated[0]!)).toEqual(GENERATED_FIELDS);
    expect(generated[0]).toMatchObject({
      trace_id: traceId,
      rpc: RPC,
      account: "u-log-facts",
      span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      property: "approved_drug_count",
      repairs: 0,
      problems: [],
    });
  });

  it("puts them on the LLM client's lines too, under the same span id", async () => {
    llm.setFallback(() => ({
      content: JSON.stringify({ approved_drug_count: { instant: true, start: JAN, end: NOW } }),
    }));
    const traceId = randomUUID().replaceAll("-", "");
    const lines = await call(traceId, "u-log-llm", "");
    const generated = lines.find((l) => l.msg === "dynamic_params generated")!;
    const asked = lines.find((l) => l.msg === "llm call")!;
    expect(fieldsOf(asked).slice(0, 5)).toEqual(["trace_id", "rpc", "account", "span_id", "property"]);
    expect(asked).toMatchObject({
      trace_id: traceId,
      rpc: RPC,
      account: "u-log-llm",
      span_id: generated["span_id"],
      property: "approved_drug_count",
      llm: "scripted",
    });
    expect(fieldsOf(generated)).toEqual(GENERATED_FIELDS);
  });
});
