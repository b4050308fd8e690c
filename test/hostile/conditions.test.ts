import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentHintSchema } from "../../gen/contextloader/common/v1/errors_pb";
import {
  KnowledgeToolsService,
  QueryObjectInstancesRequestSchema,
} from "../../gen/contextloader/kntools/v1/kntools_pb";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { parseBundle } from "../../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../../src/kn/embedded/engine";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";
import { healthBoundMs, type Polled, withHealthPoll } from "./conditions-health-poll";

/**
 * Conditions written to hurt (issue 20 §1), through QueryObjectInstances on
 * a started service: a backtracking regex, patterns RE2 cannot run, a
 * condition of 20,000 leaves and a scan too broad for one call. Each is
 * answered — matched or refused with what to change — within 1 s on an idle
 * machine (bounded here at ANSWER_MS), while /healthz, polled beside it, keeps
 * answering (within healthBoundMs: 400 ms, or 4 × its slowest before the call
 * on a loaded machine).
 */

const HEADERS = { "x-account-id": "u-hostile", "x-account-type": "user" };
const REST = "/api/agent-retrieval/in/v1/kn/query_object_instance";
/**
 * The 1 s, with room for a loaded two-core machine: a backtracking
 * engine on these texts, or a condition parsed before it is measured, takes
 * far longer (minutes for (a+)+$ on 5,000 a's).
 */
const ANSWER_MS = 5000;

/** A network of its own: long texts for the classic backtracking patterns, and many rows for the scan budget. */
const KN = "hostile_kn";
const LONG_ROWS = 200;
const MANY_ROWS = 25_000;
/** The hostile server's EMBEDDED_SCAN_BUDGET: a tenth of the default, for a tenth of its rows (a smaller heap to collect). */
const SCAN_BUDGET = 2_000_000;
const hostileBundle = parseBundle(
  {
    knowledge_network: { id: KN, name: "hostile" },
    object_types: [
      {
        id: "doc",
        name: "doc",
        primary_keys: ["id"],
        display_key: "title",
        // No condition_operations: the defaults of varchar, regex among them.
        data_properties: [
          { name: "id", type: "integer" },
          { name: "title", type: "varchar" },
          { name: "body", type: "varchar" },
        ],
      },
      {
        id: "item",
        name: "item",
        primary_keys: ["id"],
        display_key: "code",
        data_properties: [
          { name: "id", type: "integer" },
          { name: "code", type: "varchar" },
          { name: "group", type: "varchar" },
        ],
      },
    ],
    objects: {
      doc: Array.from({ length: LONG_ROWS }, (_, i) => ({
        id: i,
        title: `doc ${i}`,
        // Thousands of a's and no b or end the patterns want: the worst case of a backtracking engine.
        body: `${"a".repeat(5000 + i)}${i % 2 === 0 ? "!" : "c"}`,
      })),
      item: Array.from({ length: MANY_ROWS }, (_, i) => ({ id: i, code: `c-${i}`, group: `g${i % 1000}` })),
    },
  },
  "the hostile test bundle",
);

let sample: TestServer;
let hostile: TestServer;
beforeAll(async () => {
  [sample, hostile] = await Promise.all([
    startServer({ LOG_LEVEL: "silent" }),
    // JSON_MAX_VALUES raised so that the conditions' own limits are what refuse them here
    // (a body past JSON_MAX_VALUES is refused before it is parsed: json-shape.test.ts).
    startServer(
      { LOG_LEVEL: "silent", JSON_MAX_VALUES: "1000000" },
      { backend: new EmbeddedBackend([hostileBundle], { timeZone: "UTC", scanBudget: SCAN_BUDGET }) },
    ),
  ]);
  // A first call of each kind, so that what is measured is the call, not code loaded and compiled on first use.
  await query(sample, { kn_id: "kn_medical", ot_id: "drug_product_new", condition: regex("drug_name", "^颈") });
  await query(hostile, { kn_id: KN, ot_id: "doc", condition: regex("title", "^doc 1$") });
}, 60_000);
afterAll(async () => {
  await Promise.all([sample?.close(), hostile?.close()]);
});

function query(server: TestServer, req: Record<string, unknown>) {
  const client = clientWith(KnowledgeToolsService, server.baseUrl, HEADERS);
  return client.queryObjectInstances(fromJson(QueryObjectInstancesRequestSchema, req as JsonValue));
}

const regex = (field: string, value: string) => ({ field, operation: "regex", value });

