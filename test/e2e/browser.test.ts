// Browser end-to-end: a real Chromium loads a page from one loopback origin and
// calls the real server on another, over Connect and gRPC-web, so every call
// goes through a CORS preflight. The page is browser-page/ (main.ts bundled in
// memory with esbuild); it writes its results into the DOM as JSON.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { build } from "esbuild";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";
import type { ProtocolResult } from "./browser-page/main";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  if (process.env["CI"] === "true") {
    throw new Error(
      `${CHROMIUM} not found: CI must install Chromium (apt-get install -y chromium) for the browser end-to-end test`,
    );
  }
  console.warn(
    `\n*** SKIPPING the browser end-to-end test: ${CHROMIUM} not found. ***\n` +
      "*** Install Debian's Chromium to run it: apt-get install -y chromium ***\n",
  );
}

const pageDir = new URL("./browser-page/", import.meta.url);
const HANDOFF_RPC = "contextloader.memrecall.v1.MemRecallService/Handoff";
const EXPAND_RPC = "contextloader.memrecall.v1.MemRecallService/ExpandContextWindow";
/** The x-account-id the page sends: every MemRecall call needs the caller's account. */
const ACCOUNT_ID = "u-browser";

interface PageServer {
  /** http://127.0.0.1:<port>, the page's origin. */
  origin: string;
  close(): Promise<void>;
}

/** index.html as is, and main.ts bundled for the browser as main.js. */
async function pageFiles(): Promise<Map<string, { type: string; body: string }>> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL("main.ts", pageDir))],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "silent",
  });
  const html = await readFile(new URL("index.html", pageDir), "utf8");
  return new Map([
    ["/", { type: "text/html; charset=utf-8", body: html }],
    ["/main.js", { type: "text/javascript; charset=utf-8", body: bundle.outputFiles[0]!.text }],
  ]);
}

