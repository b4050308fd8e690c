import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpBackend } from "../../src/kn/http/http-backend";
import type { Condition } from "../../src/kn/types";
import { testContext } from "../helpers/call-context";

/**
 * The HTTP clients reading what the real platform answered (before 2026:
 * instance rows without system fields, subgraph objects with `id`,
 * `unique_identities` and `display`), served verbatim from the recorded
 * samples (copied into test/fixtures/upstream from the platform's published
 * samples). The object type definition the clients need
 * to complete the rows is the real kn_medical export's.
 */
const upstreamDir = new URL("../fixtures/upstream/", import.meta.url);
const samples = readFileSync(new URL("kn_medical.call-samples.txt", upstreamDir), "utf8");
const exported = JSON.parse(readFileSync(new URL("kn_medical.export.json", upstreamDir), "utf8")) as {
  object_types: { id: string }[];
};

/** The JSON object starting at the first "{" at or after `from`. */
function jsonObjectAt(text: string, from: number): unknown {
  const start = text.indexOf("{", from);
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error(`no complete JSON object after offset ${from}`);
}

/** The n-th recorded call (0-based): its request body (curl --data-raw) and response (返回样例). */
function recorded(n: number): { request: unknown; response: unknown } {
  const nth = (marker: string) => {
    let at = -1;
    for (let i = 0; i <= n; i++) at = samples.indexOf(marker, at + 1);
    if (at < 0) throw new Error(`call sample ${n + 1} has no ${marker}`);
    return at;
  };
  return { request: jsonObjectAt(samples, nth("--data-raw")), response: jsonObjectAt(samples, nth("返回样例")) };
}

const instanceQuery = recorded(0);
const subgraphQuery = recorded(1);

const ctx = testContext();

