import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { decode } from "@toon-format/toon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  KnowledgeToolsService,
  QueryInstanceSubgraphRequestSchema,
  type QueryInstanceSubgraphResponse,
} from "../../../gen/contextloader/kntools/v1/kntools_pb";
import { clientWith } from "../../helpers/rpc";
import { startServer } from "../../helpers/server";
import { callFails, callOk, connectHttp, fieldsOf } from "../../mcp/mcp-client";
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
 * QueryInstanceSubgraph (query_instance_subgraph) over the RPC and the
 * anchor's REST route, on both backends: relation paths checked against the
 * schema before the platform is called (edges walked forward or backward,
 * source/target as the walk's direction, filled in or corrected), each found
 * relation saying its direction, totals and limits, and empty answers that
 * say why.
 */

let env: Awaited<ReturnType<typeof startBackends>>;
const byName = new Map<string, Backend>();
beforeAll(async () => {
  env = await startBackends();
  for (const b of env.backends) byName.set(b.name, b);
});
afterAll(() => env.close());

const BACKENDS = ["embedded", "http (simulator)"];
const pairs = (relation: string) => bundle.relations[relation]! as [string, string][];
const DYSPHAGIA = "symptom_000547"; // 吞咽困难
const OBSTRUCTION = "disease_004790"; // 上、下气道梗阻
const eq = (field: string, value: string) => ({ field, operation: "==", value });

type Entry = QueryInstanceSubgraphResponse["entries"][number];
/** Each found path as the instance ids it visits, in walk order. */
const visits = (e: Entry) =>
  e.relationPaths.map((p) => [p.relations[0]!.sourceObjectId, ...p.relations.map((r) => r.targetObjectId)]);

describe.each(BACKENDS)("QueryInstanceSubgraph on the %s backend", (name) => {
  const backend = () => byName.get(name)!;
  const subgraph = (paths: unknown[], extra: Record<string, unknown> = {}) =>
    backend().client.queryInstanceSubgraph(
      fromJson(QueryInstanceSubgraphRequestSchema, { kn_id: KN, relation_type_paths: paths, ...extra } as JsonValue),
    );

  it("walks a relation forward from a matched instance, filling in source/target: every neighbour, each edge forward", async () => {
    const res = await subgraph([
      {
        object_types: [{ id: "disease", condition: eq("disease_id", OBSTRUCTION) }, { id: "symptom" }],
        relation_types: [{ relation_type_id: "has_symptom" }],
      },
    ]);
    const expected = pairs("has_symptom")
      .filter(([d]) => d === OBSTRUCTION)
      .map(([, s]) => `symptom-${s}`);
    const [entry] = res.entries;
    expect(
      visits(entry!)
        .map((v) => v[1])
        .sort(),
    ).toEqual(expected.sort());
    expect(visits(entry!).every((v) => v[0] === `disease-${OBSTRUCTION}`)).toBe(true);
    expect(entry!.totalCount).toBe(BigInt(expected.length));
    for (const p of entry!.relationPaths) {
      expect(p.length).toBe(1);
      expect(p.relations[0]).toMatchObject({
        relationTypeId: "has_symptom",
        relationTypeName: "疾病症状",
        direction: "forward",
      });
    }
    const disease = entry!.objects[`disease-${OBSTRUCTION}`]!;
    expect(disease.objectTypeId).toBe("disease");
    expect(disease.InstanceIdentity).toEqual({ disease_id: OBSTRUCTION });
    expect(disease.Display?.kind).toEqual({ case: "stringValue", value: "上、下气道梗阻" });
    expect(res.warnings).toEqual([]);
    expect(entry!.message).toBe("");
  });

  it("walks a relation backward (incoming neighbours), saying so, and corrects an edge written as the relation's definition", async () => {
    const path = (edge: Record<string, string>) => ({
      object_types: [{ id: "symptom", condition: eq("symptom_name", "吞咽困难") }, { id: "disease" }],
      relation_types: [{ relation_type_id: "has_symptom", ...edge }],
    });
    const expected = pairs("has_symptom")
      .filter(([, s]) => s === DYSPHAGIA)
      .map(([d]) => `disease-${d}`);
    const right = await subgraph([path({ source_object_type_id: "symptom", target_object_type_id: "disease" })]);
    expect(
      visits(right.entries[0]!)
        .map((v) => v[1])
        .sort(),
    ).toEqual(expected.sort());
    expect(right.entries[0]!.relationPaths.every((p) => p.relations[0]!.direction === "backward")).toBe(true);
    expect(
      right.entries[0]!.relationPaths.every((p) => p.relations[0]!.sourceObjectId === `symptom-${DYSPHAGIA}`),
    ).toBe(true);
    expect(right.warnings).toEqual([]);

    const asDefined = await subgraph([path({ source_object_type_id: "disease", target_object_type_id: "symptom" })]);
    expect(visits(asDefined.entries[0]!)).toEqual(visits(right.entries[0]!));
    expect(asDefined.warnings).toHaveLength(1);
    expect(asDefined.warnings[0]).toMatchObject({
      target: "relation_type_paths[0].relation_types[0]",
      reason: "EDGE_DIRECTION_CORRECTED",
    });
    expect(asDefined.warnings[0]!.message).toContain(
      'has_symptom (疾病症状) is defined disease → symptom, so this edge is walked backward. source/target are the walk\'s direction: write {"relation_type_id":"has_symptom","source_object_type_id":"symptom","target_object_type_id":"disease"}',
    );
  });

  it("walks two hops, one backward and one forward, each path linked as the network links it", async () => {
    const res = await subgraph([
      {
        object_types: [{ id: "symptom", condition: eq("symptom_id", DYSPHAGIA) }, { id: "disease" }, { id: "drugs" }],
        relation_types: [{ relation_type_id: "has_symptom" }, { relation_type_id: "cures" }],
      },
    ]);
    const diseases = new Set(
      pairs("has_symptom")
        .filter(([, s]) => s === DYSPHAGIA)
        .map(([d]) => d),
    );
    const expected = pairs("cures").filter(([d]) => diseases.has(d));
    const entry = res.entries[0]!;
    expect(entry.totalCount).toBe(BigInt(expected.length));
    expect(
      visits(entry)
        .map((v) => `${v[1]}>${v[2]}`)
        .sort(),
    ).toEqual(expected.map(([d, drug]) => `disease-${d}>drugs-${drug}`).sort());
    for (const p of entry.relationPaths) {
      expect(p.relations.map((r) => r.direction)).toEqual(["backward", "forward"]);
      expect(p.relations[1]!.sourceObjectId).toBe(p.relations[0]!.targetObjectId);
    }
  });

  it("follows a self-relation forward, and answers several templates in order", async () => {
    const res = await subgraph([
      {
        object_types: [{ id: "disease", condition: eq("disease_id", "disease_000002") }, { id: "disease" }],
        relation_types: [{ relation_type_id: "has_complication" }],
      },
      {
        object_types: [{ id: "disease", condition: eq("disease_id", OBSTRUCTION) }, { id: "department" }],
        relation_types: [{ relation_type_id: "designated_to" }],
      },
    ]);
    expect(res.entries).toHaveLength(2);
    const complications = pairs("has_complication")
      .filter(([d]) => d === "disease_000002")
      .map(([, c]) => `disease-${c}`);
    expect(
      visits(res.entries[0]!)
        .map((v) => v[1])
        .sort(),
    ).toEqual(complications.sort());
    expect(res.entries[0]!.relationPaths.every((p) => p.relations[0]!.direction === "forward")).toBe(true);
    expect(res.entries[1]!.relationPaths.every((p) => p.relations[0]!.relationTypeId === "designated_to")).toBe(true);
  });

  it("cuts at the path and node limits, the total saying how many there are", async () => {
    const res = await subgraph([
      {
        object_types: [{ id: "disease" }, { id: "symptom", limit: 5 }],
        relation_types: [{ relation_type_id: "has_symptom" }],
        limit: 4,
      },
    ]);
    const entry = res.entries[0]!;
    expect(entry.relationPaths).toHaveLength(4);
    expect(entry.totalCount).toBe(BigInt(pairs("has_symptom").length));
    expect(entry.message).toBe(
      `${pairs("has_symptom").length} paths match in all; 4 are returned (path limit 4, node limits 1000/5). Narrow the conditions or raise the limits to see the rest.`,
    );
    const limited = await subgraph([
      {
        object_types: [{ id: "disease" }, { id: "symptom", limit: 2 }],
        relation_types: [{ relation_type_id: "has_symptom" }],
      },
    ]);
    const symptoms = new Set(visits(limited.entries[0]!).map((v) => v[1]));
    expect(symptoms.size).toBe(2);
  });

  it("says plainly why there is no path (no failure): a node without matching instances, or matching nodes not linked", async () => {
    const none = await subgraph([
      {
        object_types: [{ id: "disease", condition: eq("disease_name", "没有这种病") }, { id: "symptom" }],
        relation_types: [{ relation_type_id: "has_symptom" }],
      },
    ]);
    expect(none.entries[0]!.relationPaths).toEqual([]);
    expect(none.entries[0]!.totalCount).toBe(0n);
    expect(none.entries[0]!.message).toContain(
      "No path found: object_types[0] (disease) has no instance matching its condition.",
    );
    const linked = new Set(
      pairs("has_symptom")
        .filter(([d]) => d === OBSTRUCTION)
        .map(([, s]) => s),
    );
    const elsewhere = pairs("has_symptom").find(([, s]) => !linked.has(s))![1];
    const notLinked = await subgraph([
      {
        object_types: [
          { id: "disease", condition: eq("disease_id", OBSTRUCTION) },
          { id: "symptom", condition: eq("symptom_id", elsewhere) },
        ],
        relation_types: [{ relation_type_id: "has_symptom" }],
      },
    ]);
    expect(notLinked.entries[0]!.relationPaths).toEqual([]);
    expect(notLinked.entries[0]!.message).toContain(
      "every node has matching instances, but none of them are linked along disease -[has_symptom, forward]-> symptom",
    );
  });

  it("adds the logic property cells to objects' properties with include_logic_params", async () => {
    const res = await subgraph(
      [
        {
          object_types: [
            { id: "company", limit: 1 },
            { id: "drug_product", limit: 1 },
          ],
          relation_types: [{ relation_type_id: "produces" }],
          limit: 1,
        },
      ],
      { include_logic_params: true },
    );
    const company = Object.values(res.entries[0]!.objects).find((o) => o.objectTypeId === "company")!;
    expect(company.properties!["approved_drug_count"]).toMatchObject({
      property_type: "metric",
      has_any_unfilled_params: true,
    });
  });

  it("answers the compact shape with output_format: the walk with its arrows, a row per path, objects by type", async () => {
    const res = await subgraph(
      [
        {
          object_types: [
            { id: "symptom", condition: eq("symptom_id", DYSPHAGIA) },
            { id: "disease", limit: 2 },
          ],
          relation_types: [{ relation_type_id: "has_symptom" }],
          limit: 2,
        },
      ],
      { output_format: "toon" },
    );
    expect(res.entries).toEqual([]);
    const answer = decode(res.text) as { entries: Record<string, unknown>[] };
    const [entry] = answer.entries;
    expect(entry!["path"]).toBe("symptom <-[has_symptom]- disease");
    expect(entry!["paths"]).toHaveLength(2);
    expect(Object.keys((entry!["paths"] as Record<string, string>[])[0]!)).toEqual(["symptom", "disease"]);
    expect(entry!["identity_keys"]).toEqual({ symptom: "symptom_id", disease: "disease_id" });
    expect((entry!["objects"] as Record<string, unknown[]>)["disease"]).toHaveLength(2);
    expect(entry!["total_count"]).toBe(7);
  });

  // --- errors, all found before the platform is called

  it("refuses unknown object and relation types with their paths, the closest names and the relations that do join", async () => {
    backend().sim?.clearRequests();
    const f = await rpcFailure(
      subgraph([
        {
          object_types: [{ id: "diseases" }, { id: "symptom" }, { id: "disease" }],
          relation_types: [{ relation_type_id: "has_symptom" }, { relation_type_id: "has_sympton" }],
        },
      ]),
    );
    expect(f.code).toBe(Code.InvalidArgument);
    expect(f.reason).toBe("INVALID_RELATION_PATH");
    expect(violationAt(f, "relation_type_paths[0].object_types[0].id")).toBe(
      "diseases is not an object type of kn_medical; did you mean disease?",
    );
    expect(violationAt(f, "relation_type_paths[0].relation_types[1].relation_type_id")).toBe(
      "has_sympton is not a relation type of kn_medical (did you mean has_symptom?); relation types joining symptom and disease: has_symptom (disease → symptom)",
    );
    expect(f.nextRpc).toBe("contextloader.kntools.v1.KnowledgeToolsService/SearchSchema");
    expect(f.hint).toContain(
      'relation_type_paths[0].relation_types[1] = {"relation_type_id":"has_symptom","source_object_type_id":"symptom","target_object_type_id":"disease"}',
    );
    expect(
      backend()
        .sim?.requests()
        .filter((r) => r.path.includes("/subgraph")) ?? [],
    ).toEqual([]);
  });

  it("refuses a relation that does not join its two nodes, showing its definition and the ones that do", async () => {
    const f = await rpcFailure(
      subgraph([
        { object_types: [{ id: "disease" }, { id: "drugs" }], relation_types: [{ relation_type_id: "has_symptom" }] },
      ]),
    );
    expect(violationAt(f, "relation_type_paths[0].relation_types[0].relation_type_id")).toBe(
      "has_symptom (疾病症状) is defined disease → symptom: it cannot join object_types[0] (disease) and object_types[1] (drugs); relation types joining disease and drugs: cures (disease → drugs)",
    );
    expect(f.hint).toContain('"relation_type_id":"cures"');
  });

  it("refuses source/target that match the relation in neither direction, showing the corrected edge", async () => {
    const f = await rpcFailure(
      subgraph([
        {
          object_types: [{ id: "disease" }, { id: "symptom" }],
          relation_types: [
            { relation_type_id: "has_symptom", source_object_type_id: "disease", target_object_type_id: "drugs" },
          ],
        },
      ]),
    );
    expect(violationAt(f, "relation_type_paths[0].relation_types[0]")).toBe(
      'says disease → drugs, which matches has_symptom in neither direction (has_symptom (疾病症状) is defined disease → symptom); walking object_types[0] (disease) → object_types[1] (symptom) takes it forward: {"relation_type_id":"has_symptom","source_object_type_id":"disease","target_object_type_id":"symptom"}',
    );
  });

  it("refuses paths whose edges do not fit their nodes, longer than 10 hops, or with bad node conditions", async () => {
    const mismatch = await rpcFailure(
      subgraph([
        {
          object_types: [{ id: "disease" }, { id: "symptom" }],
          relation_types: [{ relation_type_id: "has_symptom" }, { relation_type_id: "has_symptom" }],
        },
      ]),
    );
    expect(violationAt(mismatch, "relation_type_paths[0].relation_types")).toContain(
      "has 2 relation types for 2 object_types: a path of n+1 object_types needs exactly n relation types",
    );
    const hops = 11;
    const long = await rpcFailure(
      subgraph([
        {
          object_types: Array.from({ length: hops + 1 }, () => ({ id: "disease" })),
          relation_types: Array.from({ length: hops }, () => ({ relation_type_id: "has_complication" })),
        },
      ]),
    );
    expect(violationAt(long, "relation_type_paths[0].relation_types")).toContain("has 11 hops; a path has at most 10");
    const badCondition = await rpcFailure(
      subgraph([
        {
          object_types: [
            { id: "disease", condition: { field: "disease_name", operation: "match", value: "气道" } },
            { id: "symptom" },
          ],
          relation_types: [{ relation_type_id: "has_symptom" }],
        },
      ]),
    );
    expect(badCondition.reason).toBe("INVALID_CONDITION");
    expect(violationAt(badCondition, "relation_type_paths[0].object_types[0].condition.operation")).toContain(
      "disease_name does not allow match",
    );
  });

  it("refuses limits out of 1..10000 and an empty relation_type_paths", async () => {
    const f = await rpcFailure(
      subgraph([
        {
          object_types: [{ id: "disease", limit: 10_001 }, { id: "symptom" }],
          relation_types: [{ relation_type_id: "has_symptom" }],
          limit: 0,
        },
      ]),
    );
    expect(violationAt(f, "relation_type_paths[0].object_types[0].limit")).toBe("must be from 1 to 10000");
    expect(violationAt(f, "relation_type_paths[0].limit")).toBe("must be from 1 to 10000");
    const empty = await rpcFailure(subgraph([]));
    expect(violationAt(empty, "relation_type_paths")).toBe("required: at least one path template");
  });
});

const NO_EXPLORATION =
  "not taken: this service offers no exploration mode (source_object_type_id, direction, path_length); give relation_type_paths, one path template per walk";

describe("POST /api/agent-retrieval/in/v1/kn/query_instance_subgraph", () => {
  const server = () => byName.get("http (simulator)")!.server;

  it("answers the anchor's {entries}: objects keyed by instance id, relation paths with each relation's direction, the total", async () => {
    const res = await rest(
      server(),
      "query_instance_subgraph",
      { kn_id: KN },
      {
        relation_type_paths: [
          {
            object_types: [
              { id: "symptom", condition: eq("symptom_id", DYSPHAGIA), limit: 0 },
              { id: "disease", limit: 0 },
            ],
            relation_types: [
              { relation_type_id: "has_symptom", source_object_type_id: "symptom", target_object_type_id: "disease" },
            ],
          },
        ],
      },
    );
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["entries"]);
    const [entry] = res.body.entries;
    expect(Object.keys(entry).sort()).toEqual(["objects", "relation_paths", "total_count"]);
    expect(entry.total_count).toBe(7);
    expect(entry.objects[`symptom-${DYSPHAGIA}`]).toEqual({
      _instance_id: `symptom-${DYSPHAGIA}`,
      _instance_identity: { symptom_id: DYSPHAGIA },
      _display: "吞咽困难",
      object_type_id: "symptom",
      object_type_name: "症状",
      properties: { symptom_id: DYSPHAGIA, symptom_name: "吞咽困难" },
    });
    expect(entry.relation_paths[0]).toEqual({
      relations: [
        {
          relation_type_id: "has_symptom",
          relation_type_name: "疾病症状",
          source_object_id: `symptom-${DYSPHAGIA}`,
          target_object_id: expect.stringMatching(/^disease-/),
          direction: "backward",
        },
      ],
      length: 1,
    });
  });

  it("refuses the anchor's exploration mode and keys a path node does not take, in the anchor's envelope", async () => {
    const explore = await rest(
      server(),
      "query_instance_subgraph",
      { kn_id: KN },
      {
        source_object_type_id: "disease",
        direction: "forward",
        path_length: 2,
      },
    );
    expect(explore.status).toBe(400);
    expect(explore.body.code).toBe("INVALID_ARGUMENT");
    expect(explore.body.details.field_violations).toEqual([
      { field: "source_object_type_id", description: NO_EXPLORATION },
      { field: "direction", description: NO_EXPLORATION },
      { field: "path_length", description: NO_EXPLORATION },
      { field: "relation_type_paths", description: "required: at least one path template" },
    ]);
    const stray = await rest(
      server(),
      "query_instance_subgraph",
      { kn_id: KN },
      {
        relation_type_paths: [
          {
            object_types: [{ id: "disease", need_total: true }, { id: "symptom" }],
            relation_types: [{ relation_type_id: "has_symptom" }],
          },
        ],
      },
    );
    expect(stray.body.details.field_violations[0].field).toBe("relation_type_paths[0].object_types[0].need_total");
  });

  it("answers TOON with response_format=toon", async () => {
    const res = await rest(
      server(),
      "query_instance_subgraph",
      { kn_id: KN, response_format: "toon" },
      {
        relation_type_paths: [
          {
            object_types: [{ id: "disease", condition: eq("disease_id", OBSTRUCTION) }, { id: "symptom" }],
            relation_types: [{ relation_type_id: "has_symptom" }],
          },
        ],
      },
    );
    expect(res.contentType).toBe("application/toon; charset=utf-8");
    expect((decode(res.text) as { entries: { path: string }[] }).entries[0]!.path).toBe(
      "disease -[has_symptom]-> symptom",
    );
  });
});

