import { randomUUID } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  KnowledgeRetrievalService,
  type KnSearchRequestSchema,
  type KnSearchResponse,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { DEFAULT_BUNDLE } from "../../src/config-fields";
import { loadBundleFile } from "../../src/kn/embedded/bundle";
import { embedLocally } from "../../src/upstream/local-embedder";
import { clientWith } from "../helpers/rpc";
import { type ScriptedLlm, startScriptedLlm } from "../helpers/scripted-llm";
import { startServer, type TestServer } from "../helpers/server";

/**
 * kn_search's retrieval_config (spec kn-search-proxy.zh.md), the fields the
 * other kn-search tests leave without a behavioural check: each test compares
 * a run with the field at its default (or absent) against a run with it set,
 * over the embedded sample network, and asserts the outcome that differs — so
 * it fails if the field were ignored.
 */

const KN = [{ knowledgeNetworkId: "kn_medical" }];
type Req = Omit<MessageInitShape<typeof KnSearchRequestSchema>, "$typeName">;
type KnowledgeClient = Client<typeof KnowledgeRetrievalService>;

/** A request in a session of its own. */
function req(query: string, more: Omit<Req, "query" | "knIds"> = {}): Req {
  return { query, knIds: KN, sessionId: randomUUID(), ...more };
}

const relationIds = (r: KnSearchResponse) => r.relationTypes.map((t) => t.conceptId);
const objectIds = (r: KnSearchResponse) => r.objectTypes.map((o) => o.conceptId).sort();
const briefOf = (r: KnSearchResponse, id: string) =>
  r.objectTypes.find((o) => o.conceptId === id)!.dataProperties.map((p) => p.name);

