import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { decode } from "@toon-format/toon";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  KnowledgeToolsService,
  QueryObjectInstancesRequestSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import type { Json } from "../../../src/core/json";
import { compareValues } from "../../../src/kn/embedded/object-store";
import { clientWith } from "../../helpers/rpc";
import { startServer } from "../../helpers/server";
import { callFails, callOk, connectHttp, fieldsOf } from "../../mcp/mcp-client";
import { correctionsIn, withCorrection } from "./corrections";
import {
  type Backend,
  bundle,
  Code,
  expectNoInternalAddress,
  HEADERS,
  KN,
  rest,
  rpcFailure,
  startBackends,
  startRefusingPlatform,
  violationAt,
} from "./query-instances-helpers";

/**
 * QueryObjectInstances (query_object_instance) over the RPC and the anchor's
 * REST route, on the embedded engine and on the HTTP backend against the
 * simulator: the condition language checked against the object type before
 * the platform is called, projection, sort, real pagination with a cursor
 * bound to its query and a total, and the platform's refusals kept as what
 * they are.
 */

let env: Awaited<ReturnType<typeof startBackends>>;
const byName = new Map<string, Backend>();
beforeAll(async () => {
  env = await startBackends();
  for (const b of env.backends) byName.set(b.name, b);
});
afterAll(() => env.close());

const BACKENDS = ["embedded", "http (simulator)"];
const diseases = bundle.objects["disease"]!;
const names = (rows: { [k: string]: unknown }[]) => rows.map((r) => String(r["disease_name"]));
const like = (field: string, value: string) => ({
  operation: "and",
  sub_conditions: [{ field, operation: "like", value }],
});

/** The structured answer's rows as plain JSON. */
type Row = Record<string, Json>;

