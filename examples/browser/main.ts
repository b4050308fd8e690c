// A page that calls context-loader's MemRecallService with @context-loader/client: store a memory,
// search memories, watch a Recall stream event by event, and show any error decoded (code, reason,
// field violations, the next step, the trace id). Served from its own origin: the service must list
// that origin in CORS_ALLOWED_ORIGINS.
//
// index.html?api=<service base URL>&account=<x-account-id>&protocol=connect|grpc-web
// Each output element gets data-state="done" or "failed" when its call ends (what .ci/client-typescript waits for).
import { Code, type ContextLoaderClients, errorDetails } from "@context-loader/client";
import { createWebClients } from "@context-loader/client/web";

const params = new URLSearchParams(location.search);
const api = params.get("api") ?? "http://127.0.0.1:8080";
const account = params.get("account") ?? "browser-demo";

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const protocolSelect = $<HTMLSelectElement>("protocol");
protocolSelect.value = params.get("protocol") === "grpc-web" ? "grpc-web" : "connect";
$("api").textContent = api;
$("account").textContent = account;

/** Clients for the protocol chosen now; the account goes with every call. */
function clients(): ContextLoaderClients {
  return createWebClients({
    baseUrl: api,
    protocol: protocolSelect.value as "connect" | "grpc-web",
    accountId: account,
    defaultTimeoutMs: 15_000,
  });
}

function item(text: string, attrs: Record<string, string> = {}): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  for (const [k, v] of Object.entries(attrs)) li.dataset[k] = v;
  return li;
}

/** Runs one action whose output is `out`: marks it busy, then done, or failed with the error shown. */
async function action(out: HTMLElement, work: () => Promise<void>): Promise<void> {
  out.dataset["state"] = "busy";
  $("error").textContent = "";
  try {
    await work();
    out.dataset["state"] = "done";
  } catch (err) {
    showError(err);
    out.dataset["state"] = "failed";
  }
}

/** The error as the service described it: what went wrong, which fields, what to do next. */
function showError(err: unknown): void {
  const d = errorDetails(err);
  const box = $("error");
  box.replaceChildren();
  const line = (name: string, text: string) => {
    const p = document.createElement("div");
    p.dataset["field"] = name;
    p.textContent = `${name}: ${text}`;
    box.append(p);
  };
  line("code", Code[d.code]);
  line("message", d.message);
  if (d.reason) line("reason", d.reason);
  for (const v of d.fieldViolations) line("violation", `${v.field}: ${v.description}`);
  if (d.hint) line("hint", d.hint.nextRpc ? `${d.hint.message} (next: ${d.hint.nextRpc})` : d.hint.message);
  if (d.traceId) line("trace_id", d.traceId);
}

$("store").addEventListener("submit", (e) => {
  e.preventDefault();
  const form = new FormData(e.target as HTMLFormElement);
  const out = $("store-status");
  void action(out, async () => {
    const res = await clients().memRecall.storeMemory({
      memoryKey: String(form.get("key")),
      memoryType: "project_fact",
      summary: String(form.get("summary")),
      content: String(form.get("content")),
    });
    out.textContent = `${res.created ? "stored" : "updated"} ${res.memoryKey}`;
  });
});

function search(query: string): void {
  const out = $("search-results");
  void action(out, async () => {
    out.replaceChildren();
    const res = await clients().memRecall.searchMemories({ query });
    for (const r of res.results) {
      out.append(item(`${r.memoryKey} — ${r.summary} (${r.relevanceScore.toFixed(2)})`, { key: r.memoryKey }));
    }
    if (res.results.length === 0) out.append(item("no memories found"));
  });
}
$("search").addEventListener("submit", (e) => {
  e.preventDefault();
  search(String(new FormData(e.target as HTMLFormElement).get("query")));
});
// A deliberate mistake: query is required, so the service answers INVALID_ARGUMENT naming it.
$("search-empty").addEventListener("click", () => search(""));

$("recall").addEventListener("submit", (e) => {
  e.preventDefault();
  const message = String(new FormData(e.target as HTMLFormElement).get("message"));
  const events = $("recall-events");
  const handoff = $("recall-handoff");
  void action(handoff, async () => {
    events.replaceChildren();
    handoff.textContent = "";
    const started = performance.now();
    // Server streaming over fetch: each event is shown as soon as it arrives.
    for await (const res of clients().memRecall.recall({ messages: [{ role: "user", content: message }] })) {
      const { event } = res;
      const at = `${Math.round(performance.now() - started)} ms`;
      let text = event.case ?? "unknown";
      if (event.case === "toolCall") text += ` ${event.value.name}`;
      if (event.case === "toolResult") text += ` ${event.value.name}: ${event.value.summary}`;
      events.append(item(`${at} ${text}`, { kind: event.case ?? "" }));
      if (event.case === "handoff") {
        handoff.dataset["keys"] = event.value.relevantMemoryKeys.join(",");
        handoff.textContent = `${event.value.reason} — ${event.value.relevantMemoryKeys.join(", ")}`;
      }
    }
  });
});
