import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decode as fromToon } from "@toon-format/toon";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { pino } from "pino";
import { parse as fromYaml } from "yaml";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { render } from "../src/core/output-format";
import { parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { manyMetricsBundle } from "../test/fixtures/many-metrics-bundle";
import { startScriptedLlm } from "../test/helpers/scripted-llm";
import { point } from "./record";
import { line } from "./stats";

const KN = [{ knowledge_network_id: "kn_medical" }];
const METRICS = ["approved_drug_count", "trial_count", "revenue"];
/** Two hops from a symptom: the diseases that show it (the relation walked backward), then their drugs. */
const SUBGRAPH_PATHS = [
  {
    object_types: [
      { id: "symptom", condition: { field: "symptom_name", operation: "==", value: "吞咽困难" } },
      { id: "disease" },
      { id: "drugs", limit: 3 },
    ],
    relation_types: [{ relation_type_id: "has_symptom" }, { relation_type_id: "cures" }],
    limit: 4,
  },
];
/** The issue's targets: TOON against pretty and against minified JSON, over all tools' answers together. */
const TARGET_VS_PRETTY = 0.4;
const TARGET_VS_MINIFIED = 0.25;

interface Call {
  tool: string;
  args: Record<string, unknown>;
  /** The RPC that answers the same call, and its request in proto JSON: its structured answer is the other baseline. */
  rpc?: { path: string; body: Record<string, unknown> };
}

/**
 * Tokens (o200k, gpt-tokenizer) of every MCP tool's answer on the sample
 * network, written as pretty JSON, minified JSON, YAML and TOON: one answer
 * asked from the real service over MCP (output_format json), written the
 * other ways by the service's own renderer, and each decoded back and
 * compared, so no fact is lost. For the
 * tools with an RPC, the RPC's structured answer (proto JSON, as an RPC or
 * REST client would hand it to an LLM) is counted too. The totals are checked
 * against the targets: TOON at least 40 % under pretty JSON and 25 % under
 * minified JSON.
 */
export async function benchTokens(): Promise<void> {
  const now = Date.now();
  const llm = await startScriptedLlm((req) => {
    const property = /当前逻辑属性：(\w+)/.exec(req.messages[0]!.content)?.[1] ?? "";
    return {
      content: JSON.stringify({
        [property]: { instant: false, start: now - 90 * 86_400_000, end: now, step: "month" },
      }),
    };
  });
  const medical = parseBundle(JSON.parse(readFileSync("data/kn_medical.bundle.json", "utf8")), "the sample network");
  const metrics = parseBundle(manyMetricsBundle("kn_pharma", METRICS, now - 30 * 86_400_000), "the metrics network");
  const app = createApp(
    loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      SQLITE_PATH: ":memory:",
      LLM_BASE_URL: llm.baseUrl,
      LOG_LEVEL: "silent",
    }),
    pino({ level: "silent" }),
    { backend: new EmbeddedBackend([medical, metrics], { timeZone: "Asia/Shanghai" }) },
  );
  const port = await app.listen();
  const base = `http://127.0.0.1:${port}`;
  const headers = { "x-account-id": "bench-tokens", "x-account-type": "user" };
  const client = new Client({ name: "bench-tokens", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  const call = async (tool: string, args: Record<string, unknown>, format: string): Promise<string> => {
    const r = await client.callTool({ name: tool, arguments: { ...args, output_format: format } });
    const text = (r.content as { text: string }[])[0]!.text;
    if (r.isError) throw new Error(`${tool} failed: ${text}`);
    return text;
  };
  try {
    // Two sessions with the schema recalled: keyword context over MCP and over the RPC each start fresh (nothing already returned).
    const newSession = async () =>
      (
        fromToon(await call("retrieve_schema", { query: "上气道梗阻有哪些症状", kn_ids: KN }, "toon")) as {
          session_id: string;
        }
      ).session_id;
    const session = { session_id: await newSession() };
    const rpcSession = await newSession();
    await call(
      "store_memory",
      {
        memory_key: "db-config",
        summary: "测试库的数据库连接配置",
        content: "测试环境数据库：PostgreSQL 16，主机 10.0.3.21，端口 5432，库名 orders_test，只读账号 reporter。",
        memory_type: "user_preference",
      },
      "toon",
    );
    const calls: Call[] = [
      {
        tool: "retrieve_schema",
        args: { query: "上气道梗阻有哪些症状，应该做哪些检查", kn_ids: KN },
        rpc: {
          path: "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema",
          body: { query: "上气道梗阻有哪些症状，应该做哪些检查", kn_ids: KN, compact_format: false },
        },
      },
      {
        tool: "retrieve_keyword_context",
        args: { query: "上气道梗阻", kn_ids: KN, session_id: session.session_id, object_type_id: "disease" },
        rpc: {
          path: "contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext",
          body: {
            query: "上气道梗阻",
            kn_ids: KN,
            session_id: rpcSession,
            object_type_id: "disease",
            compact_format: false,
          },
        },
      },
      {
        tool: "kn_search",
        args: { query: "上气道梗阻 呼吸困难", kn_ids: KN },
        rpc: {
          path: "contextloader.knowledge.v1.KnowledgeRetrievalService/KnSearch",
          body: { query: "上气道梗阻 呼吸困难", kn_ids: KN },
        },
      },
      {
        tool: "knowledge_rerank",
        args: {
          query_understanding: { origin_query: "上气道梗阻有哪些症状", processed_query: "上气道梗阻 症状" },
          action: "vector",
          concepts: [
            {
              concept_type: "object_type",
              concept_id: "disease",
              concept_name: "疾病",
              concept_detail: { comment: "疾病" },
            },
            {
              concept_type: "object_type",
              concept_id: "symptom",
              concept_name: "症状",
              concept_detail: { comment: "症状" },
            },
            {
              concept_type: "object_type",
              concept_id: "drugs",
              concept_name: "药物",
              concept_detail: { comment: "药物" },
            },
            { concept_type: "relation_type", concept_id: "has_symptom", concept_name: "疾病症状" },
            { concept_type: "relation_type", concept_id: "checks", concept_name: "检查项" },
          ],
        },
      },
      {
        tool: "search_schema",
        args: { query: "上气道梗阻有哪些症状", kn_id: "kn_medical" },
        rpc: {
          path: "contextloader.kntools.v1.KnowledgeToolsService/SearchSchema",
          body: { query: "上气道梗阻有哪些症状", kn_id: "kn_medical" },
        },
      },
      {
        tool: "get_action_info",
        args: {
          kn_id: "kn_medical",
          at_id: "generate_treatment_plan",
          _instance_identities: [{ disease_id: "disease_004790" }, { disease_id: "disease_000001" }],
        },
        rpc: {
          path: "contextloader.kntools.v1.KnowledgeToolsService/GetActionInfo",
          body: {
            kn_id: "kn_medical",
            at_id: "generate_treatment_plan",
            _instance_identities: [{ disease_id: "disease_004790" }, { disease_id: "disease_000001" }],
          },
        },
      },
      {
        tool: "find_skills",
        args: { kn_id: "kn_medical", object_type_id: "disease" },
        rpc: {
          path: "contextloader.kntools.v1.KnowledgeToolsService/FindSkills",
          body: { kn_id: "kn_medical", object_type_id: "disease" },
        },
      },
      {
        tool: "query_object_instance",
        args: {
          kn_id: "kn_medical",
          ot_id: "disease",
          condition: { field: "disease_name", operation: "like", value: "炎" },
          limit: 20,
        },
        rpc: {
          path: "contextloader.kntools.v1.KnowledgeToolsService/QueryObjectInstances",
          body: {
            kn_id: "kn_medical",
            ot_id: "disease",
            condition: { field: "disease_name", operation: "like", value: "炎" },
            limit: 20,
          },
        },
      },
      {
        tool: "query_instance_subgraph",
        args: { kn_id: "kn_medical", relation_type_paths: SUBGRAPH_PATHS },
        rpc: {
          path: "contextloader.kntools.v1.KnowledgeToolsService/QueryInstanceSubgraph",
          body: { kn_id: "kn_medical", relation_type_paths: SUBGRAPH_PATHS },
        },
      },
      {
        tool: "get_logic_properties_values",
        args: {
          kn_id: "kn_pharma",
          ot_id: "company",
          query: "这家企业近三个月每月的批准药品数、试验数和收入",
          unique_identities: [{ company_id: "c1" }],
          properties: METRICS,
        },
        rpc: {
          path: "contextloader.resolver.v1.LogicPropertyResolverService/ResolveLogicProperties",
          body: {
            kn_id: "kn_pharma",
            ot_id: "company",
            query: "这家企业近三个月每月的批准药品数、试验数和收入",
            unique_identities: [{ company_id: "c1" }],
            properties: METRICS,
          },
        },
      },
      { tool: "search_memories", args: { query: "数据库配置", min_relevance_score: 0.1 } },
      { tool: "get_memory_detail", args: { memory_key: "db-config" } },
      { tool: "extract_search_keywords", args: { query: "上周我让你记住的那个测试库的数据库端口是多少" } },
      {
        tool: "expand_context_window",
        args: { reason: "结果太少，需要更早的对话", current_size: 5, requested_size: 10 },
      },
      {
        tool: "handoff",
        args: {
          reason: "已找到相关记忆",
          search_summary: "找到测试库的数据库配置",
          confidence: 0.9,
          relevant_memory_keys: ["db-config"],
        },
      },
    ];
    const totals = { pretty: 0, minified: 0, yaml: 0, toon: 0 };
    process.stdout.write(
      `${"tool".padEnd(44)} ${"pretty".padStart(7)} ${"min".padStart(7)} ${"yaml".padStart(7)} ${"toon".padStart(7)}  toon vs pretty / min / yaml | rpc json pretty / min\n`,
    );
    for (const c of calls) {
      // One call (a second would be another round of the session): its answer written the three ways, as the service writes them.
      const json = await call(c.tool, c.args, "json");
      const data = JSON.parse(json) as unknown;
      const yaml = render(data, "yaml");
      const toon = render(data, "toon");
      const same = (other: unknown) => JSON.stringify(comparable(other)) === JSON.stringify(comparable(data));
      if (!same(fromYaml(yaml)) || !same(fromToon(toon)))
        throw new Error(`${c.tool}: the YAML or TOON answer does not decode to the JSON one`);
      const n = {
        pretty: countTokens(JSON.stringify(data, null, 2)),
        minified: countTokens(json),
        yaml: countTokens(yaml),
        toon: countTokens(toon),
      };
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += n[k];
      let rpc = "";
      if (c.rpc) {
        const res = await fetch(`${base}/${c.rpc.path}`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify(c.rpc.body),
        });
        const body = (await res.json()) as unknown;
        rpc = ` | ${countTokens(JSON.stringify(body, null, 2))} / ${countTokens(JSON.stringify(body))}`;
      }
      for (const format of ["pretty", "minified", "yaml", "toon"] as const) {
        point(
          "tokens-by-format",
          format === "pretty" || format === "minified" ? `${format} JSON` : format.toUpperCase(),
          c.tool,
          n[format],
        );
      }
      process.stdout.write(
        `${c.tool.padEnd(44)} ${[n.pretty, n.minified, n.yaml, n.toon].map((x) => String(x).padStart(7)).join(" ")}  ${saving(n.toon, n.pretty)} / ${saving(n.toon, n.minified)} / ${saving(n.toon, n.yaml)}${rpc}\n`,
      );
    }
    const vsPretty = 1 - totals.toon / totals.pretty;
    const vsMinified = 1 - totals.toon / totals.minified;
    line(
      "all tools: toon vs pretty JSON",
      `${pct(vsPretty)} fewer tokens (${totals.pretty} → ${totals.toon}; target ≥ ${pct(TARGET_VS_PRETTY)}) ${vsPretty >= TARGET_VS_PRETTY ? "MET" : "NOT MET"}`,
    );
    line(
      "all tools: toon vs minified JSON",
      `${pct(vsMinified)} fewer tokens (${totals.minified} → ${totals.toon}; target ≥ ${pct(TARGET_VS_MINIFIED)}) ${vsMinified >= TARGET_VS_MINIFIED ? "MET" : "NOT MET"}`,
    );
    line(
      "all tools: toon vs YAML",
      `${pct(1 - totals.toon / totals.yaml)} fewer tokens (${totals.yaml} → ${totals.toon})`,
    );
  } finally {
    await client.close();
    await app.shutdown();
    await llm.close();
  }
}

/** Numbers compared as JSON writes them (YAML and TOON read "1.0" and 1 alike). */
function comparable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

function saving(toon: number, other: number): string {
  return pct(1 - toon / other).padStart(4);
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}
