/**
 * End-to-end smoke: starts the real service as `npm start` does (the build,
 * dist/main.js, on the Node that runs this script), calls it over Connect JSON,
 * gRPC, MCP and plain HTTP, then stops it with SIGTERM and checks a clean exit.
 * CI runs it on Node 20 and on Node 22 after `npm run build`:
 * `node <tsx cli> test/e2e/smoke.ts` (`npm run smoke` builds first).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { Health, HealthCheckResponse_ServingStatus } from "../../gen/grpc/health/v1/health_pb";

const root = fileURLToPath(new URL("../..", import.meta.url));
const builtMain = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`smoke failed: ${what}`);
}

async function main(): Promise<void> {
  // The memory store is the environment's (CI's Node 22 run uses PostgreSQL); SQLite goes to a temporary file.
  const dir = mkdtempSync(join(tmpdir(), "smoke-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  check(existsSync(builtMain), `${builtMain} is missing: run npm run build first`);
  const child = spawn(process.execPath, ["--enable-source-maps", builtMain], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", SQLITE_PATH: join(dir, "memories.sqlite") },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines: Record<string, unknown>[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("smoke failed: no 'listening' line within 20 s")), 20_000);
    createInterface({ input: child.stdout! }).on("line", (text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      if (typeof line["port"] === "number" && String(line["msg"]).startsWith("listening")) {
        clearTimeout(timer);
        resolve(line["port"]);
      }
    });
    void exited.then((code) => reject(new Error(`smoke failed: the server exited early with ${code}`)));
  });
  const baseUrl = `http://127.0.0.1:${port}`;

  const res = await fetch(`${baseUrl}/contextloader.memrecall.v1.MemRecallService/Handoff`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-account-id": "smoke" },
    body: JSON.stringify({ reason: "done", search_summary: "找到了", confidence: 0.85 }),
  });
  const body = (await res.json()) as { message?: string; task_completed?: boolean };
  check(
    res.status === 200 && body.task_completed === true && body.message?.includes("信心度: 85%"),
    `Connect JSON Handoff: ${res.status} ${JSON.stringify(body)}`,
  );

  const grpc = createGrpcTransport({ baseUrl });
  const health = await createClient(Health, grpc).check({ service: "" });
  check(health.status === HealthCheckResponse_ServingStatus.SERVING, "health is SERVING");
  const memrecall = createClient(MemRecallService, grpc);
  const headers = { "x-account-id": `smoke-${randomUUID()}` };
  const err = await memrecall.expandContextWindow({ reason: "r", currentSize: 5, requestedSize: 1 }, { headers }).then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
  check(
    err?.code === Code.InvalidArgument,
    `gRPC invalid ExpandContextWindow gives INVALID_ARGUMENT, got ${err?.code}`,
  );
  await memrecall.storeMemory(
    { memoryKey: "smoke_db", summary: "数据库配置", content: "PostgreSQL host=pg.internal port=5432" },
    { headers },
  );
  const found = await memrecall.searchMemories({ query: "数据库配置" }, { headers });
  check(
    found.results[0]?.memoryKey === "smoke_db",
    `gRPC SearchMemories finds the stored memory, got ${JSON.stringify(found.results.map((r) => r.memoryKey))}`,
  );
  await memrecall.deleteMemory({ memoryKey: "smoke_db" }, { headers });

  // MCP on the same port: a tool call answered in TOON.
  const mcp = await fetch(`${baseUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "retrieve_schema",
        arguments: { query: "上气道梗阻有哪些症状", kn_ids: [{ knowledge_network_id: "kn_medical" }] },
      },
    }),
  });
  const called = (await mcp.json()) as { result?: { isError?: boolean; content?: { text: string }[] } };
  check(
    mcp.status === 200 &&
      called.result?.isError !== true &&
      /^object_types\[\d+\]\{/m.test(called.result?.content?.[0]?.text ?? ""),
    `MCP tools/call retrieve_schema answers a TOON table: ${mcp.status} ${JSON.stringify(called).slice(0, 300)}`,
  );

  const ready = await fetch(`${baseUrl}/readyz`);
  check(ready.status === 200, `readyz is 200, got ${ready.status}`);

  child.kill("SIGTERM");
  const code = await exited;
  check(code === 0, `exit code 0 after SIGTERM, got ${code}`);
  check(
    lines.some((l) => l["msg"] === "stopped"),
    "the server logged 'stopped'",
  );
  const store = lines.find((l) => l["msg"] === "clients")?.["memory_store"];
  process.stdout.write(
    `smoke ok on node ${process.version}: connect, grpc, mcp, memories in ${String(store)}, http probes, graceful stop\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
