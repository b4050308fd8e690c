import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../src/core/json";
import { ToolError } from "../../src/errors/tool-error";
import type { KnowledgeNetworkBackend } from "../../src/kn/backend";
import type { Condition, ObjectQuery, PathEdge, Row } from "../../src/kn/types";
import { testContext } from "../helpers/call-context";

/** The first instant of a month in Asia/Shanghai, as the fixture's metric series use. */
export const shanghaiMonth = (year: number, month: number) => Date.UTC(year, month - 1, 1) - 8 * 3600_000;

/** Awaits a call that must fail and returns its ToolError. */
export async function failureOf(call: Promise<unknown>): Promise<ToolError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a ToolError, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ToolError);
  return outcome.error as ToolError;
}

const KN = "kn_mini";
const ctx = testContext();
const ids = (rows: { _instance_id: string }[]) => rows.map((r) => r._instance_id);
const eq = (field: string, value: Json): Condition => ({ field, operation: "==", value, value_from: "const" });
const edge = (relation_type_id: string, source_object_type_id: string, target_object_type_id: string): PathEdge => ({
  relation_type_id,
  source_object_type_id,
  target_object_type_id,
});
const relationsOf = (entry: {
  relation_paths: { relations: { source_object_id: string; relation_type_id: string; target_object_id: string }[] }[];
}) =>
  entry.relation_paths.map((p) =>
    p.relations.map((r) => `${r.source_object_id} -${r.relation_type_id}-> ${r.target_object_id}`).join(" | "),
  );

/**
 * The knowledge-network backend's contract, run against every implementation
 * (the embedded engine directly, the HTTP clients against the simulator) over
 * test/fixtures/mini-bundle.ts. What passes here behaves the same for every
 * caller, whichever backend is configured.
 */