describe("the platform's own refusal of a subgraph (HTTP backend)", () => {
  it("keeps a 400 INVALID_ARGUMENT with the platform's error code (its text only in the log), never a dependency failure", async () => {
    const platform = await startRefusingPlatform(byName.get("http (simulator)")!.sim!);
    const server = await startServer({
      ONTOLOGY_MANAGER_URL: platform.url,
      ONTOLOGY_QUERY_URL: platform.url,
      LOG_LEVEL: "silent",
    });
    try {
      platform.answer(400, {
        error_code: "OntologyQuery.KnowledgeNetwork.InvalidParameter.TypePath",
        description: "路径长度为 0",
        solution: "",
      });
      const f = await rpcFailure(
        clientWith(KnowledgeToolsService, server.baseUrl, HEADERS).queryInstanceSubgraph(
          fromJson(QueryInstanceSubgraphRequestSchema, {
            kn_id: KN,
            relation_type_paths: [
              {
                object_types: [{ id: "disease" }, { id: "symptom" }],
                relation_types: [{ relation_type_id: "has_symptom" }],
              },
            ],
          }),
        ),
      );
      expect(f.code).toBe(Code.InvalidArgument);
      expect(f.message).toBe(
        "the platform (ontology-query) rejected the subgraph query (OntologyQuery.KnowledgeNetwork.InvalidParameter.TypePath)",
      );
      expectNoInternalAddress(`${f.message} ${f.hint}`);
    } finally {
      await server.close();
      await platform.close();
    }
  });
});

