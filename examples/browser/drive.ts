/**
 * Drives examples/browser in headless Chromium and checks what the page shows, once per protocol
 * (Connect, gRPC-web): store a memory, search it, watch a Recall stream, show an error decoded.
 * Serves the built page (index.html + main.js) on PAGE_PORT, an origin other than the service's;
 * the service at API_URL must allow it in CORS_ALLOWED_ORIGINS. .ci/client-typescript runs it:
 *
 *   API_URL=http://127.0.0.1:18098 PAGE_PORT=18097 PAGE_DIR=<dir with index.html and main.js> tsx examples/browser/drive.ts
 *
 * Exits 1 naming what the page did not show.
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import * as http from "node:http";
import { extname, join } from "node:path";
import { chromium, type Page } from "playwright-core";

const apiUrl = process.env["API_URL"] ?? "http://127.0.0.1:18098";
const pagePort = Number(process.env["PAGE_PORT"] ?? "18097");
const pageDir = process.env["PAGE_DIR"];
if (pageDir === undefined) throw new Error("PAGE_DIR must name the directory with index.html and main.js");
const CHROMIUM = process.env["CHROMIUM"] ?? "/usr/bin/chromium";
const TIMEOUT_MS = 15_000;

const types: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };

/** A static server for the page's two files, on the page's own origin. */
async function servePage(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://page").pathname;
    const file = path === "/" ? "index.html" : path.slice(1);
    if (!["index.html", "main.js"].includes(file)) {
      res.writeHead(404).end();
      return;
    }
    readFile(join(pageDir!, file)).then(
      (body) => res.writeHead(200, { "content-type": types[extname(file)]!, "cache-control": "no-store" }).end(body),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(pagePort, "127.0.0.1", resolve));
  return server;
}

const problems: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) problems.push(what);
}

/** Waits until the element's call ended; returns its data-state ("done" or "failed"). */
async function settled(page: Page, id: string): Promise<string> {
  const selector = `#${id}[data-state="done"], #${id}[data-state="failed"]`;
  // "attached": a failed search leaves its list empty, and an empty element is not "visible".
  await page.waitForSelector(selector, { state: "attached", timeout: TIMEOUT_MS }).catch(() => {
    throw new Error(`#${id}: its call did not end within ${TIMEOUT_MS} ms`);
  });
  return (await page.getAttribute(`#${id}`, "data-state")) ?? "";
}

async function errorLines(page: Page): Promise<Record<string, string[]>> {
  const lines = await page.$$eval("#error [data-field]", (els) =>
    els.map((e) => [(e as HTMLElement).dataset["field"] ?? "", e.textContent ?? ""]),
  );
  const out: Record<string, string[]> = {};
  for (const [field, text] of lines) (out[field!] ??= []).push(text!.slice(field!.length + 2));
  return out;
}

async function exercise(page: Page, protocol: string): Promise<void> {
  const account = `browser-${protocol}-${randomUUID().slice(0, 8)}`;
  const url = `http://127.0.0.1:${pagePort}/?api=${encodeURIComponent(apiUrl)}&account=${account}&protocol=${protocol}`;
  await page.goto(url);
  const p = (what: string) => `${protocol}: ${what}`;

  await page.click("#store button");
  check((await settled(page, "store-status")) === "done", p("storing a memory failed"));
  check((await page.textContent("#store-status")) === "stored db_config_001", p("the page did not say stored"));

  await page.click("#search button:not([type])");
  check((await settled(page, "search-results")) === "done", p("searching failed"));
  const keys = await page.$$eval("#search-results li", (els) => els.map((e) => (e as HTMLElement).dataset["key"]));
  check(keys[0] === "db_config_001", p(`search showed ${JSON.stringify(keys)}, not db_config_001 first`));

  await page.click("#recall button");
  check((await settled(page, "recall-handoff")) === "done", p("the Recall stream failed"));
  const kinds = await page.$$eval("#recall-events li", (els) => els.map((e) => (e as HTMLElement).dataset["kind"]));
  check(kinds[0] === "iterationStarted", p(`Recall began with ${kinds[0]}`));
  check(kinds.includes("toolCall") && kinds.includes("toolResult"), p("Recall showed no tool calls and results"));
  check(kinds.at(-1) === "handoff", p(`Recall ended with ${kinds.at(-1)}`));
  check(
    (await page.getAttribute("#recall-handoff", "data-keys")) === "db_config_001",
    p("the handoff did not name db_config_001"),
  );

  await page.click("#search-empty");
  check((await settled(page, "search-results")) === "failed", p("an empty query did not fail"));
  const shown = await errorLines(page);
  check(shown["code"]?.[0] === "InvalidArgument", p(`the error's code shown was ${shown["code"]}`));
  check(shown["reason"]?.[0] === "INVALID_ARGUMENT", p(`the error's reason shown was ${shown["reason"]}`));
  check(
    shown["violation"]?.length === 1 && shown["violation"][0]!.startsWith("query: "),
    p("no violation naming query"),
  );
  check((shown["hint"]?.[0] ?? "") !== "", p("no hint shown"));
  check(/^[0-9a-f]{32}$/.test(shown["trace_id"]?.[0] ?? ""), p("no trace id shown"));
  console.log(`${protocol}: stored, found ${keys.join(",")}, streamed ${kinds.join(" ")}; error shown:`);
  for (const [field, texts] of Object.entries(shown)) for (const t of texts) console.log(`  ${field}: ${t}`);
}

const pageServer = await servePage();
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  for (const protocol of ["connect", "grpc-web"]) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(m.text());
    });
    try {
      await exercise(page, protocol);
    } catch (err) {
      problems.push(`${protocol}: ${(err as Error).message.split("\n")[0]}`);
    }
    // The deliberate INVALID_ARGUMENT logs one failed request; anything else (CORS, a script error) is a problem.
    const unexpected = pageErrors.filter((e) => !/status of 400/.test(e));
    if (unexpected.length > 0) problems.push(`${protocol}: the page logged ${JSON.stringify(unexpected)}`);
    await context.close();
  }
} finally {
  await browser.close();
  pageServer.closeAllConnections();
  pageServer.close();
}
if (problems.length > 0) {
  console.error(`FAILED (page on http://127.0.0.1:${pagePort}, service ${apiUrl}):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`ok: the page on http://127.0.0.1:${pagePort} used ${apiUrl} over Connect and gRPC-web`);