describe("the HTTP clients on the platform's recorded answers (kn_medical.call-samples.txt)", () => {
  const received: { method: string; path: string; body: unknown }[] = [];
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "";
        const text = Buffer.concat(chunks).toString("utf8");
        received.push({ method: req.method ?? "", path, body: text === "" ? undefined : JSON.parse(text) });
        const reply = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        };
        if (path === "/api/ontology-query/in/v1/knowledge-networks/kn_medical/object-types/disease")
          reply(200, instanceQuery.response);
        else if (path === "/api/ontology-query/in/v1/knowledge-networks/kn_medical/subgraph?query_type=relation_path")
          reply(200, subgraphQuery.response);
        else if (path === "/api/ontology-manager/in/v1/knowledge-networks/kn_medical?mode=export") reply(200, exported);
        else if (
          path === "/api/ontology-manager/in/v1/knowledge-networks/kn_medical/object-types/disease?include_detail=true"
        ) {
          reply(200, { entries: exported.object_types.filter((t) => t.id === "disease") });
        } else
          reply(404, {
            error_code: "Test.NotFound",
            description: `not recorded: ${path}`,
            solution: "",
            error_link: "",
            error_details: "",
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  const nameIs: Condition = {
    operation: "and",
    sub_conditions: [{ field: "disease_name", operation: "==", value: "发烧", value_from: "const" }],
  };

  it("reads the real kn_medical export, filling what it leaves out or sends as null", async () => {
    const b = createHttpBackend({
      ontologyManagerUrl: url,
      ontologyQueryUrl: url,
      operatorMarketUrl: undefined,
      timeoutMs: 2000,
      maxSockets: 2,
      spelling: "new",
    });
    const kn = await b.getKnowledgeNetwork(ctx, "kn_medical");
    b.close();
    expect(kn).toMatchObject({ id: "kn_medical", name: "医疗知识网络", tags: [], action_types: [] });
    expect(kn.object_types).toHaveLength(16);
    expect(kn.relation_types).toHaveLength(17);
    expect(kn.object_types.every((t) => Array.isArray(t.logic_properties) && t.logic_properties.length === 0)).toBe(
      true,
    );
    const checklist = kn.object_types.find((t) => t.id === "checklist")!;
    expect(checklist).toMatchObject({
      name: "检查项目",
      tags: ["检查项", "检查项目"],
      primary_keys: ["check_item_id"],
      display_key: "check_item_name",
    });
    expect(checklist.data_properties[0]).toEqual({
      name: "check_item_id",
      display_name: "检查项ID",
      type: "varchar",
      comment: "检查项ID",
      condition_operations: ["==", "!=", "like", "not_like", "in", "not_in"],
    });
    // drug_product_new's properties carry condition_operations: null.
    const product = kn.object_types.find((t) => t.id === "drug_product_new")!;
    expect(product.data_properties.find((p) => p.name === "drug_name")!.condition_operations).toEqual([]);
    expect(kn.relation_types.find((r) => r.id === "belongs_to")).toEqual({
      id: "belongs_to",
      name: "药品分类",
      comment: "",
      source_object_type_id: "drug_product",
      target_object_type_id: "drug_product_class",
    });
  });

  for (const spelling of ["old", "new"] as const) {
    describe(`with the ${spelling} spelling configured`, () => {
      const backend = () =>
        createHttpBackend({
          ontologyManagerUrl: url,
          ontologyQueryUrl: url,
          operatorMarketUrl: undefined,
          timeoutMs: 2000,
          maxSockets: 2,
          spelling,
        });

      it("sends the recorded instance query and completes rows that carry no system fields from the object type's keys", async () => {
        received.length = 0;
        const b = backend();
        const result = await b.queryObjects(ctx, "kn_medical", "disease", {
          condition: nameIs,
          need_total: true,
          limit: 10,
        });
        b.close();
        expect(received.find((r) => r.method === "POST")?.body).toEqual(instanceQuery.request);
        expect(result.datas).toEqual([
          {
            rate: "0.9",
            infection: "无传染性",
            disease_name: "上气道梗阻",
            money: null,
            disease_english_name: null,
            age: "儿童",
            treatment: "手术治疗、药物治疗",
            period: "2-4周",
            icd_id: null,
            disease_id: "disease_004790",
            insurance: "非医保疾病",
            _instance_id: "disease-disease_004790",
            _instance_identity: { disease_id: "disease_004790" },
            _display: "上气道梗阻",
          },
        ]);
        expect(result.total_count).toBe(1);
        // One row for a limit of 10 is the last page, whatever search_after the platform adds.
        expect(result.search_after).toBeUndefined();
      });

      it("passes the platform's search_after on when the page is full", async () => {
        const b = backend();
        const result = await b.queryObjects(ctx, "kn_medical", "disease", { condition: nameIs, limit: 1 });
        b.close();
        expect(result.search_after).toEqual(["20251127_053214_01266_c5z3q", "x0f36b2e9227c407199cfc97d063539ce", "1"]);
      });

      it("sends the recorded subgraph query and reads old-spelling objects by their system fields, never by splitting keys", async () => {
        received.length = 0;
        const b = backend();
        const result = await b.querySubgraph(ctx, "kn_medical", {
          relation_type_paths: [
            {
              object_types: [
                {
                  id: "disease",
                  condition: { operation: "==", field: "disease_name", value: "上气道梗阻", value_from: "const" },
                  limit: 10,
                },
                { id: "symptom", limit: 10 },
              ],
              relation_types: [
                { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "symptom" },
              ],
              limit: 10,
            },
          ],
        });
        b.close();
        expect(received[0]!.body).toEqual(subgraphQuery.request);
        expect(result.entries).toHaveLength(1);
        const entry = result.entries[0]!;
        expect(
          Object.values(entry.objects).map((o) => [
            o._instance_id,
            o._instance_identity,
            o._display,
            o.object_type_id,
            o.object_type_name,
          ]),
        ).toEqual([
          ["symptom-symptom_000547", { symptom_id: "symptom_000547" }, "吞咽困难", "symptom", "症状"],
          ["symptom-symptom_000660", { symptom_id: "symptom_000660" }, "气喘", "symptom", "症状"],
          ["symptom-symptom_000837", { symptom_id: "symptom_000837" }, "流涎", "symptom", "症状"],
          ["disease-disease_004790", { disease_id: "disease_004790" }, "上气道梗阻", "disease", "疾病"],
          ["symptom-symptom_000020", { symptom_id: "symptom_000020" }, "呼吸困难", "symptom", "症状"],
          ["symptom-symptom_000028", { symptom_id: "symptom_000028" }, "咳嗽", "symptom", "症状"],
        ]);
        expect(entry.objects["disease-disease_004790"]!.properties).toMatchObject({
          disease_id: "disease_004790",
          treatment: "手术治疗、药物治疗",
          money: null,
        });
        expect(entry.objects["symptom-symptom_000547"]).not.toHaveProperty("id");
        expect(entry.relation_paths).toEqual(
          ["symptom_000020", "symptom_000028", "symptom_000547", "symptom_000660", "symptom_000837"].map((s) => ({
            relations: [
              {
                relation_type_id: "has_symptom",
                relation_type_name: "疾病症状",
                source_object_id: "disease-disease_004790",
                target_object_id: `symptom-${s}`,
              },
            ],
            length: 1,
          })),
        );
      });
    });
  }
});
