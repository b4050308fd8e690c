/**
 * `npm run examples`: runs every examples/NN-*.sh, and each of the README's "First calls" blocks,
 * against BASE_URL (default http://127.0.0.1:8080, a started service) and checks that each
 * printed the JSON documents expect.ts describes. Each runs on its own with names unique to this
 * run, so the examples can run in any order and any number of times. Exits 1 naming what failed.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseJsonStream } from "../src/core/json-stream";
import { expectations, lastDocument } from "./expect";

const here = dirname(fileURLToPath(import.meta.url));
const baseUrl = process.env["BASE_URL"] ?? "http://127.0.0.1:8080";
const SCRIPT_TIMEOUT_MS = 120_000;
const README_FIRST_CALLS = "README.md (First calls)";

/**
 * The README's shell blocks under "## First calls", each pointed at BASE_URL and run on its own in a
 * fresh shell, as a reader pastes one: a block that needs another's variables fails here.
 */
function readmeFirstCalls(): { name: string; args: string[] }[] {
  const readme = readFileSync(join(here, "..", "README.md"), "utf8");
  const section = /^## First calls$([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  if (blocks.length === 0) throw new Error('README.md has no shell block under "## First calls"');
  return blocks.map((block, i) => ({
    name: i === 0 ? README_FIRST_CALLS : `${README_FIRST_CALLS.slice(0, -1)}, block ${i + 1})`,
    args: ["-c", `set -euo pipefail\n${block.replaceAll("http://127.0.0.1:8080", baseUrl)}`],
  }));
}

const scripts = readdirSync(here)
  .filter((f) => /^\d\d-.*\.sh$/.test(f))
  .sort();
const runs: { name: string; args: string[] }[] = [
  ...scripts.map((script) => ({ name: script, args: [join(here, script)] })),
  ...readmeFirstCalls(),
];
const failures: string[] = [];
for (const { name, args } of runs) {
  const started = performance.now();
  const run = spawnSync("bash", args, {
    cwd: join(here, ".."),
    env: { ...process.env, BASE_URL: baseUrl, RUN: `${Date.now().toString(36)}-${process.pid}` },
    encoding: "utf8",
    timeout: SCRIPT_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  const problems: string[] = [];
  if (run.status !== 0) problems.push(`exit ${run.status ?? run.signal}: ${run.stderr.trim().slice(-500)}`);
  const { values: docs, problem } = parseJsonStream(run.stdout);
  if (problem) problems.push(problem);
  const expected = expectations[name];
  if (expected === undefined) problems.push("no expectations in examples/expect.ts");
  else {
    if (docs.length < expected.length)
      problems.push(`printed ${docs.length} JSON documents, expected ${expected.length}`);
    expected.forEach((checks, i) => {
      if (i < docs.length) for (const p of failedChecks(docs[i], checks)) problems.push(`document ${i + 1}: ${p}`);
    });
    const last = lastDocument[name];
    if (last && docs.length > 0) for (const p of failedChecks(docs.at(-1), last)) problems.push(`last document: ${p}`);
  }
  const ms = Math.round(performance.now() - started);
  if (problems.length === 0) console.log(`ok   ${name} (${docs.length} answers, ${ms} ms)`);
  else {
    console.log(`FAIL ${name} (${ms} ms)\n  ${problems.join("\n  ")}`);
    failures.push(name);
  }
}
const unknown = Object.keys(expectations).filter((s) => !runs.some((r) => r.name === s));
if (unknown.length > 0) failures.push(...unknown.map((s) => `${s} (expected but missing)`));
console.log(
  failures.length === 0 ? `${runs.length} examples passed against ${baseUrl}` : `failed: ${failures.join(", ")}`,
);
process.exit(failures.length === 0 ? 0 : 1);

function failedChecks(doc: unknown, checks: string[]): string[] {
  const out: string[] = [];
  for (const check of checks) {
    const eq = check.indexOf("=");
    const path = eq < 0 ? check : check.slice(0, eq);
    const value = at(doc, path);
    if (value === undefined) out.push(`${path} is missing`);
    else if (eq >= 0) {
      const want = check.slice(eq + 1);
      const got = typeof value === "string" ? value : JSON.stringify(value);
      if (got !== want) out.push(`${path} is ${JSON.stringify(value)}, expected ${want}`);
    }
  }
  return out;
}

function at(doc: unknown, path: string): unknown {
  let value = doc;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
