import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { labelledSetOf, STANDIN_SETS } from "../../bench/standin-sets";
import { cosineOf, StandinModel } from "../helpers/standin-embeddings";

/**
 * `npm run standin` and `npm run eval` as an operator runs them: separate
 * processes, the configuration in the environment, the report on disk.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "eval-test-"));
  dirs.push(dir);
  return dir;
}

/** A TypeScript entry point of bench/ in a process of its own (one process: its pid is the one to signal). */
function start(script: string, args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return child;
}

/** Everything the process wrote, and how it ended. */
function ended(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** The first line a process writes to stdout. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("close", (code) => reject(new Error(`exited ${code} before a line`)));
  });
}

async function embed(baseUrl: string, input: string[]): Promise<number[][]> {
  const res = await fetch(`${baseUrl}/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "standin", input }),
  });
  const body = (await res.json()) as { data: { embedding: number[] }[] };
  return body.data.map((d) => d.embedding);
}

const DEV = JSON.parse(readFileSync(join(ROOT, "bench", "memrecall-dev-22.json"), "utf8")) as {
  memories: { memory_key: string; summary: string; content: string }[];
  queries: { query: string; relevant: string[] }[];
};

describe("npm run standin", () => {
  it("prints its base URL, gives a query its memory's meaning, and says on SIGTERM what it could not label", async () => {
    const child = start("bench/standin-server.ts", [
      "--set",
      "bench/memrecall-dev-22.json",
      "--noise",
      "0",
      "--base",
      "0.15",
    ]);
    const done = ended(child);
    const baseUrl = await firstLine(child);
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const q = DEV.queries.find((x) => x.relevant.length === 1)!;
    const m = DEV.memories.find((x) => x.memory_key === q.relevant[0])!;
    const [query, stored, other] = await embed(baseUrl, [
      q.query,
      `${m.summary}\n${m.content}`,
      "nothing the set holds",
    ]);
    // No noise: a query with one relevant memory is that memory's meaning; an unlabelled text sits near the base.
    expect(cosineOf(query!, stored!)).toBeCloseTo(1, 4);
    expect(Math.abs(cosineOf(query!, other!) - 0.15)).toBeLessThan(0.25);
    child.kill("SIGTERM");
    const { code, stderr } = await done;
    expect(code).toBe(0);
    expect(stderr).toContain("3 texts embedded, 1 of them not in its sets");
  });

  it("refuses a file that is not a labelled set in one line", async () => {
    const { code, stderr } = await ended(start("bench/standin-server.ts", ["--set", "package.json"]));
    expect(code).toBe(2);
    expect(stderr).toBe("standin: --set package.json: not a labelled set of memories\n");
  });
});

describe("npm run eval", () => {
  it("runs against an endpoint from the environment and writes both reports, naming the model and never the key", async () => {
    const standin = start("bench/standin-server.ts", ["--noise", "2", "--base", "0.15"]);
    const baseUrl = await firstLine(standin);
    const out = tempDir();
    const { code, stdout } = await ended(
      start("bench/eval.ts", ["remember", "--out", out], {
        EMBEDDINGS_BASE_URL: baseUrl,
        EMBEDDINGS_MODEL: "standin",
        EMBEDDINGS_API_KEY: "sk-eval-test-key-4242",
      }),
    );
    standin.kill("SIGTERM");
    expect(code).toBe(0);
    expect(stdout).toContain("development set (40 conversations, rules mode)");
    const md = readFileSync(join(out, "report.md"), "utf8");
    const json = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    const port = new URL(baseUrl).port;
    expect(json.configuration.embeddings).toContain(`model standin at http://127.0.0.1:${port}`);
    expect(md).toContain(`model standin at http://127.0.0.1:${port}`);
    // The scale the start-up probe learned from the stand-in (which labels the probe's pairs), not the fixed range.
    expect(json.configuration["semantic range"]).toMatch(
      /^learned by the start-up probe: cosine 0\.\d{3} → relevance 0\.01/,
    );
    expect(json.commit).toMatch(/^[0-9a-f]{7,}/);
    expect(json.benches.remember.status).toBe("ok");
    expect(json.benches.remember.figures["held-out set"]["rules mode"].recall).toBeGreaterThan(0);
    expect(md + JSON.stringify(json)).not.toContain("sk-eval-test-key-4242");
  }, 120_000);

  it("says a bad setting in one line and exits 2", async () => {
    const { code, stdout, stderr } = await ended(
      start("bench/eval.ts", ["--out", tempDir()], { EMBEDDINGS_BASE_URL: "embeddings.internal" }),
    );
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      'eval: invalid settings: EMBEDDINGS_BASE_URL: must be an http(s) URL (got "embeddings.internal")\n',
    );
  });

  it("names the bench an endpoint failed in and why, runs the others, and exits 1", async () => {
    // Vectors as the stand-in's, but the 41st request answered 503: the first set of memory search
    // is being stored then (76 memories), and RememberConversation comes after it.
    const model = new StandinModel({ set: labelledSetOf(STANDIN_SETS), noise: 2, base: 0.15 });
    let requests = 0;
    const endpoint = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (++requests === 41) {
        res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
        return;
      }
      const { input } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string[] };
      const data = input.map((t, index) => ({ index, embedding: Array.from(model.embed(t)) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data }));
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    const out = tempDir();
    try {
      const { code, stderr } = await ended(
        start("bench/eval.ts", ["memrecall", "remember", "--out", out], {
          EMBEDDINGS_BASE_URL: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`,
          EMBEDDINGS_MODEL: "standin",
        }),
      );
      expect(code).toBe(1);
      expect(stderr).toMatch(/^eval: memrecall failed \(EMBEDDINGS_UNAVAILABLE: .*503.*\)\n$/);
      const json = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
      expect(json.failed).toEqual(["memrecall"]);
      expect(json.benches.remember.status).toBe("ok");
      expect(readFileSync(join(out, "report.md"), "utf8")).toContain("| memrecall | FAILED: EMBEDDINGS_UNAVAILABLE");
      expect(existsSync(join(out, "report.md"))).toBe(true);
    } finally {
      endpoint.closeAllConnections();
      await new Promise((resolve) => endpoint.close(resolve));
    }
  }, 120_000);
});
