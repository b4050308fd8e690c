/**
 * npm run eval: the quality benches — memory search, Recall, mentions,
 * RememberConversation — with the service's configuration read from the
 * environment exactly as `npm start` reads it (loadConfig(process.env):
 * EMBEDDINGS_*, LLM_*, MEMRECALL_*, …), on the development and held-out sets,
 * so that an operator can measure the model they plan to deploy. Only what a
 * bench must own differs from the service: each set is stored afresh in a
 * temporary SQLite file, sessions stay in this process, nothing is traced.
 *
 * `npm run eval -- [bench …] [--out DIR]`: the benches named (all by
 * default); the report is written as DIR/report.md and DIR/report.json
 * (DIR defaults to eval-report/, which git ignores). A bad configuration is
 * one line and exit code 2; a bench that fails (an endpoint down or
 * answering nonsense mid-run) is named with the reason, the others still
 * run, and the exit code is 1.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Config, loadConfig } from "../src/config";
import { ToolError } from "../src/errors/tool-error";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import type { SemanticScale } from "../src/memrecall/relevance";
import { type Figures, takeFigures } from "./figures";
import { memrecallQuality } from "./memrecall";
import { type BenchSetup, benchSetup } from "./memrecall-deps";
import { mentionsQuality } from "./mentions";
import { recallQuality } from "./recall";
import { captureStdout } from "./record";
import { rememberQuality } from "./remember";
import { line } from "./stats";

/** The quality benches, by the names `npm run bench` gives them. */
export const EVALS: Record<string, { title: string; run(setup: BenchSetup): Promise<unknown> }> = {
  memrecall: {
    title: "Memory search (SearchMemories): recall@5 and MRR per mode and kind",
    run: memrecallQuality,
  },
  recall: { title: "Recall: recall@3 per class of conversation", run: recallQuality },
  mentions: {
    title: "Mentions (RetrieveKeywordContext's matcher): recall@1 per class, false positives",
    run: mentionsQuality,
  },
  remember: {
    title: "RememberConversation: precision and recall of the memories kept, per class",
    run: rememberQuality,
  },
};

export const DEFAULT_OUT = "eval-report";

const root = fileURLToPath(new URL("..", import.meta.url));

interface BenchOutcome {
  title: string;
  status: "ok" | "failed";
  error?: string;
  figures: Figures;
  lines: string[];
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { out: { type: "string", default: DEFAULT_OUT } },
    allowPositionals: true,
  });
  const unknown = positionals.filter((name) => !(name in EVALS));
  if (unknown.length > 0)
    throw new Error(`no bench named ${unknown.join(", ")} (there are ${Object.keys(EVALS).join(", ")})`);
  const chosen = positionals.length > 0 ? positionals : Object.keys(EVALS);
  const config = loadConfig(process.env);
  const stamp = stampNow();
  process.stdout.write(`eval: ${stamp.date}, commit ${stamp.commit}, Node ${stamp.node}, ${stamp.machine}\n`);

  // The mention sets name kn_medical's instances: that bundle, whatever network the service is set to read.
  const engine = EmbeddedBackend.fromFiles([join(root, "data", "kn_medical.bundle.json")], {
    timeZone: "Asia/Shanghai",
  });
  // Started as the service starts: with an embeddings endpoint, the probe learns the model's scale here.
  const setup = await benchSetup(config, engine);
  const configuration = describe(config, process.env, setup.memrecall.semanticScale);
  for (const [what, value] of Object.entries(configuration)) line(`eval: ${what}`, value);
  const outcomes: Record<string, BenchOutcome> = {};
  try {
    for (const name of chosen) {
      const { title, run } = EVALS[name]!;
      process.stdout.write(`\n== ${name}: ${title}\n`);
      const printed = captureStdout();
      let error: string | undefined;
      try {
        await run(setup);
      } catch (err) {
        error = reasonOf(err);
        line(`eval: ${name} FAILED`, error);
      }
      const lines = printed()
        .split("\n")
        .filter((l) => l !== "");
      outcomes[name] = {
        title,
        status: error === undefined ? "ok" : "failed",
        ...(error === undefined ? {} : { error }),
        figures: takeFigures(),
        lines,
      };
    }
  } finally {
    await setup.close();
  }

  const failed = Object.entries(outcomes).filter(([, o]) => o.status === "failed");
  const secrets = [config.clients.embeddings?.apiKey, config.clients.llm?.apiKey].filter(
    (k): k is string => k !== undefined && k !== "",
  );
  const scrub = (s: string) => secrets.reduce((out, key) => out.replaceAll(key, "[API key]"), s);
  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const json = { ...stamp, configuration, benches: outcomes, failed: failed.map(([name]) => name) };
  writeFileSync(join(out, "report.json"), `${scrub(JSON.stringify(json, null, 2))}\n`);
  writeFileSync(join(out, "report.md"), scrub(markdown(stamp, configuration, outcomes)));
  process.stdout.write(`\neval: report written to ${join(out, "report.md")} and ${join(out, "report.json")}\n`);
  if (failed.length > 0) {
    process.stderr.write(`eval: ${failed.map(([name, o]) => `${name} failed (${o.error})`).join("; ")}\n`);
    return 1;
  }
  return 0;
}