describe.each(BACKENDS)("QueryObjectInstances on the %s backend", (name) => {
  const backend = () => byName.get(name)!;
  /** The request as a JSON client writes it. */
  const query = (req: Record<string, unknown>, headers: Record<string, string> = {}) =>
    backend().client.queryObjectInstances(
      fromJson(QueryObjectInstancesRequestSchema, { kn_id: KN, ...req } as JsonValue),
      {
        headers,
      },
    );

  it("returns the first page of a filter: rows keep _instance_id, _instance_identity, _display, no object_type; the total is the count", async () => {
    const res = await query({ ot_id: "disease", condition: like("disease_name", "炎") });
    const expected = diseases.filter((d) => String(d["disease_name"]).includes("炎"));
    expect(res.totalCount).toBe(BigInt(expected.length));
    expect(res.datas).toHaveLength(10);
    for (const row of res.datas as Row[]) {
      expect(String(row["disease_name"])).toContain("炎");
      expect(row["_instance_id"]).toBe(`disease-${row["disease_id"]}`);
      expect(row["_instance_identity"]).toEqual({ disease_id: row["disease_id"] });
      expect(row["_display"]).toBe(row["disease_name"]);
      expect(row).not.toHaveProperty("object_type");
    }
    expect(res.nextCursor).not.toBe("");
    expect(res.message).toBe("");
  });

  it("walks every page with next_cursor to the end: each instance once, the total on every page equal to the count", async () => {
    const seen: string[] = [];
    let cursor = "";
    let pages = 0;
    let last: Awaited<ReturnType<typeof query>> | undefined;
    do {
      last = await query({ ot_id: "disease", limit: 37, cursor });
      expect(last.totalCount).toBe(BigInt(diseases.length));
      seen.push(...(last.datas as Row[]).map((r) => String(r["_instance_id"])));
      cursor = last.nextCursor;
      pages++;
    } while (cursor !== "" && pages < 50);
    expect(pages).toBe(Math.ceil(diseases.length / 37));
    expect(seen).toHaveLength(diseases.length);
    expect(new Set(seen).size).toBe(diseases.length);
    expect(last.message).toBe("This is the last page.");
  });

  it("pages a filtered, sorted query in order, ending with an empty cursor", async () => {
    const expected = diseases.filter((d) => String(d["disease_name"]).includes("炎")).length;
    const all: string[] = [];
    let cursor = "";
    do {
      const page = await query({
        ot_id: "disease",
        condition: like("disease_name", "炎"),
        sort: [{ field: "disease_name", direction: "desc" }],
        limit: 20,
        cursor,
      });
      all.push(...names(page.datas as Row[]));
      cursor = page.nextCursor;
    } while (cursor !== "");
    expect(all).toHaveLength(expected);
    for (let i = 1; i < all.length; i++) expect(compareValues(all[i - 1], all[i])).toBeGreaterThanOrEqual(0);
  });

  it("projects the properties asked for (identity and display always come back) and leaves the total out when need_total=false", async () => {
    const res = await query({ ot_id: "disease", properties: ["disease_name", "age"], need_total: false, limit: 3 });
    expect(res.totalCount).toBeUndefined();
    for (const row of res.datas as Row[]) {
      expect(Object.keys(row).sort()).toEqual([
        "_display",
        "_instance_id",
        "_instance_identity",
        "age",
        "disease_name",
      ]);
    }
  });

  it("filters with in, ranges on numbers, the = alias and instance ids (__id)", async () => {
    const ids = ["disease_004790", "disease_000241"];
    const inIds = await query({ ot_id: "disease", condition: { field: "disease_id", operation: "in", value: ids } });
    expect((inIds.datas as Row[]).map((r) => r["disease_id"]).sort()).toEqual([...ids].sort());

    const products = bundle.objects["drug_product"]!;
    const inRange = products.filter(
      (p) => Number(p["approval_date"]) >= 20200101 && Number(p["approval_date"]) < 20210101,
    );
    const ranged = await query({
      ot_id: "drug_product",
      condition: { field: "approval_date", operation: "range", value: [20200101, 20210101] },
      limit: 1000,
    });
    expect(ranged.totalCount).toBe(BigInt(inRange.length));
    expect(inRange.length).toBeGreaterThan(0);

    const alias = await query({ ot_id: "disease", condition: { field: "disease_id", operation: "=", value: ids[0] } });
    expect((alias.datas as Row[]).map((r) => r["disease_id"])).toEqual([ids[0]]);

    const byId = await query({
      ot_id: "disease",
      condition: { field: "__id", operation: "in", value: [`disease-${ids[1]}`] },
    });
    expect((byId.datas as Row[]).map((r) => r["disease_id"])).toEqual([ids[1]]);
  });

  it("says plainly when nothing matches (no failure): empty rows, total 0, why", async () => {
    const res = await query({
      ot_id: "disease",
      condition: { field: "disease_name", operation: "==", value: "没有这种病" },
    });
    expect(res.datas).toEqual([]);
    expect(res.totalCount).toBe(0n);
    expect(res.nextCursor).toBe("");
    expect(res.message).toContain("No 疾病 (disease) instance matches the condition");
  });

  it("adds the logic property cells with include_logic_params", async () => {
    const res = await query({ ot_id: "company", include_logic_params: true, limit: 1 });
    const row = (res.datas as Row[])[0]!;
    expect(row["approved_drug_count"]).toEqual({
      property_type: "metric",
      mapping_source_id: "metric_company_approved_drug_count",
      has_any_unfilled_params: true,
      parameters: { filters: [{ name: "company_id", operation: "=", value: row["company_id"]! }] },
      dynamic_params: { instant: null, start: null, end: null, step: null },
    });
    expect(row["business_health_score"]).toMatchObject({
      property_type: "operator",
      mapping_source_id: "op_business_health_score",
    });
    const plain = await query({ ot_id: "company", limit: 1 });
    expect((plain.datas as Row[])[0]).not.toHaveProperty("approved_drug_count");
  });

  it("takes the network from x-kn-id when kn_id is empty, and asks for one when neither is given", async () => {
    const viaHeader = await backend().client.queryObjectInstances(
      { otId: "symptom", limit: 1 },
      { headers: { "x-kn-id": KN } },
    );
    expect(viaHeader.datas).toHaveLength(1);
    const f = await rpcFailure(backend().client.queryObjectInstances({ otId: "symptom" }));
    expect(f.code).toBe(Code.InvalidArgument);
    expect(f.reason).toBe("KN_ID_REQUIRED");
  });

  it("answers the compact shape in text with output_format (json, yaml, toon), the cursor and total beside it", async () => {
    for (const [format, read] of [
      ["json", JSON.parse],
      ["yaml", parseYaml],
      ["toon", decode],
    ] as const) {
      const res = await query({
        ot_id: "disease",
        condition: like("disease_name", "炎"),
        limit: 2,
        output_format: format,
      });
      expect(res.datas).toEqual([]);
      expect(res.nextCursor).not.toBe("");
      const answer = read(res.text) as Record<string, unknown>;
      expect(answer["identity_keys"]).toBe("disease_id");
      expect(answer["next_cursor"]).toBe(res.nextCursor);
      expect(answer["total_count"]).toBe(Number(res.totalCount));
      const rows = answer["datas"] as Record<string, unknown>[];
      expect(rows).toHaveLength(2);
      expect(Object.keys(rows[0]!).slice(0, 3)).toEqual(["_instance_id", "_display", "disease_id"]);
    }
  });

  // --- errors: all found before the platform is called

  it("refuses an unknown object type with NOT_FOUND naming the network's types and the closest one", async () => {
    const f = await rpcFailure(query({ ot_id: "diseases" }));
    expect(f.code).toBe(Code.NotFound);
    expect(f.reason).toBe("OBJECT_TYPE_NOT_FOUND");
    expect(f.message).toContain("did you mean disease");
    expect(f.validValues).toContain("symptom");
    expect(f.nextRpc).toBe("contextloader.kntools.v1.KnowledgeToolsService/SearchSchema");
  });

  it("refuses an unknown network with NOT_FOUND", async () => {
    const f = await rpcFailure(query({ kn_id: "kn_nope", ot_id: "disease" }));
    expect(f.code).toBe(Code.NotFound);
    expect(f.reason).toBe("KNOWLEDGE_NETWORK_NOT_FOUND");
    expect(f.message).toBe("knowledge network kn_nope does not exist");
  });

  it("names the path, what the property allows and a corrected example for each problem of a condition, all at once", async () => {
    backend().sim?.clearRequests();
    const f = await rpcFailure(
      query({
        ot_id: "disease",
        condition: {
          operation: "and",
          sub_conditions: [
            { field: "name", operation: "like", value: "气道" },
            { field: "disease_name", operation: "match", value: "气道" },
            { field: "age", operation: "in", value: "儿童" },
            { operation: "or", sub_conditions: [{ field: "age", operation: "contains", value: "儿" }] },
          ],
        },
      }),
    );
    expect(f.code).toBe(Code.InvalidArgument);
    expect(f.reason).toBe("INVALID_CONDITION");
    expect(violationAt(f, "condition.sub_conditions[0].field")).toContain("did you mean disease_name");
    expect(violationAt(f, "condition.sub_conditions[1].operation")).toBe(
      "disease_name does not allow match; its condition_operations are: == != like not_like in not_in; use like instead",
    );
    expect(violationAt(f, "condition.sub_conditions[2].value")).toBe(
      'in needs a non-empty list of strings, numbers or booleans, not "儿童"',
    );
    expect(violationAt(f, "condition.sub_conditions[3].sub_conditions[0].operation")).toContain('did you mean "like"?');
    expect(f.hint).toContain(
      'condition.sub_conditions[1] = {"field":"disease_name","operation":"like","value":"气道"}',
    );
    expect(f.hint).toContain('condition.sub_conditions[2] = {"field":"age","operation":"in","value":["儿童"]}');
    expect(f.validValues).toEqual(["==", "!=", "like", "not_like", "in", "not_in"]);
    // Nothing reached the platform.
    expect(
      backend()
        .sim?.requests()
        .filter((r) => r.path.includes("/ontology-query/")) ?? [],
    ).toEqual([]);
  });

  it.each([
    [
      "a logic property as the field",
      "company",
      { field: "approved_drug_count", operation: "==", value: 1 },
      "condition.field",
      "is a logic property (metric) of company",
    ],
    [
      "a list for ==",
      "disease",
      { field: "age", operation: "==", value: ["儿童", "成人"] },
      "condition.value",
      "use in",
    ],
    [
      "no value",
      "disease",
      { field: "age", operation: "==" },
      "condition.value",
      "required by ==: a string, number or boolean",
    ],
    [
      "a value for exist",
      "drug_product",
      { field: "approval_date", operation: "exist", value: 1 },
      "condition.value",
      "exist takes none; leave it out",
    ],
    [
      "three bounds for range",
      "drug_product",
      { field: "approval_date", operation: "range", value: [1, 2, 3] },
      "condition.value",
      "range needs [low, high]",
    ],
    [
      "% wildcards in like",
      "disease",
      { field: "disease_name", operation: "like", value: "%气道%" },
      "condition.value",
      "drop the % wildcards",
    ],
    [
      "a value_from other than const",
      "disease",
      { field: "age", operation: "==", value: "儿童", value_from: "param" },
      "condition.value_from",
      'must be "const"',
    ],
    [
      "* with ==",
      "disease",
      { field: "*", operation: "==", value: "x" },
      "condition.field",
      '"*" (every property) is only for match, match_phrase, knn',
    ],
    [
      "match over * where no property allows it",
      "disease",
      { field: "*", operation: "match", value: "气道" },
      "condition.operation",
      "no data property of disease allows match",
    ],
    [
      "a knn limit that is none",
      "skills",
      { field: "name", operation: "knn", value: "急救", limit_key: "max_dist" },
      "condition.limit_key",
      "max_distance (distance at most limit_value; min_distance means the same)",
    ],
    [
      "limit_key on a non-knn leaf",
      "disease",
      { field: "age", operation: "==", value: "儿童", limit_key: "k" },
      "condition.limit_key",
      "only for knn",
    ],
    [
      "a field on a group",
      "disease",
      { operation: "and", field: "age", sub_conditions: [] },
      "condition.field",
      "an and group takes only sub_conditions",
    ],
    [
      "a missing field",
      "disease",
      { operation: "like", value: "气道" },
      "condition.field",
      "required by like: a data property of disease",
    ],
    [
      "__id with like",
      "disease",
      { field: "__id", operation: "like", value: "x" },
      "condition.operation",
      "__id (the instance id",
    ],
    [
      "a knn k out of range",
      "disease",
      { field: "*", operation: "knn", value: "气道", limit_key: "k", limit_value: 0 },
      "condition.limit_value",
      "k must be a whole number from 1 to 10000",
    ],
    [
      "fields on a leaf other than multi_match",
      "disease",
      { field: "age", operation: "==", value: "儿童", fields: ["age"] },
      "condition.fields",
      "only for multi_match",
    ],
  ])("refuses %s with a precise violation", async (_what, ot_id, condition, field, fragment) => {
    const f = await rpcFailure(query({ ot_id, condition }));
    expect(f.code).toBe(Code.InvalidArgument);
    expect(violationAt(f, field)).toContain(fragment);
  });

  it("takes knn's min_distance (the platform tool's spelling) as max_distance, which the platform is sent", async () => {
    backend().sim?.clearRequests();
    const skills = async (limit_key: string) => {
      const res = await query({
        ot_id: "skills",
        condition: { field: "name", operation: "knn", value: "急救指引", limit_key, limit_value: 0.8 },
        properties: ["skill_id"],
        limit: 100,
      });
      return (res.datas as Row[]).map((r) => r["skill_id"]);
    };
    const byMin = await skills("min_distance");
    // A bound, not k: some skills are within 0.8 of the text, not all.
    expect(byMin.length).toBeGreaterThan(0);
    expect(byMin.length).toBeLessThan(bundle.objects["skills"]!.length);
    expect(byMin).toContain("skill_airway_emergency");
    expect(byMin).toEqual(await skills("max_distance"));
    // The instance queries (the schema reads before them carry no body).
    const sent = (backend().sim?.requests() ?? []).flatMap((r) => {
      const body = r.body as { condition?: { limit_key?: string } } | undefined;
      return r.path.includes("/object-types/skills") && body?.condition ? [body.condition] : [];
    });
    if (backend().sim)
      expect(sent).toEqual([
        expect.objectContaining({ limit_key: "max_distance" }),
        expect.objectContaining({ limit_key: "max_distance" }),
      ]);
  });

  it("reports every mistake of a leaf at once, and corrects them together", async () => {
    const condition = { field: "name", operation: "contains", value: "气道" };
    const f = await rpcFailure(query({ ot_id: "disease", condition }));
    expect(f.violations.map((v) => v.field).sort()).toEqual(["condition.field", "condition.operation"]);
    expect(violationAt(f, "condition.field")).toContain("did you mean disease_name");
    expect(violationAt(f, "condition.operation")).toContain('"contains" is not an operation; did you mean "like"?');
    expect(correctionsIn(f.hint)).toEqual([
      { path: "condition", value: { field: "disease_name", operation: "like", value: "气道" } },
    ]);
    const retried = await query({ ot_id: "disease", condition: correctionsIn(f.hint)[0]!.value });
    expect(names(retried.datas as Row[]).every((n) => n.includes("气道"))).toBe(true);
  });

  it("offers only corrections that pass the same check: each, put in place and sent again, is accepted", async () => {
    const batch: [string, Record<string, unknown>][] = [
      ["disease", { field: "name", operation: "contains", value: "气道" }],
      ["disease", { field: "disease_name", operation: "exists" }],
      ["disease", { field: "disease_name", operation: "exist" }],
      ["disease", { operation: "OR" }],
      ["disease", { operation: "or" }],
      ["disease", { operation: "OR", sub_conditions: [{ field: "age", operation: "==", value: "儿童" }] }],
      ["disease", { field: "age", operation: "equals", value: ["儿童", "婴幼儿"] }],
      ["disease", { field: "disease_name", operation: "match", value: "%气道%" }],
      ["disease", { field: "disease_nam", operation: "in", value: "肺炎" }],
      ["disease", { operation: "and", field: "age", value: "儿童" }],
      ["disease", { field: "__id", operation: "like", value: "disease-disease_000001" }],
      ["disease", { field: "*", operation: "knn", value: "气道", limit_key: "min_distance" }],
      ["disease", { field: "period", operation: "gt", value: "2" }],
      [
        "disease",
        {
          operation: "and",
          sub_conditions: [
            { field: "age", operation: "==", value: "儿童", limit_key: "k" },
            { field: "approved_drug_count", operation: "==", value: 1 },
            { field: "disease_name", operation: "not_like", value: "%炎" },
          ],
        },
      ],
      ["skills", { field: "name", operation: "knn", value: "急救", limit_key: "topk", limit_value: 3 }],
      ["skills", { field: "nme", operation: "knnn", value: "急救", limit_value: 0 }],
      ["skills", { field: "description", operation: "multi_match", value: "急救" }],
      ["drug_product", { field: "approval_date", operation: "range", value: [1, 2, 3] }],
      ["drug_product", { field: "approval_date", operation: "exist", value: 1 }],
    ];
    let offered = 0;
    for (const [ot_id, condition] of batch) {
      const f = await rpcFailure(query({ ot_id, condition }));
      expect(f.code, JSON.stringify(condition)).toBe(Code.InvalidArgument);
      for (const { path, value } of correctionsIn(f.hint)) {
        offered++;
        const fixed = withCorrection("condition", condition, path, value);
        const again = await query({ ot_id, condition: fixed }).then(
          () => undefined,
          (err: unknown) => rpcFailure(Promise.reject(err)),
        );
        // Corrected in place, the node (and all below it) passes; other nodes may still have their own problems.
        const left = (again?.violations ?? []).filter((v) => v.field === path || v.field.startsWith(`${path}.`));
        expect(left, `${JSON.stringify(condition)} corrected as ${path} = ${JSON.stringify(value)}`).toEqual([]);
        if (path === "condition") expect(again, JSON.stringify(fixed)).toBeUndefined();
      }
    }
    expect(offered).toBeGreaterThanOrEqual(12);
    // Where no correction passes, none is offered: a property allowing no value-less operation, a group without members.
    for (const condition of [
      { field: "disease_name", operation: "exists" },
      { operation: "OR" },
      { operation: "or" },
    ]) {
      expect(correctionsIn((await rpcFailure(query({ ot_id: "disease", condition }))).hint)).toEqual([]);
    }
  });

  it("refuses more than 100 sub_conditions in a group and groups nested more than 10 deep", async () => {
    const many = Array.from({ length: 101 }, (_, i) => ({ field: "disease_id", operation: "==", value: `d${i}` }));
    const wide = await rpcFailure(query({ ot_id: "disease", condition: { operation: "or", sub_conditions: many } }));
    expect(violationAt(wide, "condition.sub_conditions")).toContain(
      "has 101 conditions; an and/or group takes at most 100",
    );

    let deep: Record<string, unknown> = { field: "age", operation: "==", value: "儿童" };
    for (let i = 0; i < 11; i++) deep = { operation: "and", sub_conditions: [deep] };
    const nested = await rpcFailure(query({ ot_id: "disease", condition: deep }));
    const path = `condition${".sub_conditions[0]".repeat(10)}`;
    expect(violationAt(nested, path)).toContain("nested more than 10 deep");
  });

  it("checks properties and sort against the object type", async () => {
    const f = await rpcFailure(
      query({
        ot_id: "company",
        properties: ["company_name", "approved_drug_count", "nme"],
        sort: [
          { field: "company_nam", direction: "desc" },
          { field: "company_id", direction: "up" },
        ],
      }),
    );
    expect(f.reason).toBe("INVALID_QUERY");
    expect(violationAt(f, "properties[1]")).toContain("is a logic property of company");
    expect(violationAt(f, "properties[2]")).toContain("is not a data property of company");
    expect(violationAt(f, "sort[0].field")).toContain("did you mean company_name");
    expect(violationAt(f, "sort[1].direction")).toBe('must be "asc" or "desc"');
  });

  it("refuses a binary request JSON cannot represent (a Value without a kind) as INVALID_ARGUMENT, not INTERNAL", async () => {
    const binary = createClient(
      KnowledgeToolsService,
      createConnectTransport({ baseUrl: backend().server.baseUrl, httpVersion: "1.1", useBinaryFormat: true }),
    );
    const f = await rpcFailure(
      binary.queryObjectInstances({
        knId: KN,
        otId: "disease",
        condition: { field: "age", operation: "==", value: create(ValueSchema) },
      }),
    );
    expect(f.code).toBe(Code.InvalidArgument);
    expect(violationAt(f, "request")).toContain("google.protobuf.Value must have a value");
  });

  it("refuses a limit out of 1..10000", async () => {
    for (const limit of [0, 10_001]) {
      const f = await rpcFailure(query({ ot_id: "disease", limit }));
      expect(violationAt(f, "limit")).toBe("must be from 1 to 10000");
    }
  });

  it("refuses a cursor that is not one, or that belongs to another object type, condition or sort", async () => {
    const first = await query({ ot_id: "disease", condition: like("disease_name", "炎"), limit: 5 });
    const cursor = first.nextCursor;
    const cases: [string, Record<string, unknown>, string][] = [
      ["garbage", { ot_id: "disease", cursor: "abc" }, "is not a cursor this service issued"],
      [
        "another object type",
        { ot_id: "symptom", cursor },
        "was issued for object type disease of kn_medical, not symptom",
      ],
      [
        "another condition",
        { ot_id: "disease", condition: like("disease_name", "痛"), cursor },
        "was issued for another condition or sort",
      ],
      ["no condition", { ot_id: "disease", cursor }, "was issued for another condition or sort"],
      [
        "another sort",
        { ot_id: "disease", condition: like("disease_name", "炎"), sort: [{ field: "age" }], cursor },
        "another condition or sort",
      ],
    ];
    for (const [what, req, fragment] of cases) {
      const f = await rpcFailure(query(req));
      expect(f.code, what).toBe(Code.InvalidArgument);
      expect(f.reason, what).toBe("INVALID_CURSOR");
      expect(violationAt(f, "cursor"), what).toContain(fragment);
    }
    // The same query continues, with another page size too.
    const next = await query({ ot_id: "disease", condition: like("disease_name", "炎"), limit: 7, cursor });
    expect(next.datas).toHaveLength(7);
  });
});

