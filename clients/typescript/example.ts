/**
 * @context-loader/client from Node.js, over gRPC: each service once, then two mistakes decoded.
 * Written as a project that installed the package writes it; .ci/client-typescript compiles it
 * against the packed package and runs it:
 *
 *   BASE_URL=http://127.0.0.1:8080 node example.js
 *
 * Prints what each call answered and exits 1 when an answer is not what the service should say.
 */
import { randomUUID } from "node:crypto";
import { Code, errorDetails } from "@context-loader/client";
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
  query: "上个月这些企业上市了多少药品",
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

// Mistakes: a missing field, then no account. Each error's details decoded.
try {
  await memRecall.searchMemories({ query: "" });
  problems.push("SearchMemories with an empty query succeeded");
} catch (err) {
  const d = errorDetails(err);
  show("missing field", { code: Code[d.code], reason: d.reason, fields: d.fieldViolations, hint: d.hint?.message });
  check(d.code === Code.InvalidArgument, "missing field: not INVALID_ARGUMENT");
  check(d.fieldViolations.map((v) => v.field).join() === "query", "missing field: the violation does not name query");
  check(/^[0-9a-f]{32}$/.test(d.traceId), "missing field: no trace id");
}
try {
  await createNodeClients({ baseUrl }).memRecall.searchMemories({ query: "数据库配置" });
  problems.push("SearchMemories without an account succeeded");
} catch (err) {
  const d = errorDetails(err);
  show("no account", { code: Code[d.code], reason: d.reason, hint: d.hint?.message });
  check(d.code === Code.Unauthenticated && d.reason === "ACCOUNT_REQUIRED", "no account: not ACCOUNT_REQUIRED");
}

if (problems.length > 0) {
  console.error(`FAILED:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`ok: every service answered as expected at ${baseUrl}`);