describe("query_instance_subgraph over MCP", () => {
  let client: Awaited<ReturnType<typeof connectHttp>>;
  beforeAll(async () => {
    client = await connectHttp(byName.get("http (simulator)")!.server.baseUrl, HEADERS);
  });
  afterAll(() => client.close());

  it("publishes edges as the walk's direction and the node condition as the recursive condition schema", async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "query_instance_subgraph")!;
    expect(tool.inputSchema.required).toEqual(["relation_type_paths"]);
    const text = JSON.stringify(tool.inputSchema);
    expect(text).toContain("行走方向的起点");
    expect(text).toContain(
      '"condition":{"description":"该节点实例的过滤条件（不填不过滤）；调用前按该对象类校验","$ref":',
    );
    expect(tool.description).toContain("backward");
  });

  it("answers the walk, the paths and the objects, and a plain message when nothing is linked", async () => {
    const a = await callOk(client, "query_instance_subgraph", {
      kn_id: KN,
      relation_type_paths: [
        {
          object_types: [{ id: "symptom", condition: eq("symptom_name", "吞咽困难") }, { id: "disease" }],
          relation_types: [{ relation_type_id: "has_symptom" }],
        },
        {
          object_types: [{ id: "symptom", condition: eq("symptom_name", "没有这个症状") }, { id: "disease" }],
          relation_types: [{ relation_type_id: "has_symptom" }],
        },
      ],
    });
    const [found, empty] = a["entries"] as Record<string, unknown>[];
    expect(found!["path"]).toBe("symptom <-[has_symptom]- disease");
    expect(found!["paths"]).toHaveLength(7);
    expect(empty!["message"]).toContain("object_types[0] (symptom) has no instance matching its condition");
  });

  it("fails with the relation's real direction and the corrected edge", async () => {
    const e = await callFails(client, "query_instance_subgraph", {
      kn_id: KN,
      relation_type_paths: [
        {
          object_types: [{ id: "disease" }, { id: "drugs" }],
          relation_types: [{ relation_type_id: "has_symptom" }],
        },
      ],
    });
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(fieldsOf(e)).toEqual(["relation_type_paths[0].relation_types[0].relation_type_id"]);
    expect(e.message).toContain("has_symptom (疾病症状) is defined disease → symptom");
    expect(e.next_step).toContain(
      '"relation_type_id":"cures","source_object_type_id":"disease","target_object_type_id":"drugs"',
    );
  });
});