/** A refusal as an agent reads it. */
function refusal(error: unknown) {
  expect(error).toBeInstanceOf(ConnectError);
  const err = error as ConnectError;
  return {
    code: err.code,
    message: err.rawMessage,
    reason: err.findDetails(ErrorInfoSchema)[0]?.reason ?? "",
    violations: err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => [v.field, v.description]) ?? [],
    hint: err.findDetails(AgentHintSchema)[0]?.message ?? "",
  };
}

/** The bounds: answered within ANSWER_MS, /healthz answering meanwhile. */
function expectBounded(p: Polled<unknown>): void {
  // No poll began while the call ran only when it was too short to hold /healthz past the bound (a refusal
  // answered at once, while a poll sent before it was still out on a loaded machine).
  expect(p.polls > 0 || p.tookMs < healthBoundMs(p), `no /healthz poll in ${p.tookMs} ms`).toBe(true);
  expect(p.tookMs).toBeLessThan(ANSWER_MS);
  expect(p.worstHealthMs).toBeLessThan(healthBoundMs(p));
}

describe("a backtracking regular expression", () => {
  it("answers the issue's ^(?:.|.){28}Z on drug_product_new's 英文名称/拉丁名 promptly, /healthz answering meanwhile", async () => {
    const p = await withHealthPoll(sample, () =>
      query(sample, {
        kn_id: "kn_medical",
        ot_id: "drug_product_new",
        condition: regex("英文名称/拉丁名", "^(?:.|.){28}Z"),
      }),
    );
    expectBounded(p);
    // Matched, not refused: no Latin name there has a Z as its 29th character.
    expect(p.outcome).toMatchObject({ ok: true });
    expect(p.outcome.ok && p.outcome.value.totalCount).toBe(0n);
  });

  it("keeps the usual meaning of a pattern: anchors, Unicode, \\u escapes", async () => {
    const res = await query(sample, {
      kn_id: "kn_medical",
      ot_id: "drug_product_new",
      condition: regex("drug_name", "^[\\u4e00-\\u9fa5]+颗粒$"),
      limit: 100,
    });
    expect(res.datas.length).toBeGreaterThan(0);
    for (const row of res.datas) expect(String(row["drug_name"])).toMatch(/^[\u4e00-\u9fa5]+颗粒$/u);
  });

  it.each([
    ["(a+)+$", 0],
    ["(a|aa)+b", 0],
    ["^(a|a)*c$", LONG_ROWS / 2],
  ])("answers %s over %d texts of 5,000 a's promptly, /healthz answering meanwhile", async (pattern, expected) => {
    const p = await withHealthPoll(hostile, () =>
      query(hostile, { kn_id: KN, ot_id: "doc", condition: regex("body", pattern), limit: 1 }),
    );
    expectBounded(p);
    expect(p.outcome.ok && p.outcome.value.totalCount).toBe(BigInt(expected));
  });
});

describe("patterns RE2 cannot run", () => {
  it.each([
    ["(\\w)\\1", "backreference"],
    ["(?<n>a)\\k<n>", "backreference"],
    ["a(?=b)", "lookahead"],
    ["(?<!x)a", "lookbehind"],
  ])(
    "refuses %s with INVALID_ARGUMENT at the condition's value, naming what is unsupported and RE2",
    async (pattern, what) => {
      const sub = {
        operation: "and",
        sub_conditions: [{ field: "title", operation: "exist" }, regex("body", pattern)],
      };
      const p = await withHealthPoll(hostile, () => query(hostile, { kn_id: KN, ot_id: "doc", condition: sub }));
      expectBounded(p);
      expect(p.outcome.ok).toBe(false);
      const f = refusal(!p.outcome.ok && p.outcome.error);
      expect(f.code).toBe(Code.InvalidArgument);
      expect(f.reason).toBe("INVALID_CONDITION");
      const [field, description] = f.violations[0]!;
      expect(field).toBe("condition.sub_conditions[1].value");
      expect(description).toContain(what);
      expect(description).toContain("RE2 syntax");
    },
  );

  it("refuses a pattern longer than 512 characters, naming the limit", async () => {
    const f = await query(hostile, {
      kn_id: KN,
      ot_id: "doc",
      condition: regex("body", "a?".repeat(300)),
    }).then(
      () => undefined,
      (err: unknown) => refusal(err),
    );
    expect(f?.code).toBe(Code.InvalidArgument);
    expect(f?.violations).toEqual([["condition.value", expect.stringContaining("at most 512 characters")]]);
  });
});

