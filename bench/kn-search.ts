import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { pino } from "pino";
import { DEFAULT_SEED, generateBundle } from "../data/generator/build";
import { KnowledgeRetrievalService, type KnSearchResponse } from "../gen/contextloader/knowledge/v1/knowledge_pb";
import { type App, createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import { requestBody } from "../src/knowledge/kn-search/data-retrieval-wire";
import { knSearchInput } from "../src/knowledge/kn-search/input";
import { startSimulator } from "../src/simulator/simulator";
import { formatMicros, line, percentile } from "./stats";

const KN = "kn_medical";
const SAMPLE_BUNDLE = "data/kn_medical.bundle.json";
const HEADERS = { "x-account-id": "bench", "x-account-type": "user" };

/** Proxy mode: the question, warm-up calls and timed calls per side. */
const PROXY_QUERY = "上气道梗阻有哪些症状";
const PROXY_WARMUP = 30;
const PROXY_RUNS = 300;

/** Native mode at 100k instances: warm-up rounds (the first builds the lazy indexes) and timed calls per query. */
const SCALE = 100_000;
const NATIVE_WARMUP = 3;
const NATIVE_RUNS = 100;
const ONE_KEYWORD = "上气道梗阻";
const MULTI_KEYWORD = "上气道梗阻 呼吸困难 阿莫西林";
const SCHEMA_QUESTION = "上气道梗阻有哪些症状";

type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

/**
 * kn_search (KnSearch) in both modes.
 *
 * Proxy overhead: the simulator's data-retrieval `POST /tools/kn_search` over
 * the sample network, called directly with the body our proxy sends, against
 * the same request through our KnSearch (Connect JSON over HTTP/1.1, forwarded
 * to that simulator), alternating which goes first; what ours adds is our p50
 * and p99 minus the direct call's. Everything runs in this one process, so our
 * share includes the app's own CPU time on the shared event loop.
 *
 * Native: KnSearch computed here over a generated 100k-instance network (as
 * bench/engine.ts builds it, written to a temp file for KN_BUNDLE), for one
 * keyword, several keywords and only_schema, each in fresh sessions; answers
 * are checked after the clock stops.
 */
export async function benchKnSearch(): Promise<void> {
  await benchProxyOverhead();
  await benchNative();
}

async function benchProxyOverhead(): Promise<void> {
  const sim = await startSimulator({
    backend: EmbeddedBackend.fromFiles([SAMPLE_BUNDLE], { timeZone: "Asia/Shanghai" }),
  });
  let app: App | undefined;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    app = startApp({ DATA_RETRIEVAL_URL: sim.url });
    const client = connectClient(await app.listen());

    // The body our proxy sends: the spec's request with every default applied, a fresh session each call.
    const directBody = (sessionId: string) =>
      JSON.stringify(
        requestBody(
          knSearchInput.parse({ query: PROXY_QUERY, kn_ids: [{ knowledge_network_id: KN }], session_id: sessionId }),
          sessionId,
        ),
      );
    const direct = async () => {
      const sessionId = randomUUID();
      const body = directBody(sessionId);
      const started = process.hrtime.bigint();
      const answer = await postJson(agent, `${sim.url}/tools/kn_search`, body);
      return { us: Number(process.hrtime.bigint() - started) / 1000, answer };
    };
    const ours = async () => {
      const started = process.hrtime.bigint();
      const answer = await client.knSearch(
        { query: PROXY_QUERY, knIds: [{ knowledgeNetworkId: KN }], sessionId: randomUUID() },
        { headers: HEADERS },
      );
      return { us: Number(process.hrtime.bigint() - started) / 1000, answer };
    };

    for (let i = 0; i < PROXY_WARMUP; i++) {
      await direct();
      await ours();
    }
    const directUs: number[] = [];
    const oursUs: number[] = [];
    const directAnswers: DirectAnswer[] = [];
    const oursAnswers: KnSearchResponse[] = [];
    for (let i = 0; i < PROXY_RUNS; i++) {
      // Alternate which side goes first, so neither always meets a warmer (or busier) process.
      const runDirect = async () => {
        const r = await direct();
        directUs.push(r.us);
        directAnswers.push(r.answer);
      };
      const runOurs = async () => {
        const r = await ours();
        oursUs.push(r.us);
        oursAnswers.push(r.answer);
      };
      if (i % 2 === 0) {
        await runDirect();
        await runOurs();
      } else {
        await runOurs();
        await runDirect();
      }
    }

    // Checks, after the clock: the same nodes both ways, every call; ours really went to data-retrieval, once.
    const expected = directAnswers[0] ? directNodeNames(directAnswers[0]) : [];
    if (expected.length === 0) throw new Error(`kn_search direct: no nodes for "${PROXY_QUERY}"`);
    for (const a of directAnswers) {
      if (directNodeNames(a).join("|") !== expected.join("|"))
        throw new Error(`kn_search direct: nodes changed between calls: ${directNodeNames(a).join(", ")}`);
    }
    for (const a of oursAnswers) {
      const got = a.nodes.map((n) => `${n.objectTypeId}:${n.instanceName}`);
      if (got.join("|") !== expected.join("|"))
        throw new Error(`kn_search through KnSearch: nodes [${got.join(", ")}], direct [${expected.join(", ")}]`);
    }
    sim.clearRequests();
    await ours();
    const forwarded = sim.requests().filter((r) => r.path === "/tools/kn_search");
    if (forwarded.length !== 1 || forwarded[0]!.status !== 200) {
      throw new Error(
        `KnSearch in proxy mode made ${forwarded.length} calls to /tools/kn_search (${forwarded.map((r) => r.status).join(", ")}), expected one 200`,
      );
    }

    const answerBytes = Buffer.byteLength(JSON.stringify(directAnswers[0]));
    const p = (s: number[], q: number) => percentile(s, q);
    const paired = oursUs.map((us, i) => us - directUs[i]!);
    line(
      "kn-search proxy: request",
      `"${PROXY_QUERY}" on ${KN} (sample bundle), ${expected.length} nodes, ${kb(answerBytes)} answer, ${PROXY_RUNS} calls per side, alternating`,
    );
    line(
      "kn-search proxy: direct /tools/kn_search",
      `p50 ${formatMicros(p(directUs, 50))} p99 ${formatMicros(p(directUs, 99))}`,
    );
    line(
      "kn-search proxy: KnSearch through us",
      `p50 ${formatMicros(p(oursUs, 50))} p99 ${formatMicros(p(oursUs, 99))}`,
    );
    line(
      "kn-search proxy: overhead (ours - direct)",
      `p50 ${ms(p(oursUs, 50) - p(directUs, 50))} p99 ${ms(p(oursUs, 99) - p(directUs, 99))} | paired median ${ms(p(paired, 50))} | ours/direct p50 ${(p(oursUs, 50) / p(directUs, 50)).toFixed(2)}x p99 ${(p(oursUs, 99) / p(directUs, 99)).toFixed(2)}x`,
    );
  } finally {
    agent.destroy();
    await app?.shutdown();
    await sim.close();
  }
}

