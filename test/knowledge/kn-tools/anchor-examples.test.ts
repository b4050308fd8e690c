import { readFileSync } from "node:fs";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import Ajv2020 from "ajv/dist/2020";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import {
  QueryInstanceSubgraphRequestSchema,
  QueryObjectInstancesRequestSchema,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import {
  type Backend,
  bundle,
  Code,
  KN,
  type RestAnswer,
  rest,
  rpcFailure,
  startBackends,
} from "./query-instances-helpers";

/**
 * Every example the anchor's contracts give, run through our REST routes
 * (and our RPC where the proto can carry it), on both backends:
 *
 * - the two tools' OpenAPI files (anchor-query_object_instance.openapi.yaml,
 *   anchor-query_instance_subgraph.openapi.yaml): their examples, and our
 *   answers checked against their response schemas;
 * - the request bodies ontology-query documents for the calls the anchor
 *   forwards (ontology-query.openapi.yaml), and the real kn_medical calls
 *   (kn_medical.call-samples.txt);
 * - the examples of ANCHOR-TOOLS §2, §5 and §6.
 *
 * Where an example is itself invalid against the real kn_medical schema (it
 * was written for another network, or for a mode the tool does not offer),
 * the test asserts our precise error for it.
 */

const UPSTREAM = "/work/shared/upstream";
const objectSpec = parseYaml(readFileSync(`${UPSTREAM}/anchor-query_object_instance.openapi.yaml`, "utf8"));
const subgraphSpec = parseYaml(readFileSync(`${UPSTREAM}/anchor-query_instance_subgraph.openapi.yaml`, "utf8"));
// The platform's file repeats a component name (MetricData); the last one wins, as in most OpenAPI tools.
const ontologyQuery = parseYaml(readFileSync(`${UPSTREAM}/ontology-query.openapi.yaml`, "utf8"), { uniqueKeys: false });
const samples = readFileSync(`${UPSTREAM}/kn_medical.call-samples.txt`, "utf8");

/** Every `example` / `examples` value in a document, with where it is. */
function examplesIn(node: unknown, path = "#"): { path: string; value: unknown }[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => examplesIn(n, `${path}/${i}`));
  if (node === null || typeof node !== "object") return [];
  return Object.entries(node).flatMap(([k, v]) => {
    if (k === "example") return [{ path: `${path}/example`, value: v }];
    if (k === "examples" && v !== null && typeof v === "object")
      return Object.entries(v).map(([name, e]) => ({
        path: `${path}/examples/${name}`,
        value: (e as { value: unknown }).value,
      }));
    return examplesIn(v, `${path}/${k}`);
  });
}

/** A validator of a component schema of an OpenAPI document (OpenAPI's own keywords ignored, formats not checked). */
function validatorOf(
  spec: { components: unknown },
  component: string,
  patch?: (schemas: Record<string, Record<string, unknown>>) => void,
) {
  const components = structuredClone(spec.components) as { schemas: Record<string, Record<string, unknown>> };
  patch?.(components.schemas);
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ $id: "spec", components });
  return ajv.compile({ $ref: `spec#/components/schemas/${component}` });
}

/**
 * Property values may be null: the platform's own kn_medical answers have
 * null properties (call-samples: "money": null), which the anchor's schema,
 * written without OpenAPI's nullable, does not allow.
 */
function allowNullValues(schemas: Record<string, Record<string, unknown>>): void {
  const props = (
    schemas["ObjectInfoInSubgraph"]!["properties"] as Record<string, { additionalProperties: { oneOf: unknown[] } }>
  )["properties"]!;
  props.additionalProperties.oneOf.push({ type: "null" });
}

