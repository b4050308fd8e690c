import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { parseBundle } from "../../../src/kn/embedded/bundle";
import { EmbeddedBackend } from "../../../src/kn/embedded/engine";
import { searchSchemaInput } from "../../../src/knowledge/kn-tools/search-schema/input";
import { searchSchema } from "../../../src/knowledge/kn-tools/search-schema/search-schema";
import { DescriptionCache } from "../../../src/knowledge/relevance/descriptions";
import { localEmbedder } from "../../../src/upstream/embeddings";
import { testContext } from "../../helpers/call-context";

/**
 * search_schema on a large network: at 5000 relation types and more, coarse
 * recall narrows it by the question's words (to 300 relation types) before
 * the finer ranking, and what the question names still comes first. The
 * platform's tool never did this on search_schema (its coarse recall was
 * switched off on that path), ranking every relation type in one request.
 */

const WORDS = ["订单", "客户", "仓库", "物流", "发票", "合同", "供应商", "产品", "门店", "员工", "账户", "渠道"];

function bigNetwork(relationCount: number) {
  const types = Array.from({ length: 200 }, (_, i) => ({
    id: `t${i}`,
    name: `${WORDS[i % WORDS.length]}${i}`,
    primary_keys: ["id"],
    display_key: "name",
    data_properties: [
      { name: "id", type: "varchar" },
      { name: "name", type: "varchar" },
    ],
  }));
  types.push({ ...types[0]!, id: "disease", name: "疾病" }, { ...types[0]!, id: "symptom", name: "症状" });
  const relations = Array.from({ length: relationCount }, (_, i) => ({
    id: `r${i}`,
    name: `${WORDS[i % WORDS.length]}${WORDS[(i * 7) % WORDS.length]}关联${i}`,
    source_object_type_id: `t${i % 200}`,
    target_object_type_id: `t${(i * 13 + 1) % 200}`,
  }));
  relations.push({
    id: "has_symptom",
    name: "疾病症状",
    source_object_type_id: "disease",
    target_object_type_id: "symptom",
  });
  return {
    knowledge_network: { id: "kn_big", name: "大网络" },
    object_types: types,
    relation_types: relations,
  };
}

describe("search_schema on a network of more than 5000 relation types", () => {
  it("narrows it by the question's words before ranking, and finds the relation the question names", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
          done();
        },
      }),
    );
    const backend = new EmbeddedBackend([parseBundle(bigNetwork(6000), "big network")], { timeZone: "Asia/Shanghai" });
    const result = await searchSchema(
      { backend, embedder: localEmbedder, reranker: undefined, descriptions: new DescriptionCache(localEmbedder) },
      testContext({ log }),
      searchSchemaInput.parse({ query: "疾病有哪些症状", kn_id: "kn_big", max_concepts: 3 }),
    );
    expect(result.relation_types[0]?.id).toBe("has_symptom");
    expect(result.object_types.slice(0, 2).map((o) => o.id)).toEqual(["disease", "symptom"]);
    const narrowed = lines.find((l) => l["msg"] === "coarse recall narrowed the network");
    expect(narrowed).toMatchObject({ kn_id: "kn_big", relation_types: [6001, 300] });
  });

  it("leaves a smaller network whole", async () => {
    const lines: string[] = [];
    const log = pino(
      { level: "info" },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString("utf8"));
          done();
        },
      }),
    );
    const backend = new EmbeddedBackend([parseBundle(bigNetwork(100), "big network")], { timeZone: "Asia/Shanghai" });
    const result = await searchSchema(
      { backend, embedder: localEmbedder, reranker: undefined, descriptions: new DescriptionCache(localEmbedder) },
      testContext({ log }),
      searchSchemaInput.parse({ query: "疾病有哪些症状", kn_id: "kn_big", max_concepts: 3, enable_rerank: false }),
    );
    expect(result.relation_types.map((r) => r.id)).toEqual(["r0", "r1", "r2"]);
    expect(lines.join("")).not.toContain("coarse recall");
  });
});