describe("POST /api/agent-retrieval/in/v1/kn/query_object_instance", () => {
  const server = () => byName.get("embedded")!.server;

  it("answers the anchor's {datas} plus total_count and next_cursor, kn_id and ot_id from the query string", async () => {
    const res = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "disease" },
      {
        condition: like("disease_name", "炎"),
        limit: 3,
        need_total: true,
        properties: ["disease_name"],
      },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["datas", "next_cursor", "total_count"]);
    expect(res.body.datas).toHaveLength(3);
    expect(Object.keys(res.body.datas[0]).sort()).toEqual([
      "_display",
      "_instance_id",
      "_instance_identity",
      "disease_name",
    ]);
  });

  it("reads the anchor's single sort object, limit 0 as the default 10, include_logic_params from the query string and kn_id from x-kn-id", async () => {
    const res = await rest(
      server(),
      "query_object_instance",
      { ot_id: "company", include_logic_params: "true" },
      { limit: 0, sort: { field: "company_name", direction: "desc" } },
      { ...HEADERS, "x-kn-id": KN },
    );
    expect(res.status).toBe(200);
    expect(res.body.datas).toHaveLength(10);
    expect(res.body.datas[0].approved_drug_count.property_type).toBe("metric");
    const namesDesc = res.body.datas.map((r: Row) => r["company_name"]);
    expect([...namesDesc].sort((a, b) => compareValues(b, a))).toEqual(namesDesc);
  });

  it("answers TOON (application/toon) or YAML with response_format, errors staying JSON", async () => {
    const toon = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "symptom", response_format: "toon" },
      { limit: 2 },
    );
    expect(toon.status).toBe(200);
    expect(toon.contentType).toBe("application/toon; charset=utf-8");
    expect((decode(toon.text) as { datas: unknown[] }).datas).toHaveLength(2);
    const yaml = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "symptom", response_format: "yaml" },
      { limit: 2 },
    );
    expect(yaml.contentType).toBe("application/yaml; charset=utf-8");
    expect((parseYaml(yaml.text) as { identity_keys: string }).identity_keys).toBe("symptom_id");
    const bad = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "nope", response_format: "toon" },
      {},
    );
    expect(bad.status).toBe(404);
    expect(bad.body.code).toBe("OBJECT_TYPE_NOT_FOUND");
  });

  it("answers errors in the anchor's envelope {code, description, solution, link, details}", async () => {
    const res = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "disease" },
      {
        condition: { field: "disease_name", operation: "match", value: "气道" },
      },
    );
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(["code", "description", "details", "link", "solution"]);
    expect(res.body.code).toBe("INVALID_CONDITION");
    expect(res.body.details.field_violations[0].field).toBe("condition.operation");
    expect(res.body.solution).toContain('condition = {"field":"disease_name","operation":"like","value":"气道"}');
    expect(res.body.details.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it("refuses search_after, unknown body keys, a missing ot_id and an unknown response_format", async () => {
    const sa = await rest(server(), "query_object_instance", { kn_id: KN, ot_id: "disease" }, { search_after: ["x"] });
    expect(sa.status).toBe(400);
    expect(sa.body.details.field_violations).toEqual([
      {
        field: "search_after",
        description: "not taken: pass the next_cursor of the previous page as cursor",
      },
    ]);
    const unknown = await rest(server(), "query_object_instance", { kn_id: KN, ot_id: "disease" }, { limt: 5 });
    expect(unknown.body.details.field_violations[0].field).toBe("limt");
    const misspelt = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "disease" },
      {
        condition: { field: "age", operation: "==", values: "儿童" },
      },
    );
    expect(misspelt.body.details.field_violations).toEqual([
      { field: "condition.values", description: 'Unrecognized key: "values"' },
    ]);
    const noOt = await rest(server(), "query_object_instance", { kn_id: KN }, {});
    expect(noOt.body.details.field_violations[0]).toEqual({
      field: "ot_id",
      description: "required: the object type to query (an object type id from search_schema)",
    });
    const format = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "disease", response_format: "xml" },
      {},
    );
    expect(format.status).toBe(400);
    expect(format.body.description).toContain('response_format: must be "json", "toon" or "yaml"');
  });

  it("pages over REST with the cursor in the body", async () => {
    const first = await rest(server(), "query_object_instance", { kn_id: KN, ot_id: "department" }, { limit: 30 });
    const second = await rest(
      server(),
      "query_object_instance",
      { kn_id: KN, ot_id: "department" },
      {
        limit: 30,
        cursor: first.body.next_cursor,
      },
    );
    const all = [...first.body.datas, ...second.body.datas].map((r: Row) => r["_instance_id"]);
    expect(new Set(all).size).toBe(bundle.objects["department"]!.length);
    expect(second.body.next_cursor).toBe("");
    expect(second.body.total_count).toBe(bundle.objects["department"]!.length);
  });
});