async function benchNative(): Promise<void> {
  const file = join(tmpdir(), `context-loader-kn-search-bench-${process.pid}-${randomUUID()}.json`);
  let app: App | undefined;
  try {
    const started = performance.now();
    const instances = writeScaledBundle(file);
    const written = performance.now();
    app = startApp({ KN_BUNDLE: file });
    rmSync(file, { force: true }); // The engine has read it.
    const client = connectClient(await app.listen());
    const loaded = performance.now();
    line(
      `kn-search native: bundle of ${instances} instances`,
      `generated+written in ${((written - started) / 1000).toFixed(2)} s, app started in ${((loaded - written) / 1000).toFixed(2)} s`,
    );

    const cases = [
      { label: "one keyword", query: ONE_KEYWORD, onlySchema: false },
      { label: `${MULTI_KEYWORD.split(" ").length} keywords`, query: MULTI_KEYWORD, onlySchema: false },
      { label: "only_schema=true", query: SCHEMA_QUESTION, onlySchema: true },
    ];
    const call = (query: string, onlySchema: boolean) =>
      client.knSearch(
        { query, knIds: [{ knowledgeNetworkId: KN }], sessionId: randomUUID(), onlySchema },
        { headers: HEADERS },
      );

    // The first calls build the engine's lazy indexes (about a second); not timed.
    const warm = performance.now();
    for (let i = 0; i < NATIVE_WARMUP; i++) for (const c of cases) await call(c.query, c.onlySchema);
    const warmS = (performance.now() - warm) / 1000;

    // Interleaved: one call of each case per round.
    const samples = cases.map(() => [] as number[]);
    const answers = cases.map(() => [] as KnSearchResponse[]);
    for (let i = 0; i < NATIVE_RUNS; i++) {
      for (const [k, c] of cases.entries()) {
        const t = process.hrtime.bigint();
        const answer = await call(c.query, c.onlySchema);
        samples[k]!.push(Number(process.hrtime.bigint() - t) / 1000);
        answers[k]!.push(answer);
      }
    }

    for (const a of answers[0]!) checkNodes(a, `${cases[0]!.label} "${cases[0]!.query}"`, [`disease:上、下气道梗阻`]);
    for (const a of answers[1]!) {
      checkNodes(a, `${cases[1]!.label} "${cases[1]!.query}"`, [
        `disease:上、下气道梗阻`,
        `symptom:呼吸困难`,
        `drugs:阿莫西林`,
      ]);
    }
    answers[2]!.forEach((a) => {
      if (a.nodes.length > 0 || a.objectTypes.length === 0 || a.relationTypes.length === 0 || a.warnings.length > 0) {
        throw new Error(
          `kn_search ${cases[2]!.label} "${cases[2]!.query}": ${a.nodes.length} nodes, ${a.objectTypes.length} object types, ${a.relationTypes.length} relation types, ${a.warnings.length} warnings`,
        );
      }
    });

    line(`kn-search native: warm-up (${NATIVE_WARMUP} rounds, index build)`, `${warmS.toFixed(2)} s`);
    for (const [k, c] of cases.entries()) {
      const s = samples[k]!;
      const a = answers[k]![0]!;
      line(
        `kn-search native: ${c.label}`,
        `"${c.query}": p50 ${formatMicros(percentile(s, 50))} p95 ${formatMicros(percentile(s, 95))} p99 ${formatMicros(percentile(s, 99))} (${s.length} calls) | ${a.nodes.length} nodes, ${a.objectTypes.length} object types, ${a.relationTypes.length} relation types`,
      );
    }
  } finally {
    await app?.shutdown();
    rmSync(file, { force: true });
  }
}