/** Serves the page on a free loopback port: a different origin from the API server's. */
async function servePage(files: Map<string, { type: string; body: string }>): Promise<PageServer> {
  const server = http.createServer((req, res) => {
    const file = files.get(new URL(req.url ?? "/", "http://page").pathname);
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file.type, "cache-control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Opens the page from `pageOrigin` against `apiBaseUrl` and reads back what it wrote. */
async function runPage(browser: Browser, pageOrigin: string, apiBaseUrl: string) {
  // A fresh context per run: no cache, cookies or preflight results carried over.
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const consoleLines: string[] = [];
    page.on("console", (m) => consoleLines.push(m.text()));
    // Fail fast with the page's own error rather than time out waiting for the marker.
    const pageError = new Promise<never>((_, reject) => page.once("pageerror", reject));
    pageError.catch(() => {}); // only ever observed through the race below
    await page.goto(`${pageOrigin}/?api=${encodeURIComponent(apiBaseUrl)}&account=${encodeURIComponent(ACCOUNT_ID)}`);
    await Promise.race([page.waitForSelector("body[data-done]", { state: "attached", timeout: 15_000 }), pageError]);
    const read = async (id: string) => JSON.parse((await page.textContent(`#${id}`)) ?? "") as ProtocolResult;
    return { connect: await read("connect"), grpcweb: await read("grpcweb"), consoleLines };
  } finally {
    await context.close();
  }
}

describe.skipIf(!haveChromium)("Chromium calling the API from another origin", () => {
  let api: TestServer;
  let allowedPage: PageServer;
  let otherPage: PageServer;
  let browser: Browser;
  let llm: ScriptedLlm;

  beforeAll(async () => {
    const files = await pageFiles();
    [allowedPage, otherPage] = await Promise.all([servePage(files), servePage(files)]);
    llm = await startScriptedLlm();
    api = await startServer({ CORS_ALLOWED_ORIGINS: allowedPage.origin, LLM_BASE_URL: llm.baseUrl });
    await clientWith(MemRecallService, api.baseUrl, { "x-account-id": ACCOUNT_ID }).storeMemory({
      memoryKey: "db_config_prod",
      memoryType: "project_fact",
      summary: "生产环境 PostgreSQL 数据库配置",
      content: "host=pg-prod.internal port=5432 database=analytics",
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([api?.close(), allowedPage?.close(), otherPage?.close()]);
    await llm?.close();
  });

  const rpcLogs = (rpc: string) => api.logs.filter((l) => l.msg === "rpc" && l["rpc"] === rpc);

  it("answers Handoff and rejects an invalid ExpandContextWindow over Connect and gRPC-web", async () => {
    const { connect, grpcweb } = await runPage(browser, allowedPage.origin, api.baseUrl);

    for (const [name, result] of Object.entries({ connect, grpcweb })) {
      const { handoff, invalidExpand } = result;
      // traceId proves access-control-expose-headers lets the page read x-trace-id.
      expect(handoff, name).toMatchObject({ ok: true, traceId: expect.stringMatching(/^[0-9a-f]{32}$/) });
      const reportLines = handoff.ok ? handoff.message.split("\n") : [];
      // Chromium asks for English (Accept-Language: en-US).
      expect(reportLines, name).toEqual(
        expect.arrayContaining(["## Memory search complete (confidence: 85%)", "- db_config_001"]),
      );
      expect(invalidExpand, name).toMatchObject({
        ok: false,
        code: Code.InvalidArgument,
        violationFields: ["requested_size"],
      });
      // No reply is queued at the LLM here: it answers without a tool call, twice, and the stream ends with the error.
      expect(result.recall, name).toMatchObject({ ok: false, code: Code.Unavailable });
    }

    const traceIds = [connect.handoff, grpcweb.handoff].map((h) => (h.ok ? h.traceId : null));
    // The account shows the preflight let x-account-id through to the handler.
    expect(rpcLogs(HANDOFF_RPC).map((l) => [l["trace_id"], l["code"], l["account"]])).toEqual(
      traceIds.map((id) => [id, "OK", ACCOUNT_ID]),
    );
    expect(rpcLogs(EXPAND_RPC).map((l) => [l["code"], l["account"]])).toEqual([
      ["INVALID_ARGUMENT", ACCOUNT_ID],
      ["INVALID_ARGUMENT", ACCOUNT_ID],
    ]);
  });

  it("streams Recall into the page over Connect and gRPC-web, each event as it happens", async () => {
    // The LLM takes 300 ms a turn: a search, the memory opened, the handoff. Streamed, the first events
    // reach the page while the LLM is still thinking about the later ones.
    const turn = (name: string, args: Record<string, unknown>) => ({
      toolCalls: [{ name, arguments: args }],
      delayMs: 300,
    });
    for (let protocol = 0; protocol < 2; protocol++) {
      llm.queue(
        turn("search_memories", { query: "数据库配置" }),
        turn("get_memory_detail", { memory_key: "db_config_prod" }),
        turn("handoff", {
          reason: "已找到相关记忆，搜索完成",
          search_summary: "找到用户之前的数据库配置",
          relevant_memory_keys: ["db_config_prod"],
          confidence: 0.85,
        }),
      );
    }
    const { connect, grpcweb } = await runPage(browser, allowedPage.origin, api.baseUrl);
    for (const [name, { recall }] of Object.entries({ connect, grpcweb })) {
      if (!recall.ok) throw new Error(`${name}: ${recall.message}`);
      expect(recall, name).toMatchObject({ strategy: "llm", keys: ["db_config_prod"] });
      expect(
        recall.events.map((e) => e.kind),
        name,
      ).toEqual([
        "iterationStarted",
        "toolCall",
        "toolResult",
        "toolCall",
        "toolResult",
        "toolCall",
        "toolResult",
        "handoff",
      ]);
      const at = recall.events.map((e) => e.at);
      expect(at, name).toEqual([...at].sort((a, b) => a - b));
      // The iteration began before the first LLM answer; the search result came a turn before the memory,
      // and two turns before the handoff: not one burst at the end. A turn is 300 ms; an event may reach
      // the page late on a loaded machine (seen: 225 ms between two turns, and once, in CI with the machine
      // at a load of 8, the first two together), a burst ~0 ms apart: of the three steps, at least two a
      // fifth of a turn apart, and the whole stream spread over more than a turn.
      const [started, , searched, , opened, , , handedOff] = at as number[];
      const steps = [searched! - started!, opened! - searched!, handedOff! - opened!];
      expect(steps.filter((ms) => ms >= 60).length, `${name}: ${steps}`).toBeGreaterThanOrEqual(2);
      expect(handedOff! - started!, name).toBeGreaterThanOrEqual(300);
    }
  });

  it("blocks a page whose origin is not in CORS_ALLOWED_ORIGINS", async () => {
    const handled = api.logs.filter((l) => l.msg === "rpc").length;
    const { connect, grpcweb, consoleLines } = await runPage(browser, otherPage.origin, api.baseUrl);

    // The refused preflight makes fetch itself reject (a TypeError, which
    // connect-web reports as Code.Unknown): no status, no error details.
    const blocked = { ok: false, code: Code.Unknown, message: "[unknown] Failed to fetch", violationFields: [] };
    for (const [name, result] of Object.entries({ connect, grpcweb })) {
      expect(result, name).toEqual({ handoff: blocked, invalidExpand: blocked, recall: blocked });
    }
    expect(consoleLines).toEqual(expect.arrayContaining([expect.stringContaining("has been blocked by CORS policy")]));
    // Nothing got past the preflight to a handler.
    expect(api.logs.filter((l) => l.msg === "rpc")).toHaveLength(handled);
  });
});