describe("a condition of 20,000 leaves", () => {
  // Two groups of a hundred groups of a hundred leaves: within every per-group limit, 20,000 leaves in all.
  const leaf = { field: "code", operation: "==", value: "c-1" };
  const huge = {
    operation: "or",
    sub_conditions: Array.from({ length: 2 }, () => ({
      operation: "and",
      sub_conditions: Array.from({ length: 100 }, () => ({
        operation: "or",
        sub_conditions: Array.from({ length: 100 }, () => leaf),
      })),
    })),
  };

  it("is refused on the REST route promptly naming the leaf limit, /healthz answering meanwhile", async () => {
    const body = JSON.stringify({ condition: huge });
    const p = await withHealthPoll(hostile, async () => {
      const res = await fetch(`${hostile.baseUrl}${REST}?kn_id=${KN}&ot_id=item`, {
        method: "POST",
        headers: { "content-type": "application/json", ...HEADERS },
        body,
      });
      return { status: res.status, text: await res.text() };
    });
    expectBounded(p);
    expect(p.outcome.ok && p.outcome.value.status).toBe(400);
    expect(p.outcome.ok && p.outcome.value.text).toContain("has more than 1000 leaf conditions");
  });

  it("is refused over RPC with INVALID_ARGUMENT naming the leaf limit", async () => {
    // Unbounded in time here: the RPC decodes all 20,000 messages before any handler runs (a quarter of a
    // second on an idle machine); what the handler adds is refusing before the condition is parsed.
    const f = await query(hostile, { kn_id: KN, ot_id: "item", condition: huge }).then(
      () => undefined,
      (err: unknown) => refusal(err),
    );
    expect(f?.code).toBe(Code.InvalidArgument);
    expect(f?.violations).toEqual([["condition", expect.stringContaining("more than 1000 leaf conditions")]]);
  });

  it("is refused when nested 50 deep, naming the depth limit", async () => {
    let deep: Record<string, unknown> = leaf;
    for (let i = 0; i < 50; i++) deep = { operation: "and", sub_conditions: [deep] };
    const f = await query(hostile, { kn_id: KN, ot_id: "item", condition: deep }).then(
      () => undefined,
      (err: unknown) => refusal(err),
    );
    expect(f?.code).toBe(Code.InvalidArgument);
    expect(f?.violations).toEqual([["condition", expect.stringContaining("nested more than 10 deep")]]);
  });
});

describe("the scan budget", () => {
  // 25,000 rows checked by 100 leaves each: 2.5 million row checks, past the budget of 2 million.
  const broad = {
    operation: "and",
    sub_conditions: Array.from({ length: 100 }, (_, i) => ({ field: "code", operation: "!=", value: `x-${i}` })),
  };

  it("refuses a scan too broad for one call with RESOURCE_EXHAUSTED saying what to narrow, promptly", async () => {
    const p = await withHealthPoll(hostile, () => query(hostile, { kn_id: KN, ot_id: "item", condition: broad }));
    expectBounded(p);
    expect(p.outcome.ok).toBe(false);
    const f = refusal(!p.outcome.ok && p.outcome.error);
    expect(f.code).toBe(Code.ResourceExhausted);
    expect(f.reason).toBe("SCAN_BUDGET_EXCEEDED");
    expect(f.message).toContain("item");
    expect(f.message).toContain("rows scanned × condition leaves");
    expect(f.hint).toContain("put an indexed leaf (==, in, like");
  });

  it("answers the same leaves once an indexed leaf narrows the rows they check, as the hint says", async () => {
    const narrowed = { operation: "and", sub_conditions: [{ field: "group", operation: "==", value: "g7" }, broad] };
    const res = await query(hostile, { kn_id: KN, ot_id: "item", condition: narrowed });
    expect(res.totalCount).toBe(BigInt(MANY_ROWS / 1000));
  });

  it("scans within the budget in slices: 60 leaves over 25,000 rows keep /healthz answering", async () => {
    const within = { operation: "and", sub_conditions: broad.sub_conditions.slice(0, 60) };
    const p = await withHealthPoll(hostile, () => query(hostile, { kn_id: KN, ot_id: "item", condition: within }));
    expect(p.worstHealthMs).toBeLessThan(healthBoundMs(p));
    // In slices, whatever the machine's load: /healthz waits a slice (or the machine's own stalls, seen before
    // the call), not most of the scan, as it does when the scan holds the loop (seen: 365 ms of 395).
    expect(p.worstHealthMs).toBeLessThan(Math.max(4 * p.baselineWorstMs, p.tookMs / 2));
    expect(p.outcome.ok && p.outcome.value.totalCount).toBe(BigInt(MANY_ROWS));
  });
});
