/**
 * @context-loader/client from Node.js, over gRPC: each service once, then three mistakes (a missing field, a
 * wrong type, no account) decoded, each in English and Chinese, over gRPC and Connect.
 * Written as a project that installed the package writes it; .ci/client-typescript compiles it
 * against the packed package and runs it:
 *
 *   BASE_URL=http://127.0.0.1:8080 node example.js
 *
 * Prints what each call answered and exits 1 when an answer is not what the service should say.
 */
import { randomUUID } from "node:crypto";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, type ErrorDetails, errorDetails, KnowledgeRetrievalService } from "@context-loader/client";
import { createNodeClients } from "@context-loader/client/node";

const baseUrl = process.env["BASE_URL"] ?? "http://127.0.0.1:8080";
const run = randomUUID().slice(0, 8);
const problems: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) problems.push(what);
}
function show(what: string, value: unknown): void {
  console.log(`${what}: ${JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`);
}

// The account and the knowledge network, set once: every call carries x-account-id and x-kn-id.
const { knowledge, knowledgeTools, resolver, memRecall } = createNodeClients({
  baseUrl,
  protocol: "grpc",
  accountId: `ts-example-${run}`,
  knId: "kn_medical",
  defaultTimeoutMs: 30_000,
});

// Knowledge, two steps in one session: the schema a question needs, then the instances behind a keyword.
const sessionId = `ts-example-${run}`;
const schema = await knowledge.retrieveSchema({
  query: "上气道梗阻有哪些症状",
  knIds: [{ knowledgeNetworkId: "kn_medical" }],
  sessionId,
  topK: 5,
  compactFormat: false,
});
const types = schema.objectTypes.map((o) => o.conceptId);
show("RetrieveSchema object types", types);
check(types.includes("disease"), "RetrieveSchema: no disease object type");
const context = await knowledge.retrieveKeywordContext({
  query: "上气道梗阻",
  sessionId,
  objectTypeId: "disease",
  compactFormat: false,
});
const instances = context.keywordContext?.instances ?? [];
show("RetrieveKeywordContext instances", instances.length);
check(instances.length > 0, "RetrieveKeywordContext: no instances for 上气道梗阻");

// The platform's tools take the network from x-kn-id when kn_id is empty.
const found = await knowledgeTools.searchSchema({ query: "药企获批上市的药品数量", maxConcepts: 1 });
show(
  "SearchSchema object types",
  found.objectTypes.map((o) => o.conceptId),
);
check(
  found.objectTypes.some((o) => o.conceptId === "company"),
  "SearchSchema: no company object type",
);

// The resolver: a metric whose parameters the time words decide (no LLM needed).
const resolved = await resolver.resolveLogicProperties({
  knId: "kn_medical",
  otId: "company",
  query: "2025年2月这些企业上市了多少药品",
  uniqueIdentities: [{ company_id: "company_000001" }],
  properties: ["approved_drug_count"],
  additionalContext: "instant=true",
});
show("ResolveLogicProperties", resolved.datas[0]);
check(resolved.datas[0]?.["approved_drug_count"] !== undefined, "ResolveLogicProperties: no approved_drug_count");

// Memories: store one, find it, then watch a Recall stream, each event as it arrives.
await memRecall.storeMemory({
  memoryKey: "db_config_001",
  memoryType: "project_fact",
  summary: "生产环境 PostgreSQL 数据库配置",
  content: "host=pg-prod.internal port=5432 database=analytics",
});
const search = await memRecall.searchMemories({ query: "数据库配置" });
show(
  "SearchMemories",
  search.results.map((r) => r.memoryKey),
);
check(search.results[0]?.memoryKey === "db_config_001", "SearchMemories: db_config_001 not first");
const kinds: string[] = [];
let handedOff: string[] = [];
for await (const event of memRecall.recall({ messages: [{ role: "user", content: "按照我之前的数据库配置来" }] })) {
  kinds.push(event.event.case ?? "");
  if (event.event.case === "handoff") handedOff = event.event.value.relevantMemoryKeys;
}
show("Recall events", kinds);
check(kinds.at(-1) === "handoff" && handedOff.includes("db_config_001"), "Recall: no handoff with db_config_001");

// Mistakes, the ones the Python and Go examples make, each asked in English and in Chinese (the
// `language` header) and, where a typed client can make it, over gRPC and Connect JSON. Code, reason,
// fields and next step must be the same in every answer; each message must be in its language.
const han = /[\u3400-\u4dbf\u4e00-\u9fff]/; // a Chinese (Han) character
type Language = "en" | "zh";
type Attempt = [transport: string, call: (language: Language) => Promise<unknown>];

