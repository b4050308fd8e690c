import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, callFails, callOk, fieldsOf, KN, QUESTION, TOOL_NAMES } from "./mcp-client";

/**
 * `npm run mcp:stdio` spawned the way an MCP host spawns a server: the SDK's
 * stdio client transport, the settings and the caller in the environment.
 * Every process started here is tracked by pid and killed if a test leaves it.
 */

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const COMMAND = { command: "npm", args: ["run", "--silent", "mcp:stdio"], cwd: REPO };

/** Pids this file started and has not yet seen exit. */
const started = new Set<number>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(() => {
  for (const pid of started) {
    if (alive(pid)) process.kill(pid, "SIGKILL");
    started.delete(pid);
  }
});

/** Connects the SDK client to a freshly spawned mcp:stdio, collecting its stderr. */
async function spawnStdio(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    ...COMMAND,
    env: { SQLITE_PATH: ":memory:", LOG_LEVEL: "info", DEFAULT_LANGUAGE: "en", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "context-loader-stdio-tests", version: "1.0.0" });
  const exited = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await client.connect(transport);
  const pid = transport.pid!;
  started.add(pid);
  return { client, transport, pid, exited, stderr: () => stderr };
}

/** Runs the command to its end (bounded): exit code and stderr. */
function runToExit(
  env: Record<string, string>,
  timeoutMs: number,
  args: string[] = COMMAND.args,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(COMMAND.command, args, {
      cwd: REPO,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: process.env["HOME"] ?? "",
        SQLITE_PATH: ":memory:",
        DEFAULT_LANGUAGE: "en",
        ...env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    if (child.pid !== undefined) started.add(child.pid);
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcp:stdio did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe("npm run mcp:stdio", () => {
  it("serves the tools over stdio and exits by itself when the client closes", async () => {
    const { client, pid, exited, stderr } = await spawnStdio({ MCP_ACCOUNT_ID: "u-stdio" });
    expect(client.getServerVersion()?.name).toBe("context-loader");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);

    const schema = await callOk(client, "retrieve_schema", { query: QUESTION, kn_ids: KN, top_k: 3 });
    expect((schema["relation_types"] as Answer[])[0]).toMatchObject({ id: "has_symptom", from: "disease" });

    const stored = await callOk(client, "store_memory", {
      memory_key: "stdio_db",
      summary: "生产环境 PostgreSQL 数据库配置",
      content: "数据库配置：host=pg-prod.internal port=5432",
    });
    expect(stored).toMatchObject({ memory_key: "stdio_db", created: true });
    const found = await callOk(client, "search_memories", { query: "数据库配置", output_format: "json" });
    expect(found["total_found"]).toBe(1);
    expect((found["results"] as Answer[])[0]).toMatchObject({ memory_key: "stdio_db" });

    const e = await callFails(client, "search_memories", { query: "数据库", limit: 0 });
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(fieldsOf(e)).toEqual(["limit"]);
    expect(e.trace_id).toMatch(/^[0-9a-f]{32}$/);

    // The logs went to stderr (stdout carries only MCP messages, or the client would have choked).
    expect(stderr()).toContain('"msg":"mcp:stdio ready"');
    expect(stderr()).toContain('"account":"u-stdio"');

    // Closing ends stdin; the server stops on its own, not at the transport's SIGTERM 2 s later (its log says why,
    // an outcome whatever the machine's load).
    await client.close();
    await exited;
    expect(alive(pid)).toBe(false);
    expect(stderr()).toMatch(/"why":"(the client closed stdin|the transport closed)","msg":"mcp:stdio stopping"/);
    expect(stderr()).toContain("the client closed stdin");
  }, 30_000);

  it("answers MemRecall tools with ACCOUNT_REQUIRED when MCP_ACCOUNT_ID is not set", async () => {
    const { client } = await spawnStdio({});
    try {
      const e = await callFails(client, "search_memories", { query: "数据库" });
      expect(e).toMatchObject({ code: "UNAUTHENTICATED", reason: "ACCOUNT_REQUIRED" });
      // The knowledge tools need no account.
      const a = await callOk(client, "kn_search", { query: "上气道梗阻", kn_ids: KN, only_schema: true });
      expect((a["object_types"] as Answer[]).map((o) => o["id"])).toContain("disease");
      expect(a["nodes"]).toBeUndefined();
    } finally {
      await client.close();
    }
  }, 30_000);

  it("exits with code 2 and says why when MCP_ACCOUNT_TYPE is not a known type", async () => {
    const { code, stderr } = await runToExit({ MCP_ACCOUNT_ID: "u1", MCP_ACCOUNT_TYPE: "bogus" }, 20_000);
    expect(code).toBe(2);
    expect(stderr).toContain("context-loader mcp:stdio cannot start");
    expect(stderr).toContain('MCP_ACCOUNT_TYPE: must be one of "user", "app", "anonymous"');
    expect(stderr).not.toContain("x-account");
  }, 30_000);

  it("refuses to start under npm without --silent, whose banner on stdout would break the client, and says how to run it", async () => {
    const { code, stderr } = await runToExit({ MCP_ACCOUNT_ID: "u1" }, 20_000, ["run", "mcp:stdio"]);
    expect(code).toBe(2);
    expect(stderr).toContain("run it as `npm run --silent mcp:stdio`");
  }, 30_000);

  it("exits with code 2 and names the setting when a setting is invalid", async () => {
    const { code, stderr } = await runToExit({ MCP_ACCOUNT_ID: "u1", LOG_LEVEL: "loud" }, 20_000);
    expect(code).toBe(2);
    expect(stderr).toContain("cannot start");
    expect(stderr).toContain("LOG_LEVEL");
  }, 30_000);

  it("exits with code 2 and one line naming SQLITE_PATH when the memory file cannot be written", async () => {
    // A path below a regular file: unwritable even for root.
    const { code, stderr } = await runToExit(
      { MCP_ACCOUNT_ID: "u1", SQLITE_PATH: `${REPO}/package.json/memories.sqlite` },
      20_000,
    );
    expect(code).toBe(2);
    // stderr carries the JSON log too (stdout is the protocol's); besides it, one line and no stack.
    expect(
      stderr
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("{")),
    ).toHaveLength(1);
    expect(stderr).toMatch(/cannot start: the SQLite memory store .* cannot be opened for writing .*SQLITE_PATH/);
  }, 30_000);
});