/** The 100k-instance network as bench/engine.ts generates it, written as JSON; returns its instance count. */
function writeScaledBundle(file: string): number {
  const bundle = generateBundle({ seed: DEFAULT_SEED, scale: SCALE });
  writeFileSync(file, JSON.stringify(bundle));
  return Object.values(bundle.objects).reduce((n, rows) => n + rows.length, 0);
}

function startApp(env: Record<string, string>): App {
  return createApp(
    loadConfig({ PORT: "0", HOST: "127.0.0.1", SQLITE_PATH: ":memory:", LOG_LEVEL: "silent", ...env }),
    pino({ level: "silent" }),
  );
}

function connectClient(port: number): KnowledgeClient {
  return createClient(
    KnowledgeRetrievalService,
    createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }),
  );
}

/** Every expected node (`type:name`) among the answer's, and no warning. */
function checkNodes(a: KnSearchResponse, label: string, expected: string[]): void {
  const got = a.nodes.map((n) => `${n.objectTypeId}:${n.instanceName}`);
  const missing = expected.filter((e) => !got.includes(e));
  if (got.length === 0 || missing.length > 0 || a.warnings.length > 0) {
    throw new Error(
      `kn_search ${label}: nodes [${got.join(", ")}], missing [${missing.join(", ")}], ${a.warnings.length} warnings ${a.message}`,
    );
  }
}

interface DirectAnswer {
  nodes?: Record<string, unknown>[];
}

function directNodeNames(a: DirectAnswer): string[] {
  return (a.nodes ?? []).map((n) => {
    const type = String(n["object_type_id"]);
    return `${type}:${String(n[`${type}_name`])}`;
  });
}

/** POST a JSON body over a keep-alive agent; the parsed answer, or an error naming the status. */
function postJson(agent: http.Agent, url: string, body: string): Promise<DirectAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { ...HEADERS, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 200)
            return reject(new Error(`POST ${url}: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
          try {
            resolve(JSON.parse(text) as DirectAnswer);
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** A signed difference in ms: "+1.23 ms", "-0.40 ms". */
function ms(us: number): string {
  return `${us >= 0 ? "+" : "-"}${(Math.abs(us) / 1000).toFixed(2)} ms`;
}