describe("kn_search retrieval_config, field by field (native, sample network)", () => {
  let server: TestServer;
  let client: KnowledgeClient;
  beforeAll(async () => {
    server = await startServer({ LOG_LEVEL: "silent" });
    client = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-kn-config" });
  });
  afterAll(() => server.close());

  it("additional_context is ranked with the query: it changes the relation types, object types and brief properties recalled", async () => {
    const only = (additionalContext?: string) =>
      client.knSearch(
        req("上气道梗阻", {
          ...(additionalContext ? { additionalContext } : {}),
          retrievalConfig: { conceptRetrieval: { topK: 1 } },
          onlySchema: true,
        }),
      );
    const plain = await only();
    expect(relationIds(plain)).toEqual(["has_symptom"]);
    expect(objectIds(plain)).toEqual(["disease", "symptom"]);
    expect(briefOf(plain, "disease")).not.toContain("treatment");

    const aliases = await only("有哪些别名");
    expect(relationIds(aliases)).toEqual(["has_alias"]);
    expect(objectIds(aliases)).toEqual(["alias", "disease"]);

    const drugs = await only("用什么药物治疗");
    expect(relationIds(drugs)).toEqual(["cures"]);
    expect(objectIds(drugs)).toEqual(["disease", "drugs"]);
    // The property brief ranks the disease's properties against the context too: 治疗方案 now makes the cut.
    expect(briefOf(drugs, "disease")).toContain("treatment");
  });

  it("additional_context is ranked with the query when choosing the properties searched for instances", async () => {
    // One property besides the name is searched per type: the one most relevant to the question.
    const narrow = {
      semanticInstanceRetrieval: { semanticFieldKeepMin: 1, semanticFieldKeepMax: 2, perTypeInstanceLimit: 50 },
    };
    const diseases = (r: KnSearchResponse) => r.nodes.filter((n) => n.objectTypeId === "disease");
    const plain = await client.knSearch(req("儿童", { retrievalConfig: narrow }));
    // Without context, diseases come back by their names (and aliases: 儿童肺炎 names 小儿肺炎), not by their age.
    expect(diseases(plain).length).toBeGreaterThan(0);
    const named = new Set(diseases(plain).map((n) => n.instanceName));
    // Naming the age property in the context makes age the disease property searched: diseases of children come back by their age.
    const withContext = await client.knSearch(
      req("儿童", { additionalContext: "发病年龄段", retrievalConfig: narrow }),
    );
    const byAge = diseases(withContext).filter((n) => !named.has(n.instanceName));
    expect(byAge.length).toBeGreaterThan(0);
    for (const n of byAge) expect(n.dataProperties!["age"], n.instanceName).toBe("儿童");
  });

  it("additional_context is read by coarse recall too: it decides which relation types survive the coarse cut", async () => {
    // One relation type survives coarse recall, chosen by the question's words alone; 上气道梗阻 names none.
    const coarse = { conceptRetrieval: { coarseMinRelationCount: 1, coarseRelationLimit: 1 } };
    const plain = await client.knSearch(req("上气道梗阻", { retrievalConfig: coarse, onlySchema: true }));
    expect(plain.relationTypes).toHaveLength(1);
    expect(relationIds(plain)).not.toContain("has_alias");
    const aliases = await client.knSearch(
      req("上气道梗阻", { additionalContext: "有哪些别名", retrievalConfig: coarse, onlySchema: true }),
    );
    expect(relationIds(aliases)).toEqual(["has_alias"]);
    expect(objectIds(aliases)).toEqual(["alias", "disease"]);
  });

  it("semantic_field_keep_ratio sets the share of a type's text properties searched", async () => {
    // 手术治疗 is a value of disease.treatment, not the best-ranked of the disease's 11 text properties for that query.
    // keep_min=1 so that the ratio alone decides: 0.2 (default) → ceil(2.2)=3 properties, 1 → all 11.
    const diseasesOf = (r: KnSearchResponse) => r.nodes.filter((n) => n.objectTypeId === "disease");
    const byDefault = await client.knSearch(
      req("手术治疗", { retrievalConfig: { semanticInstanceRetrieval: { semanticFieldKeepMin: 1 } } }),
    );
    expect(diseasesOf(byDefault)).toEqual([]);
    const all = await client.knSearch(
      req("手术治疗", {
        retrievalConfig: { semanticInstanceRetrieval: { semanticFieldKeepMin: 1, semanticFieldKeepRatio: 1 } },
      }),
    );
    expect(diseasesOf(all).length).toBeGreaterThan(0);
    for (const n of diseasesOf(all))
      expect(String(n.dataProperties!["treatment"]), n.instanceName).toContain("手术治疗");
  });

  it("semantic_field_keep_max caps the properties searched, whatever the ratio asks for", async () => {
    // ratio=1 asks for all 11 of the disease's text properties; keep_max (15 by default) allows them, 1 keeps the name only.
    const all = { semanticFieldKeepMin: 1, semanticFieldKeepRatio: 1 };
    const byDefault = await client.knSearch(req("手术治疗", { retrievalConfig: { semanticInstanceRetrieval: all } }));
    expect(byDefault.nodes.some((n) => n.objectTypeId === "disease")).toBe(true);
    const capped = await client.knSearch(
      req("手术治疗", { retrievalConfig: { semanticInstanceRetrieval: { ...all, semanticFieldKeepMax: 1 } } }),
    );
    expect(capped.nodes.some((n) => n.objectTypeId === "disease")).toBe(false);
  });

  it("coarse_relation_limit keeps only that many relation types, the best by the question's words, for ranking", async () => {
    const coarse = { coarseMinRelationCount: 1 };
    const byDefault = await client.knSearch(
      req("上气道梗阻有哪些症状", { retrievalConfig: { conceptRetrieval: coarse }, onlySchema: true }),
    );
    expect(byDefault.relationTypes).toHaveLength(10);
    const limited = await client.knSearch(
      req("上气道梗阻有哪些症状", {
        retrievalConfig: { conceptRetrieval: { ...coarse, coarseRelationLimit: 3 } },
        onlySchema: true,
      }),
    );
    expect(limited.relationTypes).toHaveLength(3);
    expect(relationIds(limited)).toContain("has_symptom");
    // The object types are those at the kept relations' ends.
    const ends = new Set(limited.relationTypes.flatMap((r) => [r.sourceObjectTypeId, r.targetObjectTypeId]));
    expect(objectIds(limited)).toEqual([...ends].sort());
  });

  it("coarse_object_limit keeps only that many object types, the ends of the best relation types first, and drops relation types that lose an end", async () => {
    const coarse = { coarseMinRelationCount: 1 };
    const byDefault = await client.knSearch(
      req("上气道梗阻有哪些症状", { retrievalConfig: { conceptRetrieval: coarse }, onlySchema: true }),
    );
    expect(byDefault.relationTypes).toHaveLength(10);
    expect(byDefault.objectTypes.length).toBeGreaterThan(2);
    const limited = await client.knSearch(
      req("上气道梗阻有哪些症状", {
        retrievalConfig: { conceptRetrieval: { ...coarse, coarseObjectLimit: 2 } },
        onlySchema: true,
      }),
    );
    // has_symptom is the best relation type: its ends are the two types kept, and only relation types between them remain.
    expect(objectIds(limited)).toEqual(["disease", "symptom"]);
    expect(relationIds(limited).sort()).toEqual(["has_complication", "has_symptom"]);
  });
});