describe("the platform's own refusals (HTTP backend)", () => {
  let platform: Awaited<ReturnType<typeof startRefusingPlatform>>;
  let server: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    platform = await startRefusingPlatform(byName.get("http (simulator)")!.sim!);
    server = await startServer({
      ONTOLOGY_MANAGER_URL: platform.url,
      ONTOLOGY_QUERY_URL: platform.url,
      LOG_LEVEL: "silent",
    });
  });
  afterAll(async () => {
    await server.close();
    await platform.close();
  });
  const request = (condition: JsonValue) =>
    fromJson(QueryObjectInstancesRequestSchema, { kn_id: KN, ot_id: "disease", condition });
  const call = () =>
    clientWith(KnowledgeToolsService, server.baseUrl, HEADERS).queryObjectInstances(
      request({ field: "disease_name", operation: "like", value: "气道" }),
    );

  it.each([
    [400, Code.InvalidArgument, "UPSTREAM_INVALID_ARGUMENT", "rejected"],
    [404, Code.NotFound, "UPSTREAM_NOT_FOUND", "has no such thing"],
    [409, Code.FailedPrecondition, "UPSTREAM_FAILED_PRECONDITION", "cannot do"],
  ])(
    "keeps a %i as what it is, with the platform's error code and fields, none of its text",
    async (status, code, reason, words) => {
      platform.answer(status, {
        error_code: "OntologyQuery.InvalidParameter.Condition",
        description: "field disease_name has no keyword index (see http://10.0.0.7:13018/api/ontology-query/in/v1/x)",
        solution: "Use another operation.",
        error_details: [{ field: "condition.field", description: "not indexed" }],
      });
      const f = await rpcFailure(call());
      expect(f.code).toBe(code);
      expect(f.reason).toBe(reason);
      expect(f.message).toContain(words);
      expect(f.message).toContain("OntologyQuery.InvalidParameter.Condition");
      expect(f.message).toContain("condition.field");
      expect(f.message).not.toContain("dependency");
      expect(f.metadata["error_code"]).toBe("OntologyQuery.InvalidParameter.Condition");
      expect(f.violations).toEqual([
        {
          field: "condition.field",
          description: "ontology-query rejected this field (OntologyQuery.InvalidParameter.Condition)",
        },
      ]);
      const told = `${f.message} ${f.hint} ${JSON.stringify(f.metadata)} ${JSON.stringify(f.violations)}`;
      for (const text of ["has no keyword index", "Use another operation", "not indexed"])
        expect(told).not.toContain(text);
      expectNoInternalAddress(told);
    },
  );

  it("reports a 5xx as UNAVAILABLE (retryable) without the internal path, in the REST envelope too", async () => {
    platform.answer(503, { error_code: "OntologyQuery.ServiceUnavailable", description: "overloaded" });
    const f = await rpcFailure(call());
    expect(f.code).toBe(Code.Unavailable);
    expect(f.message).toContain("retrying in a moment may help");
    expectNoInternalAddress(`${f.message} ${f.hint}`);
    const res = await rest(server, "query_object_instance", { kn_id: KN, ot_id: "disease" }, {});
    expect(res.status).toBe(503);
    expect(res.body.details.upstream_error_code).toBe("OntologyQuery.ServiceUnavailable");
    expectNoInternalAddress(res.text);
  });

  it("never calls the platform's instance query for a condition it can refuse itself", async () => {
    platform.requests.length = 0;
    const f = await rpcFailure(
      clientWith(KnowledgeToolsService, server.baseUrl, HEADERS).queryObjectInstances(
        request({ field: "disease_name", operation: "match", value: "气道" }),
      ),
    );
    expect(f.reason).toBe("INVALID_CONDITION");
    expect(platform.requests.filter((r) => r.startsWith("POST"))).toEqual([]);
  });
});

