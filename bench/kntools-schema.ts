import { pino } from "pino";
import { DEFAULT_SEED, generateBundle } from "../data/generator/build";
import type { CallContext } from "../src/core/call-context";
import type { KnowledgeNetworkBackend } from "../src/kn/backend";
import { parseBundle } from "../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { getActionInfo } from "../src/knowledge/kn-tools/action-info/get-action-info";
import { getActionInfoInput } from "../src/knowledge/kn-tools/action-info/input";
import { findSkills } from "../src/knowledge/kn-tools/find-skills/find-skills";
import { findSkillsInput } from "../src/knowledge/kn-tools/find-skills/input";
import { searchSchemaInput } from "../src/knowledge/kn-tools/search-schema/input";
import { searchSchema } from "../src/knowledge/kn-tools/search-schema/search-schema";
import { DescriptionCache } from "../src/knowledge/relevance/descriptions";
import { localEmbedder } from "../src/upstream/embeddings";
import { formatMicros, line, percentile, timeEach } from "./stats";

const KN = "kn_medical";
const SCALE = 100_000;
const WARMUP = 3;
const RUNS = 200;

interface Case {
  tool: string;
  label: string;
  run(backend: KnowledgeNetworkBackend, ctx: CallContext): Promise<unknown>;
  /** Throws when the answer is not the one expected (checked once, after the clock stops). */
  check(answer: unknown): void;
}

/**
 * search_schema, get_action_info and find_skills: each tool's own time (the
 * domain function over the embedded engine, no transport), p50 and p99, on
 * the sample network and on a generated one of 100k instances (as
 * bench/engine.ts builds it). The schema is the same at both sizes; what
 * grows is the instances an action query or a skill binding check walks.
 */
export async function benchKnToolsSchema(): Promise<void> {
  const ctx: CallContext = {
    caller: { accountId: "bench", accountType: "user" },
    traceId: "bench",
    language: "en" as const,
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    remainingMs: () => undefined,
  };
  const sample = EmbeddedBackend.fromFiles(["data/kn_medical.bundle.json"], { timeZone: "Asia/Shanghai" });
  await runCases("sample", sample, ctx);
  const started = performance.now();
  const bundle = parseBundle(
    JSON.parse(JSON.stringify(generateBundle({ seed: DEFAULT_SEED, scale: SCALE }))),
    `generated scale ${SCALE}`,
  );
  const large = new EmbeddedBackend([bundle], { timeZone: "Asia/Shanghai" });
  const total = Object.values(bundle.objects).reduce((n, rows) => n + rows.length, 0);
  line(
    `kntools: bundle of ${total} instances`,
    `generated and loaded in ${((performance.now() - started) / 1000).toFixed(2)} s`,
  );
  await runCases("100k", large, ctx);
}

async function runCases(size: string, backend: KnowledgeNetworkBackend, ctx: CallContext): Promise<void> {
  for (const c of cases()) {
    for (let i = 0; i < WARMUP; i++) await c.run(backend, ctx);
    const times = await timeEach(RUNS, () => c.run(backend, ctx));
    c.check(await c.run(backend, ctx));
    line(
      `${c.tool} ${size}: ${c.label}`,
      `p50 ${formatMicros(percentile(times, 50))} p99 ${formatMicros(percentile(times, 99))}`,
    );
  }
}

function cases(): Case[] {
  const descriptions = new DescriptionCache(localEmbedder);
  const deps = (backend: KnowledgeNetworkBackend) => ({
    backend,
    embedder: localEmbedder,
    reranker: undefined,
    descriptions,
  });
  const schema = (args: Record<string, unknown>) => (b: KnowledgeNetworkBackend, ctx: CallContext) =>
    searchSchema(deps(b), ctx, searchSchemaInput.parse({ kn_id: KN, ...args }));
  const actions = (args: Record<string, unknown>) => (b: KnowledgeNetworkBackend, ctx: CallContext) =>
    getActionInfo({ backend: b }, ctx, getActionInfoInput.parse({ kn_id: KN, ...args }));
  const skills = (args: Record<string, unknown>) => (b: KnowledgeNetworkBackend, ctx: CallContext) =>
    findSkills({ backend: b }, ctx, findSkillsInput.parse({ kn_id: KN, ...args }));
  const expect = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`kntools bench: ${what}`);
  };
  return [
    {
      tool: "search_schema",
      label: "a question",
      run: schema({ query: "上气道梗阻有哪些症状" }),
      check: (a) => expect(firstRelation(a) === "has_symptom", "has_symptom is not the first relation type"),
    },
    {
      tool: "search_schema",
      label: "concept group diagnosis",
      run: schema({ query: "上气道梗阻有哪些症状", search_scope: { concept_groups: ["diagnosis"] } }),
      check: (a) => expect(firstRelation(a) === "has_symptom", "has_symptom is not the first relation type"),
    },
    {
      tool: "search_schema",
      label: "brief, network order",
      run: schema({ query: "药企获批上市的药品", schema_brief: true, enable_rerank: false }),
      check: (a) => expect(firstRelation(a) === "belongs_to", "not in network order"),
    },
    {
      tool: "get_action_info",
      label: "tool box, 2 instances",
      run: actions({
        at_id: "generate_treatment_plan",
        instance_identities: [{ disease_id: "disease_000001" }, { disease_id: "disease_004790" }],
      }),
      check: (a) => expect(toolCount(a) === 2, "not two tools"),
    },
    {
      tool: "get_action_info",
      label: "MCP tool, 1 instance",
      run: actions({
        at_id: "book_department_appointment",
        instance_identities: [{ department_id: "department_000002" }],
      }),
      check: (a) => expect(toolCount(a) === 1, "not one tool"),
    },
    {
      tool: "get_action_info",
      label: "no instance (first 20)",
      run: actions({ at_id: "generate_treatment_plan" }),
      check: (a) => expect(toolCount(a) === 20, "not twenty tools"),
    },
    {
      tool: "find_skills",
      label: "object type disease",
      run: skills({ object_type_id: "disease" }),
      check: (a) => expect(skillCount(a) === 10, "not ten skills"),
    },
    {
      tool: "find_skills",
      label: "one instance",
      run: skills({ object_type_id: "disease", instance_identities: [{ disease_id: "disease_004790" }] }),
      check: (a) => expect(skillCount(a) === 3, "not three skills"),
    },
    {
      tool: "find_skills",
      label: "skill_query on disease",
      run: skills({ object_type_id: "disease", skill_query: "急救", top_k: 3 }),
      check: (a) => expect(skillCount(a) >= 1, "no skill"),
    },
    {
      tool: "find_skills",
      label: "every skill, skill_query",
      run: skills({ object_type_id: "skills", skill_query: "药物相互作用" }),
      check: (a) => expect(skillCount(a) >= 1, "no skill"),
    },
  ];
}

const firstRelation = (a: unknown) => (a as { relation_types: { id: string }[] }).relation_types[0]?.id;
const toolCount = (a: unknown) => (a as { dynamic_tools: unknown[] }).dynamic_tools.length;
const skillCount = (a: unknown) => (a as { entries: unknown[] }).entries.length;
