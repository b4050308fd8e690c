import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../helpers/server";
import { type Answer, TOOL_NAMES } from "./mcp-client";

/**
 * The official MCP Inspector (2.12.0, a devDependency) in CLI mode against
 * the real service on a loopback port: a third-party client that must be able
 * to list and call the tools. It runs from node_modules (`npx --no`: never a
 * download), with a private HOME so it neither reads nor writes the user's
 * inspector settings, and npm's update check off: no network at all.
 */

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const TIMEOUT_MS = 60_000;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let home: string;
const running = new Set<number>();

/** `npx --no -- @modelcontextprotocol/inspector --cli <args…>`, bounded in time; its exit code and output. */
function inspector(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("npx", ["--no", "--", "@modelcontextprotocol/inspector", "--cli", ...args], {
      cwd: REPO,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: home,
        npm_config_offline: "true",
        npm_config_update_notifier: "false",
        NO_COLOR: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const pid = child.pid;
    if (pid !== undefined) running.add(pid);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the inspector did not finish within ${TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, TIMEOUT_MS - 5_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (pid !== undefined) running.delete(pid);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The `result` of the inspector's JSON output (`--format json`). */
function resultOf(run: Run): Answer {
  if (run.stdout.trim() === "") throw new Error(`no output (exit ${run.code}); stderr: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { result: Answer }).result;
}

describe("the MCP Inspector CLI against POST /mcp", () => {
  let server: TestServer;
  let url: string;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "inspector-home-"));
    server = await startServer();
    url = `${server.baseUrl}/mcp`;
  });
  afterAll(async () => {
    for (const pid of running) process.kill(pid, "SIGKILL");
    await server?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it(
    "lists the thirteen tools with their input schemas",
    async () => {
      const run = await inspector([url, "--transport", "http", "--method", "tools/list", "--format", "json"]);
      expect(run.code, run.stderr).toBe(0);
      const tools = resultOf(run)["tools"] as { name: string; inputSchema: { type: string; properties: object } }[];
      expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
      expect(tools.every((t) => t.inputSchema.type === "object")).toBe(true);
      expect(Object.keys(tools[0]!.inputSchema.properties)).toContain("output_format");
      // Its portability check finds no error in the generated schemas.
      expect(run.stderr).toMatch(/Schema portability: 0 errors/);
    },
    TIMEOUT_MS,
  );

  it(
    "calls retrieve_schema with --tool-arg (JSON values for arrays) and gets the answer",
    async () => {
      const run = await inspector([
        url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "retrieve_schema",
        "--tool-arg",
        "query=上气道梗阻有哪些症状",
        'kn_ids=[{"knowledge_network_id":"kn_medical"}]',
        "top_k=3",
        "output_format=json",
        "--format",
        "json",
      ]);
      expect(run.code, run.stderr).toBe(0);
      const result = resultOf(run);
      expect(result["isError"]).toBeUndefined();
      const text = (result["content"] as { type: string; text: string }[])[0]!.text;
      const answer = JSON.parse(text) as Answer;
      expect(answer["kn_id"]).toBe("kn_medical");
      const relations = answer["relation_types"] as Answer[];
      expect(relations).toHaveLength(3);
      expect(relations[0]).toMatchObject({ id: "has_symptom", from: "disease", to: "symptom" });
    },
    TIMEOUT_MS,
  );

  it(
    "sends --header identity headers: a MemRecall call fails without them and works with them",
    async () => {
      const args = [
        url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "store_memory",
        "--tool-arg",
        "memory_key=inspector_note",
        "content=通过 MCP Inspector 保存的记忆",
        "--format",
        "json",
      ];
      const [without, withHeaders] = await Promise.all([
        inspector(args),
        inspector([...args, "--header", "x-account-id: u-inspector", "x-account-type: user"]),
      ]);
      // The inspector exits non-zero when the tool answered isError, and still prints the result.
      expect(without.code).not.toBe(0);
      expect(without.stdout).toContain("ACCOUNT_REQUIRED");
      expect(withHeaders.code, withHeaders.stderr).toBe(0);
      const text = (resultOf(withHeaders)["content"] as { text: string }[])[0]!.text;
      expect(text).toContain("memory_key: inspector_note");
      expect(text).toContain("created: true");
    },
    TIMEOUT_MS,
  );
});