describe("query_object_instance over MCP", () => {
  let client: Awaited<ReturnType<typeof connectHttp>>;
  beforeAll(async () => {
    client = await connectHttp(byName.get("embedded")!.server.baseUrl, { ...HEADERS, "x-kn-id": KN });
  });
  afterAll(() => client.close());

  it("publishes the condition as a recursive JSON Schema showing the operations and the value each takes", async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "query_object_instance")!;
    expect(tool.description).toContain("_instance_identity");
    expect(tool.description).toContain("get_logic_properties_values");
    expect(tool.inputSchema.required).toEqual(["ot_id"]);
    const defs = tool.inputSchema["$defs"] as Record<string, { oneOf: { properties: Record<string, unknown> }[] }>;
    const variants = defs["Condition"]!.oneOf;
    const variantOf = (op: string) =>
      variants.find((v) => JSON.stringify(v.properties["operation"]).includes(`"${op}"`))!.properties;
    expect(variantOf("and")["sub_conditions"]).toEqual({
      type: "array",
      maxItems: 100,
      items: { $ref: "#/$defs/Condition" },
    });
    expect(variantOf("in")["value"]).toMatchObject({ type: "array", minItems: 1 });
    expect(variantOf("range")["value"]).toMatchObject({ type: "array", minItems: 2, maxItems: 2 });
    expect(variantOf("knn")["limit_key"]).toMatchObject({ enum: ["k", "min_score", "max_distance", "min_distance"] });

    // A JSON Schema validator (what an MCP client may run) accepts good conditions and refuses malformed ones.
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(tool.inputSchema);
    const withCondition = (condition: unknown) => validate({ ot_id: "disease", condition });
    expect(withCondition({ operation: "and", sub_conditions: [] })).toBe(true);
    expect(
      withCondition({
        operation: "or",
        sub_conditions: [
          { field: "age", operation: "in", value: ["儿童"] },
          { operation: "and", sub_conditions: [{ field: "disease_name", operation: "exist" }] },
        ],
      }),
    ).toBe(true);
    expect(withCondition({ field: "age", operation: "in", value: "儿童" })).toBe(false);
    expect(withCondition({ field: "age", operation: "exist", value: 1 })).toBe(false);
    expect(withCondition({ operation: "and" })).toBe(false);
    expect(
      withCondition({ field: "name", operation: "knn", value: "急救", limit_key: "min_distance", limit_value: 0.5 }),
    ).toBe(true);
    expect(withCondition({ field: "age", operation: "contains", value: "儿" })).toBe(false);
  });

  it("answers TOON rows with the identity keys, the total and the cursor (the network from x-kn-id)", async () => {
    const a = await callOk(client, "query_object_instance", {
      ot_id: "disease",
      condition: { field: "disease_name", operation: "like", value: "炎" },
      limit: 3,
    });
    expect(a["identity_keys"]).toBe("disease_id");
    expect(a["datas"]).toHaveLength(3);
    expect(a["total_count"]).toBe(diseases.filter((d) => String(d["disease_name"]).includes("炎")).length);
    const next = await callOk(client, "query_object_instance", {
      ot_id: "disease",
      condition: { field: "disease_name", operation: "like", value: "炎" },
      limit: 3,
      cursor: a["next_cursor"],
      response_format: "json",
    });
    const ids = (rows: unknown) => (rows as Record<string, string>[]).map((r) => r["_instance_id"]);
    expect(ids(next["datas"])).not.toContain(ids(a["datas"])[0]);
  });

  it("fails with the path, the allowed operations and the corrected condition for the agent to retry", async () => {
    const e = await callFails(client, "query_object_instance", {
      ot_id: "disease",
      condition: { operation: "and", sub_conditions: [{ field: "disease_name", operation: "match", value: "气道" }] },
    });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.reason).toBe("INVALID_CONDITION");
    expect(fieldsOf(e)).toEqual(["condition.sub_conditions[0].operation"]);
    expect(e.valid_values).toEqual(["==", "!=", "like", "not_like", "in", "not_in"]);
    expect(e.next_step).toContain(
      'condition.sub_conditions[0] = {"field":"disease_name","operation":"like","value":"气道"}',
    );
  });

  it.each(BACKENDS)(
    "names both mistakes of a leaf and offers a correction the tool accepts, with knn's min_distance taken (%s)",
    async (name) => {
      const mcp = await connectHttp(byName.get(name)!.server.baseUrl, { ...HEADERS, "x-kn-id": KN });
      try {
        const e = await callFails(mcp, "query_object_instance", {
          ot_id: "disease",
          condition: { field: "name", operation: "contains", value: "气道" },
        });
        expect(fieldsOf(e).sort()).toEqual(["condition.field", "condition.operation"]);
        const [fix] = correctionsIn(e.next_step ?? "");
        expect(fix).toEqual({ path: "condition", value: { field: "disease_name", operation: "like", value: "气道" } });
        const retried = await callOk(mcp, "query_object_instance", {
          ot_id: "disease",
          condition: fix!.value,
          response_format: "json",
        });
        expect((retried["datas"] as Row[]).length).toBeGreaterThan(0);
        // No correction that would itself be refused.
        const none = await callFails(mcp, "query_object_instance", {
          ot_id: "disease",
          condition: { field: "disease_name", operation: "exists" },
        });
        expect(correctionsIn(none.next_step ?? "")).toEqual([]);
        const knn = await callOk(mcp, "query_object_instance", {
          ot_id: "skills",
          condition: {
            field: "name",
            operation: "knn",
            value: "急救指引",
            limit_key: "min_distance",
            limit_value: 0.8,
          },
          response_format: "json",
        });
        expect(knn["datas"]).toContainEqual(expect.objectContaining({ skill_id: "skill_airway_emergency" }));
      } finally {
        await mcp.close();
      }
    },
  );
});