/** Makes one mistake once per transport and language, checks every answer (see above) and prints one line. */
async function sameError(what: string, attempts: Attempt[], code: Code, reason: string, fields: string[]) {
  const answers: { where: string; language: Language; d: ErrorDetails }[] = [];
  for (const [transport, call] of attempts) {
    for (const language of ["en", "zh"] as const) {
      const where = `${what} over ${transport} (${language})`;
      try {
        await call(language);
        problems.push(`${where}: succeeded`);
        return;
      } catch (err) {
        answers.push({ where, language, d: errorDetails(err) });
      }
    }
  }
  for (const { where, language, d } of answers) {
    const got = d.fieldViolations.map((v) => v.field);
    check(
      d.code === code && d.reason === reason && got.join() === fields.join(),
      `${where}: ${Code[d.code]} ${d.reason} fields [${got}], want ${Code[code]} ${reason} [${fields}]`,
    );
    check(/^[0-9a-f]{32}$/.test(d.traceId), `${where}: no trace id`);
    check((d.hint?.message ?? "") !== "", `${where}: no AgentHint`);
    check(
      d.hint?.nextRpc === answers[0]?.d.hint?.nextRpc,
      `${where}: AgentHint.next_rpc differs from the first answer's`,
    );
    // The same language over another transport: the same words.
    check(
      d.message === answers.find((a) => a.language === language)?.d.message,
      `${where}: another message: ${d.message}`,
    );
    const texts = [d.message, d.hint?.message ?? "", ...d.fieldViolations.map((v) => v.description)];
    if (language === "en") {
      check(!texts.some((t) => han.test(t)), `${where}: Chinese in ${JSON.stringify(texts)}`);
    } else {
      check(han.test(d.message) && han.test(d.hint?.message ?? ""), `${where}: no Chinese in ${JSON.stringify(texts)}`);
    }
  }
  const en = answers[0]?.d;
  const zh = answers[1]?.d;
  const next = en?.hint?.nextRpc ? ` next_rpc=${en.hint.nextRpc}` : "";
  const over = attempts.map(([transport]) => transport).join(", ");
  console.log(
    `${what} over ${over}: ${Code[code]} ${reason} fields=[${fields}]${next} | en: ${en?.message} (hint: ${en?.hint?.message}) | zh: ${zh?.message}`,
  );
  return en;
}

const connect = createNodeClients({ baseUrl, protocol: "connect", accountId: `ts-example-${run}` });
const language = (l: Language) => ({ headers: { language: l } });

await sameError(
  "missing field (RetrieveSchema without kn_ids)",
  [
    ["gRPC", (l) => knowledge.retrieveSchema({ query: "upper airway obstruction" }, language(l))],
    ["Connect", (l) => connect.knowledge.retrieveSchema({ query: "upper airway obstruction" }, language(l))],
  ],
  Code.InvalidArgument,
  "INVALID_ARGUMENT",
  ["kn_ids"],
);

// A typed client cannot send a string for an int32, so post the Connect JSON by hand, as a caller
// without the package does, and read the error body (`{code, message, details[{type, value}]}`).
async function postConnectJson(method: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(`${baseUrl}/${KnowledgeRetrievalService.typeName}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (res.ok) return res.json();
  const error = (await res.json()) as { code?: string; message?: string; details?: { type: string; value: string }[] };
  // "invalid_argument" -> Code.InvalidArgument
  const name = (error.code ?? "unknown").replace(/(?:^|_)([a-z])/g, (_m, c: string) => c.toUpperCase());
  const thrown = new ConnectError(error.message ?? "", Code[name as keyof typeof Code] ?? Code.Unknown, res.headers);
  // As a Connect client keeps them: errorDetails decodes each value by its type.
  thrown.details = (error.details ?? []).map((d) => ({ type: d.type, value: base64Decode(d.value) }));
  throw thrown;
}
await sameError(
  "wrong type (RetrieveSchema, top_k sent as a string)",
  [
    [
      "Connect JSON (fetch)",
      (l) =>
        postConnectJson(
          KnowledgeRetrievalService.method.retrieveSchema.name,
          { query: "upper airway obstruction", kn_ids: [{ knowledge_network_id: "kn_medical" }], top_k: "five" },
          { "x-account-id": `ts-example-${run}`, language: l },
        ),
    ],
  ],
  Code.InvalidArgument,
  "INVALID_ARGUMENT",
  ["top_k"],
);

const noAccount = await sameError(
  "no account (SearchMemories without x-account-id)",
  [
    [
      "gRPC",
      (l) => createNodeClients({ baseUrl }).memRecall.searchMemories({ query: "database settings" }, language(l)),
    ],
    [
      "Connect",
      (l) =>
        createNodeClients({ baseUrl, protocol: "connect" }).memRecall.searchMemories(
          { query: "database settings" },
          language(l),
        ),
    ],
  ],
  Code.Unauthenticated,
  "ACCOUNT_REQUIRED",
  [],
);
check(
  noAccount?.hint?.message.includes("x-account-id") === true,
  "no account: the AgentHint does not name x-account-id",
);

if (problems.length > 0) {
  console.error(`FAILED:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`ok: every service answered as expected at ${baseUrl}`);