export function describeKnowledgeBackendContract(
  name: string,
  setup: () => Promise<{ backend: KnowledgeNetworkBackend; teardown(): Promise<void> }>,
): void {
  describe(`knowledge network backend contract: ${name}`, () => {
    let backend: KnowledgeNetworkBackend;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ backend, teardown } = await setup());
    });
    afterAll(() => teardown());

    const query = (objectTypeId: string, q: ObjectQuery) => backend.queryObjects(ctx, KN, objectTypeId, q);
    // A violation's words: the engine's own; over HTTP the platform's text stays in the log (the field is what the caller gets).
    // A violation's words in both languages; the English is checked on the engine (over HTTP the platform's words stay in the log).
    const saying = (text: string) =>
      backend.kind === "http"
        ? { en: expect.any(String), zh: expect.any(String) }
        : { en: expect.stringContaining(text), zh: expect.any(String) };
    const diseases = async (condition: Condition) => ids((await query("disease", { condition, limit: 100 })).datas);

    describe("knowledge networks", () => {
      it("lists kn_mini with its name and the total", async () => {
        expect(await backend.listKnowledgeNetworks(ctx, {})).toEqual({
          entries: [{ id: KN, name: "迷你医疗网络", comment: "tests", tags: [] }],
          total_count: 1,
        });
      });

      it("filters the list by name_pattern", async () => {
        expect((await backend.listKnowledgeNetworks(ctx, { name_pattern: "医疗" })).entries.map((k) => k.id)).toEqual([
          KN,
        ]);
        expect(await backend.listKnowledgeNetworks(ctx, { name_pattern: "金融" })).toEqual({
          entries: [],
          total_count: 0,
        });
      });

      it("returns a network with its object, relation and action types", async () => {
        const kn = await backend.getKnowledgeNetwork(ctx, KN);
        expect(kn.name).toBe("迷你医疗网络");
        expect(kn.object_types.map((t) => t.id)).toEqual(["disease", "symptom", "drug-product", "company"]);
        expect(kn.relation_types).toContainEqual({
          id: "has_complication",
          name: "并发症",
          comment: "",
          source_object_type_id: "disease",
          target_object_type_id: "disease",
        });
        expect(kn.relation_types.find((r) => r.id === "produces")).toMatchObject({
          source_object_type_id: "company",
          target_object_type_id: "drug-product",
        });
        expect(kn.action_types).toEqual([
          {
            id: "recall",
            name: "药品召回",
            action_type: "modify",
            object_type_id: "drug-product",
            comment: "",
            tags: ["召回"],
          },
        ]);
      });

      it("answers NOT_FOUND for an unknown network", async () => {
        const err = await failureOf(backend.getKnowledgeNetwork(ctx, "kn_unknown"));
        expect(err.code).toBe("not_found");
        expect(err.message).toContain("kn_unknown");
      });
    });

    describe("getObjectTypes", () => {
      it("returns the definitions in the order asked, logic properties included", async () => {
        const [company, product] = await backend.getObjectTypes(ctx, KN, ["company", "drug-product"]);
        expect(company!.id).toBe("company");
        expect(company!.primary_keys).toEqual(["company_id"]);
        expect(company!.logic_properties.map((p) => [p.name, p.type, p.data_source.id])).toEqual([
          ["approved_drug_count", "metric", "metric_company_approved_drug_count"],
          ["business_health_score", "operator", "op_business_health_score"],
        ]);
        const operator = company!.logic_properties[1]!;
        expect(operator.parameters.find((p) => p.name === "weights")).toMatchObject({
          type: "OBJECT",
          value_from: "input",
          source: "body",
        });
        expect(operator.parameters.find((p) => p.name === "model_version")).toMatchObject({
          value_from: "const",
          value: "v2",
          source: "query",
        });
        const metric = company!.logic_properties[0]!;
        expect(metric.parameters.find((p) => p.name === "company_id")).toMatchObject({
          value_from: "property",
          value: "company_id",
          operation: "=",
        });
        expect(product!.id).toBe("drug-product");
        expect(product!.primary_keys).toEqual(["drug_id", "form"]);
        expect(product!.display_key).toBe("product_name");
      });

      it("lists the condition operations of each data property", async () => {
        const [disease] = await backend.getObjectTypes(ctx, KN, ["disease"]);
        const ops = Object.fromEntries(disease!.data_properties.map((p) => [p.name, p.condition_operations]));
        expect(ops["disease_name"]).toEqual(["==", "!=", "like", "not_like", "in", "not_in"]);
        expect(ops["description"]).toEqual(["match", "match_phrase", "multi_match", "knn", "like"]);
        expect(ops["rate"]).toContain("range");
      });

      it("answers NOT_FOUND naming the unknown type", async () => {
        const err = await failureOf(backend.getObjectTypes(ctx, KN, ["disease", "no_such_type"]));
        expect(err.code).toBe("not_found");
        expect(err.message).toContain("no_such_type");
      });
    });

    describe("queryObjects", () => {
      it("== matches the exact value only", async () => {
        expect(await diseases(eq("disease_name", "肺炎"))).toEqual(["disease-disease_000001"]);
      });

      it("like finds 上、下气道梗阻 from 气道梗阻, with its system fields", async () => {
        const { datas } = await query("disease", {
          condition: { field: "disease_name", operation: "like", value: "气道梗阻" },
          limit: 10,
        });
        expect(datas).toEqual([
          {
            disease_id: "disease_004790",
            disease_name: "上、下气道梗阻",
            age: "儿童",
            rate: 0.9,
            description: "上呼吸道或下呼吸道的阻塞，表现为呼吸困难",
            _instance_id: "disease-disease_004790",
            _instance_identity: { disease_id: "disease_004790" },
            _display: "上、下气道梗阻",
          },
        ]);
      });

      it("in and not_in split the instances", async () => {
        expect(await diseases({ field: "age", operation: "in", value: ["儿童"] })).toEqual([
          "disease-disease_000002",
          "disease-disease_004790",
        ]);
        expect(await diseases({ field: "age", operation: "not_in", value: ["儿童"] })).toEqual([
          "disease-disease_000001",
          "disease-disease_000003",
          "disease-disease_000004",
        ]);
      });

      it("range on a float includes the low bound and excludes the high one", async () => {
        expect(await diseases({ field: "rate", operation: "range", value: [0.9, 0.95] })).toEqual([
          "disease-disease_000002",
          "disease-disease_004790",
        ]);
      });

      it("exist and not_exist test for a value", async () => {
        expect(await diseases({ field: "rate", operation: "not_exist" })).toEqual(["disease-disease_000004"]);
        expect(await diseases({ field: "rate", operation: "exist" })).toHaveLength(4);
      });

      it("regex matches a pattern", async () => {
        const { datas } = await query("drug-product", {
          condition: { field: "product_name", operation: "regex", value: "^阿莫西林" },
          limit: 10,
        });
        expect(ids(datas)).toEqual(["drug-product-d1_片剂", "drug-product-d1_胶囊"]);
      });

      it("match scores rows and orders them by _score, highest first", async () => {
        const { datas } = await query("disease", {
          condition: { field: "description", operation: "match", value: "呼吸困难 咳嗽" },
          limit: 10,
          need_total: true,
        });
        expect(ids(datas)).toEqual(["disease-disease_004790", "disease-disease_000001"]);
        const scores = datas.map((r) => r["_score"] as number);
        expect(scores[0]).toBeGreaterThan(scores[1]!);
        expect(scores[1]).toBeGreaterThan(0);
      });

      it("nests and/or conditions", async () => {
        const condition: Condition = {
          operation: "and",
          sub_conditions: [
            eq("age", "儿童"),
            {
              operation: "or",
              sub_conditions: [
                { field: "rate", operation: ">", value: 0.92 },
                { field: "disease_name", operation: "like", value: "梗阻" },
              ],
            },
          ],
        };
        expect(await diseases(condition)).toEqual(["disease-disease_000002", "disease-disease_004790"]);
      });

      it("returns only the projected properties plus the system fields", async () => {
        const { datas } = await query("disease", {
          condition: eq("disease_id", "disease_000003"),
          properties: ["disease_name"],
          limit: 1,
        });
        expect(datas).toEqual([
          {
            disease_name: "糖尿病（2型）",
            _instance_id: "disease-disease_000003",
            _instance_identity: { disease_id: "disease_000003" },
            _display: "糖尿病（2型）",
          },
        ]);
      });

      it("reports total_count only when need_total is asked, 0 included", async () => {
        const withTotal = await query("disease", { limit: 1, need_total: true });
        expect(withTotal.datas).toHaveLength(1);
        expect(withTotal.total_count).toBe(5);
        expect((await query("disease", { limit: 1 })).total_count).toBeUndefined();
        const none = await query("disease", { condition: eq("disease_name", "骨折"), limit: 10, need_total: true });
        expect(none).toEqual({ datas: [], total_count: 0 });
      });

      it("sorts by a property, nulls last when descending", async () => {
        const { datas } = await query("disease", { sort: [{ field: "rate", direction: "desc" }], limit: 10 });
        expect(datas.map((r) => r["rate"])).toEqual([0.95, 0.93, 0.9, 0.4, null]);
      });

      it("pages with search_after through every row exactly once, then stops", async () => {
        for (const sort of [undefined, [{ field: "rate", direction: "asc" as const }]]) {
          const seen: string[] = [];
          let after: Json[] | undefined;
          let pages = 0;
          do {
            const page = await query("disease", { limit: 2, sort, search_after: after, properties: ["rate"] });
            seen.push(...ids(page.datas));
            after = page.search_after;
            pages++;
          } while (after !== undefined && pages < 10);
          expect(pages).toBe(3);
          expect([...seen].sort()).toEqual([
            "disease-disease_000001",
            "disease-disease_000002",
            "disease-disease_000003",
            "disease-disease_000004",
            "disease-disease_004790",
          ]);
          if (sort)
            expect(seen).toEqual([
              "disease-disease_000004",
              "disease-disease_000003",
              "disease-disease_004790",
              "disease-disease_000002",
              "disease-disease_000001",
            ]);
        }
      });

      it("identifies composite keys and a type id holding '-'", async () => {
        const { datas } = await query("drug-product", { limit: 10 });
        expect(datas.map((r) => [r._instance_id, r._instance_identity, r._display])).toEqual([
          ["drug-product-d1_片剂", { drug_id: "d1", form: "片剂" }, "阿莫西林片"],
          ["drug-product-d1_胶囊", { drug_id: "d1", form: "胶囊" }, "阿莫西林胶囊"],
          ["drug-product-d2_注射剂", { drug_id: "d2", form: "注射剂" }, "头孢曲松注射剂"],
        ]);
      });

      it("answers INVALID_ARGUMENT with a violation for an operation the property does not list", async () => {
        const err = await failureOf(
          query("disease", { condition: { field: "disease_name", operation: "match", value: "肺炎" }, limit: 10 }),
        );
        expect(err.code).toBe("invalid_argument");
        expect(err.violations).toEqual([
          { field: "condition.operation", description: saying("disease_name does not support match") },
        ]);
      });

      it("answers INVALID_ARGUMENT with a violation for an unknown field", async () => {
        const err = await failureOf(
          query("disease", { condition: { operation: "and", sub_conditions: [eq("no_such_field", "x")] }, limit: 10 }),
        );
        expect(err.code).toBe("invalid_argument");
        expect(err.violations).toEqual([
          { field: "condition.sub_conditions[0].field", description: saying("no_such_field") },
        ]);
      });

      it("answers NOT_FOUND for an unknown object type", async () => {
        const err = await failureOf(query("no_such_type", { limit: 1 }));
        expect(err.code).toBe("not_found");
        expect(err.message).toContain("no_such_type");
      });
    });

    describe("querySubgraph", () => {
      it("walks forward from disease_004790 to its symptoms", async () => {
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            {
              object_types: [{ id: "disease", condition: eq("disease_id", "disease_004790") }, { id: "symptom" }],
              relation_types: [edge("has_symptom", "disease", "symptom")],
            },
          ],
        });
        expect(entries).toHaveLength(1);
        expect(relationsOf(entries[0]!)).toEqual([
          "disease-disease_004790 -has_symptom-> symptom-symptom_000020",
          "disease-disease_004790 -has_symptom-> symptom-symptom_000028",
        ]);
        expect(entries[0]!.objects["symptom-symptom_000020"]).toEqual({
          _instance_id: "symptom-symptom_000020",
          _instance_identity: { symptom_id: "symptom_000020" },
          _display: "呼吸困难",
          object_type_id: "symptom",
          object_type_name: "症状",
          properties: { symptom_id: "symptom_000020", symptom_name: "呼吸困难" },
        });
        expect(entries[0]!.relation_paths[0]!.relations[0]!.relation_type_name).toBe("疾病症状");
      });

      it("walks backward from a symptom to the diseases that have it", async () => {
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            {
              object_types: [{ id: "symptom", condition: eq("symptom_id", "symptom_000028") }, { id: "disease" }],
              relation_types: [edge("has_symptom", "symptom", "disease")],
            },
          ],
        });
        expect(relationsOf(entries[0]!)).toEqual([
          "symptom-symptom_000028 -has_symptom-> disease-disease_000001",
          "symptom-symptom_000028 -has_symptom-> disease-disease_004790",
        ]);
        expect(entries[0]!.objects["disease-disease_000001"]!._display).toBe("肺炎");
      });

      it("follows the self-relation has_complication with the matched disease at either end", async () => {
        const path = (start?: Condition, end?: Condition) => ({
          object_types: [
            { id: "disease", condition: start },
            { id: "disease", condition: end },
          ],
          relation_types: [edge("has_complication", "disease", "disease")],
        });
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            path(eq("disease_id", "disease_000001")),
            path(undefined, eq("disease_id", "disease_000001")),
          ],
        });
        expect(entries.map(relationsOf)).toEqual([
          ["disease-disease_000001 -has_complication-> disease-disease_004790"],
          ["disease-disease_000002 -has_complication-> disease-disease_000001"],
        ]);
      });

      it("follows the mapping relation produces to composite-key products, both ways", async () => {
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            {
              object_types: [{ id: "company", condition: eq("company_id", "company_000001") }, { id: "drug-product" }],
              relation_types: [edge("produces", "company", "drug-product")],
            },
            {
              object_types: [{ id: "drug-product", condition: eq("drug_id", "d2") }, { id: "company" }],
              relation_types: [edge("produces", "drug-product", "company")],
            },
          ],
        });
        expect(entries.map(relationsOf)).toEqual([
          [
            "company-company_000001 -produces-> drug-product-d1_片剂",
            "company-company_000001 -produces-> drug-product-d1_胶囊",
          ],
          ["drug-product-d2_注射剂 -produces-> company-company_000002"],
        ]);
        expect(entries[0]!.objects["drug-product-d1_胶囊"]).toMatchObject({
          object_type_id: "drug-product",
          object_type_name: "药物产品",
          _instance_identity: { drug_id: "d1", form: "胶囊" },
          _display: "阿莫西林胶囊",
        });
      });

      it("walks a multi-hop path: complication, then its symptoms", async () => {
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            {
              object_types: [
                { id: "disease", condition: eq("disease_id", "disease_000002") },
                { id: "disease" },
                { id: "symptom" },
              ],
              relation_types: [
                edge("has_complication", "disease", "disease"),
                edge("has_symptom", "disease", "symptom"),
              ],
            },
          ],
        });
        expect(relationsOf(entries[0]!)).toEqual([
          "disease-disease_000002 -has_complication-> disease-disease_000001 | disease-disease_000001 -has_symptom-> symptom-symptom_000028",
          "disease-disease_000002 -has_complication-> disease-disease_000001 | disease-disease_000001 -has_symptom-> symptom-symptom_000030",
        ]);
        expect(entries[0]!.relation_paths.map((p) => p.length)).toEqual([2, 2]);
        expect(Object.keys(entries[0]!.objects).sort()).toEqual([
          "disease-disease_000001",
          "disease-disease_000002",
          "symptom-symptom_000028",
          "symptom-symptom_000030",
        ]);
      });

      it("honours the path limit and each node's limit", async () => {
        const all = [{ id: "disease" }, { id: "symptom" }];
        const { entries } = await backend.querySubgraph(ctx, KN, {
          relation_type_paths: [
            { object_types: all, relation_types: [edge("has_symptom", "disease", "symptom")], limit: 3 },
            {
              object_types: [{ id: "disease" }, { id: "symptom", limit: 1 }],
              relation_types: [edge("has_symptom", "disease", "symptom")],
            },
          ],
        });
        expect(entries[0]!.relation_paths).toHaveLength(3);
        expect(relationsOf(entries[1]!)).toEqual([
          "disease-disease_000001 -has_symptom-> symptom-symptom_000028",
          "disease-disease_004790 -has_symptom-> symptom-symptom_000028",
        ]);
      });

      it("answers INVALID_ARGUMENT for a relation type the network does not have", async () => {
        const err = await failureOf(
          backend.querySubgraph(ctx, KN, {
            relation_type_paths: [
              {
                object_types: [{ id: "disease" }, { id: "symptom" }],
                relation_types: [edge("treats", "disease", "symptom")],
              },
            ],
          }),
        );
        expect(err.code).toBe("invalid_argument");
        expect(err.violations).toEqual([
          {
            field: "relation_type_paths[0].relation_types[0].relation_type_id",
            description: saying("treats"),
          },
        ]);
      });
    });

    describe("queryProperties", () => {
      const company1 = { company_id: "company_000001" };
      const company2 = { company_id: "company_000002" };

      it("evaluates a metric as an instant value", async () => {
        const end = shanghaiMonth(2026, 1) - 1;
        const { rows, unmatched } = await backend.queryProperties(ctx, KN, "company", {
          identities: [company1],
          properties: ["approved_drug_count"],
          dynamic_params: { approved_drug_count: { instant: true, start: shanghaiMonth(2025, 1), end } },
        });
        expect(unmatched).toEqual([]);
        expect(rows).toEqual([
          {
            _instance_id: "company-company_000001",
            _instance_identity: company1,
            _display: "广西金秀圣堂药业有限责任公司",
            company_id: "company_000001",
            approved_drug_count: {
              model: { unit_type: "countUnit", unit: "times" },
              datas: [{ labels: company1, times: [end], values: [6] }],
              step: "",
              is_variable: false,
              is_calendar: false,
            },
          },
        ]);
      });

      it("evaluates a metric as a monthly trend", async () => {
        const { rows } = await backend.queryProperties(ctx, KN, "company", {
          identities: [company1],
          properties: ["approved_drug_count"],
          dynamic_params: {
            approved_drug_count: {
              instant: false,
              start: shanghaiMonth(2025, 1),
              end: shanghaiMonth(2025, 4) - 1,
              step: "month",
            },
          },
        });
        expect(rows[0]!["approved_drug_count"]).toMatchObject({
          datas: [
            {
              labels: company1,
              times: [shanghaiMonth(2025, 1), shanghaiMonth(2025, 2), shanghaiMonth(2025, 3)],
              values: [2, 0, 1],
            },
          ],
          step: "month",
          is_calendar: true,
        });
      });

      it("runs an operator with object and array parameters", async () => {
        const asOf = Date.UTC(2025, 11, 31);
        const { rows } = await backend.queryProperties(ctx, KN, "company", {
          identities: [company1],
          properties: ["business_health_score"],
          dynamic_params: {
            business_health_score: { weights: { growth: 1, breadth: 1 }, focus_categories: ["片剂"], as_of: asOf },
          },
        });
        expect(rows[0]!["business_health_score"]).toEqual({
          company_id: "company_000001",
          company_name: "广西金秀圣堂药业有限责任公司",
          score: 0.67,
          level: "B",
          dimensions: { growth: 1, breadth: 0.33, stability: 0.13 },
          weights: { growth: 1, breadth: 1, stability: 0 },
          approvals_last_12_months: 6,
          approvals_prior_12_months: 0,
          products: 2,
          focus_share: 0.5,
          model_version: "v2",
          as_of: asOf,
        });
      });

      it("reports an identity that matches nothing, with a null row in its place", async () => {
        const ghost = { company_id: "company_999999" };
        const { rows, unmatched } = await backend.queryProperties(ctx, KN, "company", {
          identities: [company2, ghost, company1],
          properties: ["company_name"],
        });
        expect(rows.map((r) => r?.["company_name"] ?? null)).toEqual([
          "华北制药股份有限公司",
          null,
          "广西金秀圣堂药业有限责任公司",
        ]);
        expect(unmatched).toEqual([ghost]);
      });

      it("returns rows in the order of the requested identities, composite keys included", async () => {
        const injection = { drug_id: "d2", form: "注射剂" };
        const tablet = { drug_id: "d1", form: "片剂" };
        const capsule = { drug_id: "d1", form: "胶囊" };
        const names = new Map([
          [injection, "头孢曲松注射剂"],
          [tablet, "阿莫西林片"],
          [capsule, "阿莫西林胶囊"],
        ]);
        for (const identities of [
          [injection, tablet, capsule],
          [capsule, injection, tablet],
        ]) {
          const { rows, unmatched } = await backend.queryProperties(ctx, KN, "drug-product", {
            identities,
            properties: ["product_name"],
          });
          expect(unmatched).toEqual([]);
          expect(rows.map((r) => [(r as Row)._instance_identity, r!["product_name"]])).toEqual(
            identities.map((i) => [i, names.get(i)]),
          );
        }
      });

      it("answers INVALID_ARGUMENT for an identity missing a primary key", async () => {
        const err = await failureOf(
          backend.queryProperties(ctx, KN, "drug-product", {
            identities: [{ drug_id: "d1" }],
            properties: ["product_name"],
          }),
        );
        expect(err.code).toBe("invalid_argument");
        expect(err.violations).toContainEqual({
          field: "_instance_identities[0]",
          description: saying("missing primary key form"),
        });
      });

      it("answers INVALID_ARGUMENT naming the operator parameters that are missing", async () => {
        const err = await failureOf(
          backend.queryProperties(ctx, KN, "company", {
            identities: [company1],
            properties: ["business_health_score"],
          }),
        );
        expect(err.code).toBe("invalid_argument");
        expect(err.violations.map((v) => v.field)).toEqual([
          "dynamic_params.business_health_score.weights",
          "dynamic_params.business_health_score.focus_categories",
          "dynamic_params.business_health_score.as_of",
        ]);
      });
    });

    describe("getOperator", () => {
      it("returns an operator's definition", async () => {
        const op = await backend.getOperator(ctx, "op_business_health_score");
        expect(op.operator_id).toBe("op_business_health_score");
        expect(op.name).toBe("企业健康度评分");
        expect(op.operator_info).toEqual({ execution_mode: "sync" });
        expect(op.metadata.api_spec.parameters).toEqual([
          {
            name: "model_version",
            in: "query",
            required: true,
            schema: { type: "string", enum: ["v2"] },
            description: "评分模型版本",
          },
        ]);
        expect(op.metadata.api_spec.request_body).toMatchObject({
          content: {
            "application/json": { schema: { required: ["company_id", "weights", "focus_categories", "as_of"] } },
          },
        });
      });

      it("answers NOT_FOUND for an unknown operator", async () => {
        const err = await failureOf(backend.getOperator(ctx, "op_unknown"));
        expect(err.code).toBe("not_found");
        expect(err.message).toContain("op_unknown");
      });
    });

    it("rejects with the caller's abort reason when the call is already cancelled", async () => {
      const controller = new AbortController();
      const reason = new Error("the client went away");
      controller.abort(reason);
      await expect(
        backend.queryObjects(testContext({ signal: controller.signal }), KN, "disease", { limit: 1 }),
      ).rejects.toBe(reason);
    });
  });
}