/** The report's stamp: when, on which commit, with which Node and on what machine. */
function stampNow() {
  let commit = "unknown (not a git checkout)";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: "pipe",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: root,
      encoding: "utf8",
      stdio: "pipe",
    });
    if (dirty.trim() !== "") commit += " with uncommitted changes";
  } catch {
    // Without git (an unpacked release) the report says so rather than fail.
  }
  const cpu = cpus();
  return {
    date: `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
    commit,
    node: process.version,
    machine: `${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}`,
  };
}

/** Where an endpoint is, without its path, query or credentials. */
function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}

/** What the benches ran with, in words: endpoints by host and model, never an API key. */
function describe(
  config: Config,
  env: Record<string, string | undefined>,
  learned: SemanticScale | undefined,
): Record<string, string> {
  const { embeddings, llm } = config.clients;
  const given = Object.keys(env)
    .filter((k) => k.startsWith("MEMRECALL_"))
    .sort()
    .map((k) => `${k}=${env[k]}`);
  return {
    embeddings: embeddings
      ? `model ${embeddings.model} at ${hostOf(embeddings.baseUrl)} (API key ${embeddings.apiKey ? "set" : "not set"}; timeout ${embeddings.timeoutMs} ms)`
      : "none (EMBEDDINGS_BASE_URL not set): the local lexical embedder",
    llm: llm
      ? `model ${llm.model} at ${hostOf(llm.baseUrl)} (API key ${llm.apiKey ? "set" : "not set"}; timeout ${llm.timeoutMs} ms)`
      : "none (LLM_BASE_URL not set): no query expansion, Recall's deterministic strategy, RememberConversation's rules",
    "semantic range": learned
      ? `learned by the start-up probe: cosine ${learned.floor.toFixed(3)} → relevance 0.01, ${learned.ceiling.toFixed(3)} → 0.9, hybrid weight ${learned.weight.toFixed(3)}`
      : `the fixed range: cosine ${config.memrecall.semanticFloor} → relevance 0, ${config.memrecall.semanticCeiling} → 0.9 (${config.clients.embeddings ? "the probe failed or is off" : "the local embedder"})`,
    "MEMRECALL_* settings": given.length > 0 ? given.join(", ") : "none given (the defaults)",
    memories: "each set stored afresh in a temporary SQLite file (MEMORY_STORE is not used); sessions in process",
  };
}

function markdown(
  stamp: ReturnType<typeof stampNow>,
  configuration: Record<string, string>,
  outcomes: Record<string, BenchOutcome>,
): string {
  const rows = (pairs: [string, string][]) =>
    pairs.map(([a, b]) => `| ${a} | ${b.replaceAll("|", "\\|")} |`).join("\n");
  const parts = [
    "# Evaluation report (npm run eval)",
    `${stamp.date}, commit ${stamp.commit}, Node ${stamp.node}, ${stamp.machine}.`,
    "## Configuration",
    `| setting | value |\n|---|---|\n${rows(Object.entries(configuration))}`,
    "## Benches",
    `| bench | status |\n|---|---|\n${rows(
      Object.entries(outcomes).map(([name, o]) => [name, o.status === "ok" ? "ok" : `FAILED: ${o.error}`]),
    )}`,
    ...Object.entries(outcomes).flatMap(([name, o]) => [
      `## ${name}: ${o.title}`,
      `\`\`\`text\n${o.lines.join("\n")}\n\`\`\``,
    ]),
    "How to read these figures: docs/evaluation.md, “Choose your model”.",
  ];
  return `${parts.join("\n\n")}\n`;
}

/** Why a bench failed, in one line: the service's error with its reason and, for an operator, the upstream's answer. */
function reasonOf(err: unknown): string {
  if (err instanceof ToolError) {
    return `${err.reason}: ${err.message}${err.privateDetail ? ` (${err.privateDetail})` : ""}`.replaceAll("\n", " ");
  }
  return (err instanceof Error ? err.message : String(err)).replaceAll("\n", " ");
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // What fails outside a bench is the operator's to fix (a setting, the command line, a glossary file
    // that cannot be read, a report directory that cannot be written): one line, no stack.
    // A setting's problems come a line each (and a problem found twice, twice): one line, each once.
    const [first, ...problems] = (err instanceof Error ? err.message : String(err)).split(/\n\s*/);
    process.stderr.write(`eval: ${first}${problems.length > 0 ? ` ${[...new Set(problems)].join("; ")}` : ""}\n`);
    process.exit(2);
  },
);