/** The errors of `value` against a validator, as "instancePath keyword (detail)". */
function errorsOf(validate: ReturnType<typeof validatorOf>, value: unknown): string[] {
  validate(value);
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.keyword} ${JSON.stringify(e.params)}`);
}

/** The curl calls of the samples file: path, query and body, with the answer that follows each. */
function sampleCalls(): { path: string; query: string; body: unknown; answer: unknown }[] {
  const calls = [...samples.matchAll(/--request POST '([^']+)'[\s\S]*?--data-raw '([\s\S]*?)'/g)];
  return calls.map((m) => {
    const url = new URL(m[1]!);
    const after = samples.slice(samples.indexOf("返回样例", m.index));
    const start = after.indexOf("{");
    let depth = 0;
    let end = start;
    for (; end < after.length; end++) {
      if (after[end] === "{") depth++;
      if (after[end] === "}" && --depth === 0) break;
    }
    return {
      path: url.pathname,
      query: url.search,
      body: JSON.parse(m[2]!),
      answer: JSON.parse(after.slice(start, end + 1)),
    };
  });
}

let env: Awaited<ReturnType<typeof startBackends>>;
const byName = new Map<string, Backend>();
beforeAll(async () => {
  env = await startBackends();
  for (const b of env.backends) byName.set(b.name, b);
});
afterAll(() => env.close());

describe("the anchors' OpenAPI files", () => {
  it("holds the examples this suite runs: none in query_object_instance's, one (a response's objects) in query_instance_subgraph's", () => {
    expect(examplesIn(objectSpec)).toEqual([]);
    expect(examplesIn(subgraphSpec).map((e) => e.path)).toEqual([
      "#/components/schemas/ObjectSubGraphResponse/properties/objects/example",
    ]);
  });

  it("the subgraph example's objects are valid ObjectInfoInSubgraph, and ours are the same shape in the 2026 names", async () => {
    const [example] = examplesIn(subgraphSpec);
    const objectInfo = validatorOf(subgraphSpec, "ObjectInfoInSubgraph", allowNullValues);
    for (const o of Object.values(example!.value as Record<string, unknown>))
      expect(errorsOf(objectInfo, o)).toEqual([]);

    const res = await rest(
      byName.get("embedded")!.server,
      "query_instance_subgraph",
      { kn_id: KN },
      {
        relation_type_paths: [
          {
            object_types: [
              { id: "disease", condition: { field: "disease_id", operation: "==", value: "disease_004790" } },
              { id: "symptom" },
            ],
            relation_types: [{ relation_type_id: "has_symptom" }],
          },
        ],
      },
    );
    const ours = Object.values(res.body.entries[0].objects) as Record<string, unknown>[];
    expect(ours.length).toBe(6);
    for (const o of ours) {
      // In the names the platform used before 2026 (UPSTREAM.md), each is what the anchor's schema describes.
      const { _instance_id, _instance_identity, _display, ...rest } = o;
      expect(
        errorsOf(objectInfo, { id: _instance_id, unique_identities: _instance_identity, display: _display, ...rest }),
      ).toEqual([]);
      // As sent, exactly the three renamed fields are what the old schema misses.
      expect(errorsOf(objectInfo, o).sort()).toEqual([
        `/ required {"missingProperty":"display"}`,
        `/ required {"missingProperty":"id"}`,
        `/ required {"missingProperty":"unique_identities"}`,
      ]);
    }
  });

  describe.each(["embedded", "http (simulator)"])(
    "our answers against the response schemas, on the %s backend",
    (name) => {
      it("query_object_instance: valid ObjectDataResponse but for the fields the anchor never sends (groups, type) or drops (search_after: next_cursor instead)", async () => {
        const res = await rest(
          byName.get(name)!.server,
          "query_object_instance",
          { kn_id: KN, ot_id: "disease" },
          { limit: 5 },
        );
        expect(res.status).toBe(200);
        expect(errorsOf(validatorOf(objectSpec, "ObjectDataResponse"), res.body).sort()).toEqual([
          `/ required {"missingProperty":"groups"}`,
          `/ required {"missingProperty":"search_after"}`,
          `/ required {"missingProperty":"type"}`,
        ]);
        const relaxed = validatorOf(objectSpec, "ObjectDataResponse", (s) => {
          s["ObjectDataResponse"]!["required"] = ["datas"];
        });
        expect(errorsOf(relaxed, res.body)).toEqual([]);
        expect(res.body.total_count).toBe(bundle.objects["disease"]!.length);
      });

      it("query_instance_subgraph: valid PathEntries but for search_after (relation paths do not page) and the 2026 names of objects' system fields", async () => {
        const res = await rest(
          byName.get(name)!.server,
          "query_instance_subgraph",
          { kn_id: KN },
          {
            relation_type_paths: [
              {
                object_types: [
                  { id: "symptom", condition: { field: "symptom_id", operation: "==", value: "symptom_000547" } },
                  { id: "disease" },
                ],
                relation_types: [{ relation_type_id: "has_symptom" }],
              },
            ],
          },
        );
        const relaxed = validatorOf(subgraphSpec, "PathEntries", (s) => {
          allowNullValues(s);
          s["ObjectSubGraphResponse"]!["required"] = ["objects", "relation_paths", "total_count"];
          s["ObjectInfoInSubgraph"]!["required"] = [
            "_instance_id",
            "_instance_identity",
            "object_type_id",
            "object_type_name",
            "_display",
            "properties",
          ];
        });
        expect(errorsOf(relaxed, res.body)).toEqual([]);
        const strict = errorsOf(validatorOf(subgraphSpec, "PathEntries", allowNullValues), res.body);
        expect(strict.filter((e) => !/missingProperty":"(id|unique_identities|display)"/.test(e))).toEqual([
          `/entries/0 required {"missingProperty":"search_after"}`,
        ]);
      });
    },
  );
});

/** A REST example and, when the proto can carry it, the same as an RPC. */
interface Example {
  name: string;
  route: "query_object_instance" | "query_instance_subgraph";
  query: Record<string, string>;
  body: Record<string, unknown>;
  /** What our REST answer must be. */
  rest(res: RestAnswer): void;
}

/** The same example as an RPC request (kn_id/ot_id from the query string into the message). */
function rpcCall(backend: Backend, ex: Example) {
  const json = { ...ex.query, ...ex.body } as JsonValue;
  return ex.route === "query_object_instance"
    ? backend.client.queryObjectInstances(fromJson(QueryObjectInstancesRequestSchema, json))
    : backend.client.queryInstanceSubgraph(fromJson(QueryInstanceSubgraphRequestSchema, json));
}

const oqBody = (example: string) =>
  examplesIn(ontologyQuery).find((e) => e.path.endsWith(`/examples/${example}`))!.value as Record<string, unknown>;

const [objectSample, subgraphSample] = sampleCalls();
const firstPodQuery = oqBody("获取指定对象类的对象实例-第一次请求-含属性计算参数-含对象类信息");
const pagePodQuery = oqBody("获取指定对象类的对象实例-非第一次请求-含属性计算参数-含对象类信息");
const exploreQuery = oqBody("基于起点、方向和路径长度获取对象子图-request");
const commentPaths = oqBody("基于路径获取对象子图-request");

const examples: (Example & { rpc: "same" | "not representable" })[] = [
  {
    name: "kn_medical sample 1: disease_name == 发烧, need_total, limit 10 (the sample's fields come back, plus the system fields)",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "disease" },
    body: objectSample!.body as Record<string, unknown>,
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(200);
      const expected = bundle.objects["disease"]!.filter((d) => d["disease_name"] === "发烧");
      expect(res.body.total_count).toBe(expected.length);
      const sampleRow = (objectSample!.answer as { datas: Record<string, unknown>[] }).datas[0]!;
      for (const row of res.body.datas) {
        expect(Object.keys(row).sort()).toEqual(
          [...Object.keys(sampleRow), "_display", "_instance_id", "_instance_identity"].sort(),
        );
      }
    },
  },
  {
    name: "kn_medical sample 2: disease_name == 上气道梗阻 → symptom (our network spells it 上、下气道梗阻: no path, said plainly)",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: subgraphSample!.body as Record<string, unknown>,
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(200);
      expect(res.body.entries[0].relation_paths).toEqual([]);
      expect(res.body.entries[0].message).toContain("object_types[0] (disease) has no instance matching its condition");
    },
  },
  {
    name: "kn_medical sample 2 with the network's spelling: the sample's very paths, each has_symptom edge forward",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: JSON.parse(JSON.stringify(subgraphSample!.body).replace("上气道梗阻", "上、下气道梗阻")),
    rpc: "same",
    rest(res) {
      const theirs = (
        subgraphSample!.answer as { entries: { relation_paths: { relations: Record<string, string>[] }[] }[] }
      ).entries[0]!.relation_paths.map((p) => p.relations.map((r) => ({ ...r, direction: "forward" })));
      const ours = res.body.entries[0].relation_paths.map((p: { relations: unknown[] }) => p.relations);
      expect(ours).toEqual(theirs);
    },
  },
  {
    name: "ontology-query's first-page example (pod_* fields of another network) on kn_medical's disease: each field refused with its path",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "disease" },
    body: firstPodQuery,
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INVALID_CONDITION");
      expect(res.body.details.field_violations.map((v: { field: string }) => v.field)).toEqual([
        "condition.sub_conditions[0].field",
        "condition.sub_conditions[1].field",
      ]);
      expect(res.body.details.field_violations[0].description).toContain(
        "pod_namespace is not a data property of disease",
      );
    },
  },
  {
    name: "the same example on its own object type, which kn_medical does not have: NOT_FOUND naming the types there are",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "pod_has_metric_and_operator" },
    body: firstPodQuery,
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("OBJECT_TYPE_NOT_FOUND");
      expect(res.body.details.valid_values).toContain("disease");
    },
  },
  {
    name: "ontology-query's page-turn example (search_after): refused, with the way to page",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "disease" },
    body: pagePodQuery,
    rpc: "not representable",
    rest(res) {
      expect(res.status).toBe(400);
      expect(res.body.details.field_violations).toContainEqual({
        field: "search_after",
        description: "not taken: pass the next_cursor of the previous page as cursor",
      });
    },
  },
  {
    name: "ontology-query's exploration example (source, direction, path_length): a mode the tool does not offer, each key refused",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: exploreQuery,
    rpc: "not representable",
    rest(res) {
      expect(res.status).toBe(400);
      expect(res.body.details.field_violations.map((v: { field: string }) => v.field).sort()).toEqual(
        ["direction", "limit", "need_total", "path_length", "relation_type_paths", "source_object_type_id"].sort(),
      );
    },
  },
  {
    name: "ontology-query's relation_path example (a comment network, need_total on nodes): the stray keys refused first",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: commentPaths,
    rpc: "not representable",
    rest(res) {
      expect(res.status).toBe(400);
      expect(res.body.details.field_violations.map((v: { field: string }) => v.field)).toEqual([
        "relation_type_paths[0].object_types[0].need_total",
        "relation_type_paths[0].object_types[1].need_total",
        "relation_type_paths[0].object_types[2].need_total",
      ]);
    },
  },
  {
    name: "the same without need_total: comment and comment_replyof_comment are not kn_medical's, the like's % wildcards named",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: JSON.parse(JSON.stringify(commentPaths).replaceAll('"need_total":true,', "")),
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(400);
      const fields = res.body.details.field_violations.map((v: { field: string }) => v.field);
      expect(fields).toEqual([
        "relation_type_paths[0].object_types[0].id",
        "relation_type_paths[0].object_types[1].id",
        "relation_type_paths[0].object_types[2].id",
        "relation_type_paths[0].relation_types[0].relation_type_id",
        "relation_type_paths[0].relation_types[1].relation_type_id",
      ]);
      expect(res.body.details.next_rpc).toBe("contextloader.kntools.v1.KnowledgeToolsService/SearchSchema");
    },
  },
  {
    name: "ANCHOR-TOOLS §2: the empty filter idiom {and, []} matches every instance",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "department" },
    body: { condition: { operation: "and", sub_conditions: [] }, limit: 100 },
    rpc: "same",
    rest(res) {
      expect(res.body.total_count).toBe(bundle.objects["department"]!.length);
      expect(res.body.datas).toHaveLength(bundle.objects["department"]!.length);
    },
  },
  {
    name: "ANCHOR-TOOLS §2/§3: the knn + match recall over * (with value_from, limit_key k): kn_medical's disease has no property allowing either",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "disease" },
    body: {
      condition: {
        operation: "or",
        sub_conditions: [
          { field: "*", operation: "knn", value: "气道", value_from: "const", limit_key: "k", limit_value: 10 },
          { field: "*", operation: "match", value: "气道", value_from: "const" },
        ],
      },
      sort: [{ field: "_score", direction: "desc" }],
      limit: 10,
      need_total: false,
    },
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(400);
      expect(res.body.details.field_violations).toEqual([
        {
          field: "condition.sub_conditions[0].operation",
          description: "no data property of disease allows knn; use like instead",
        },
        {
          field: "condition.sub_conditions[1].operation",
          description: "no data property of disease allows match; use like instead",
        },
      ]);
      expect(res.body.solution).toContain(
        'condition.sub_conditions[0] = {"field":"disease_name","operation":"like","value":"气道"}',
      );
    },
  },
  {
    name: "ANCHOR-TOOLS §5: limit over 10000 (the anchor answered its validator's Go text): a sentence naming the range",
    route: "query_object_instance",
    query: { kn_id: KN, ot_id: "disease" },
    body: { limit: 10_001 },
    rpc: "same",
    rest(res) {
      expect(res.body.details.field_violations).toEqual([{ field: "limit", description: "must be from 1 to 10000" }]);
    },
  },
  {
    name: "ANCHOR-TOOLS §6: nodes with condition {and, []} and limit given 'even without filters', the path limit left to its default",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: {
      relation_type_paths: [
        {
          object_types: [
            { id: "drug_class", condition: { operation: "and", sub_conditions: [] }, limit: 10000 },
            { id: "drug_class", condition: { operation: "and", sub_conditions: [] }, limit: 10000 },
          ],
          relation_types: [
            {
              relation_type_id: "is_a_level",
              source_object_type_id: "drug_class",
              target_object_type_id: "drug_class",
            },
          ],
        },
      ],
    },
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(200);
      expect(res.body.entries[0].relation_paths).toHaveLength(bundle.relations["is_a_level"]!.length);
      expect(res.body.entries[0].total_count).toBe(bundle.relations["is_a_level"]!.length);
    },
  },
  {
    name: "ANCHOR-TOOLS §6/§13: source/target read as the relation's definition while walking it backward: answered, and corrected in warnings",
    route: "query_instance_subgraph",
    query: { kn_id: KN },
    body: {
      relation_type_paths: [
        {
          object_types: [
            {
              id: "drug_product",
              condition: { field: "drug_product_id", operation: "==", value: bundle.relations["produces"]![0]![1] },
            },
            { id: "company" },
          ],
          relation_types: [
            { relation_type_id: "produces", source_object_type_id: "company", target_object_type_id: "drug_product" },
          ],
          limit: 5,
        },
      ],
    },
    rpc: "same",
    rest(res) {
      expect(res.status).toBe(200);
      expect(res.body.entries[0].relation_paths[0].relations[0]).toMatchObject({
        relation_type_id: "produces",
        source_object_id: `drug_product-${bundle.relations["produces"]![0]![1]}`,
        target_object_id: `company-${bundle.relations["produces"]![0]![0]}`,
        direction: "backward",
      });
      expect(res.body.warnings[0].reason).toBe("EDGE_DIRECTION_CORRECTED");
    },
  },
];

describe.each(["embedded", "http (simulator)"])("the examples through our routes, on the %s backend", (name) => {
  it.each(examples.map((e) => [e.name, e] as const))("%s", async (_name, ex) => {
    const backend = byName.get(name)!;
    const res = await rest(backend.server, ex.route, ex.query, ex.body);
    ex.rest(res);
    if (ex.rpc === "not representable") {
      // A proto client cannot even write it: the keys are no fields of the request message.
      expect(() => rpcCall(backend, ex)).toThrow(
        /cannot decode message contextloader\.kntools\.v1\.\w+ from JSON: key "\w+" is unknown/,
      );
      return;
    }
    // The RPC answers the same: the same failure, or the same success.
    if (res.status === 200) {
      const answer = await rpcCall(backend, ex);
      const count = "datas" in answer ? answer.datas.length : answer.entries[0]!.relationPaths.length;
      expect(count).toBe(
        ex.route === "query_object_instance" ? res.body.datas.length : res.body.entries[0].relation_paths.length,
      );
    } else {
      const f = await rpcFailure(rpcCall(backend, ex));
      expect(f.code).toBe(res.status === 404 ? Code.NotFound : Code.InvalidArgument);
      expect(f.reason).toBe(res.body.code);
      expect(f.violations).toEqual(res.body.details.field_violations ?? []);
    }
  });
});