describe("kn_search additional_context with skip_llm=false", () => {
  let llm: ScriptedLlm;
  let server: TestServer;
  let client: KnowledgeClient;
  beforeAll(async () => {
    llm = await startScriptedLlm();
    server = await startServer({ LLM_BASE_URL: llm.baseUrl, LLM_MODEL: "scripted", LOG_LEVEL: "silent" });
    client = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-kn-config" });
  });
  afterAll(async () => {
    await server.close();
    await llm.close();
  });

  it("is told to the LLM that chooses the relation types, and so changes its choice", async () => {
    // The scripted LLM picks the aliases when the context asks for them, else the symptoms.
    const numberOf = (prompt: string, relationId: string) =>
      Number(
        prompt
          .split("\n")
          .find((l) => new RegExp(`^\\d+\\. ${relationId} `).test(l))
          ?.split(".")[0],
      );
    llm.setFallback((r) => {
      const prompt = r.messages[1]!.content;
      const context = prompt.split("\n").find((l) => l.startsWith("Additional context: ")) ?? "";
      return {
        content: JSON.stringify({
          selected: [numberOf(prompt, context.includes("别名") ? "has_alias" : "has_symptom")],
        }),
      };
    });
    const llmPicks = { conceptRetrieval: { skipLlm: false } };
    const plain = await client.knSearch(req("上气道梗阻", { retrievalConfig: llmPicks, onlySchema: true }));
    expect(relationIds(plain)).toEqual(["has_symptom"]);
    const aliases = await client.knSearch(
      req("上气道梗阻", { additionalContext: "有哪些别名", retrievalConfig: llmPicks, onlySchema: true }),
    );
    expect(relationIds(aliases)).toEqual(["has_alias"]);
    expect(objectIds(aliases)).toEqual(["alias", "disease"]);
  });
});

/** One request to the embeddings endpoint: the texts it carried. */
type EmbeddingsCall = string[];

/** A loopback OpenAI-compatible /v1/embeddings endpoint (local lexical vectors) that records every request's inputs. */
async function startEmbeddings() {
  const calls: EmbeddingsCall[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if ((req.url ?? "").split("?")[0] !== "/v1/embeddings") {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { input: string | string[]; model: string };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    calls.push(input);
    const data = input.map((text, index) => ({ index, embedding: [...embedLocally(text)] }));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data, model: body.model }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("kn_search semantic_field_rerank_batch_size, with an embeddings endpoint", () => {
  let embeddings: Awaited<ReturnType<typeof startEmbeddings>>;
  // What instance recall embeds for each property it may search: "<name> <display_name> <comment>".
  const descriptions = new Set(
    loadBundleFile(DEFAULT_BUNDLE).object_types.flatMap((o) =>
      o.data_properties.map((p) => `${p.name} ${p.display_name} ${p.comment}`),
    ),
  );
  beforeAll(async () => {
    embeddings = await startEmbeddings();
  });
  afterAll(async () => {
    await embeddings.close();
  });

  /**
   * The answers of `times` calls on a fresh server (descriptions are embedded
   * once per process), and the embeddings requests that carried property
   * descriptions during each.
   */
  async function run(batch: number | undefined, times = 1) {
    const server = await startServer({ EMBEDDINGS_BASE_URL: embeddings.baseUrl, LOG_LEVEL: "silent" });
    const client = clientWith(KnowledgeRetrievalService, server.baseUrl, { "x-account-id": "u-kn-config" });
    try {
      const out: { res: KnSearchResponse; calls: string[][] }[] = [];
      for (let i = 0; i < times; i++) {
        const before = embeddings.calls.length;
        // The property brief (concept recall) embeds the same descriptions: turned off, so that only instance recall does.
        const res = await client.knSearch(
          req("上气道梗阻", {
            retrievalConfig: {
              conceptRetrieval: { enablePropertyBrief: false },
              ...(batch === undefined ? {} : { semanticInstanceRetrieval: { semanticFieldRerankBatchSize: batch } }),
            },
          }),
        );
        const calls = embeddings.calls.slice(before).filter((c) => c.some((t) => descriptions.has(t)));
        // A request carries descriptions only, never a description and something else.
        for (const c of calls) expect(c.every((t) => descriptions.has(t))).toBe(true);
        out.push({ res, calls });
      }
      return out;
    } finally {
      await server.close();
    }
  }

  it("embeds that many property descriptions per request, with the same ranking", async () => {
    const [byDefault] = await run(undefined);
    const searched = byDefault!.calls.flat();
    expect(searched.length).toBeGreaterThan(4);
    // Default 128: every description in one request (the client's own cap, 64 per request, is not reached here).
    expect(searched.length).toBeLessThanOrEqual(64);
    expect(byDefault!.calls).toHaveLength(1);

    const [batched] = await run(4);
    expect(batched!.calls.every((c) => c.length <= 4)).toBe(true);
    expect(batched!.calls).toHaveLength(Math.ceil(searched.length / 4));
    expect(batched!.calls.flat().sort()).toEqual([...searched].sort());
    // Batching changes the requests, not the scores.
    const nodes = (r: KnSearchResponse) => r.nodes.map((n) => [n.objectTypeId, n.instanceName, n.finalScore]);
    expect(nodes(batched!.res)).toEqual(nodes(byDefault!.res));
    expect(nodes(byDefault!.res)).toContainEqual(["disease", "上、下气道梗阻", expect.any(Number)]);
  });

  it("embeds each property description once per process: the next call sends only its question", async () => {
    const [first, second] = await run(undefined, 2);
    expect(first!.calls.flat().length).toBeGreaterThan(4);
    expect(second!.calls).toEqual([]);
    const nodes = (r: KnSearchResponse) => r.nodes.map((n) => [n.objectTypeId, n.instanceName, n.finalScore]);
    expect(nodes(second!.res)).toEqual(nodes(first!.res));
  });
});
