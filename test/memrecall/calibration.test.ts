import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { DEFAULT_GLOSSARY, MEMRECALL_PROBE } from "../../src/config-fields";
import { learnScale, loadProbe, type ProbeMeasure } from "../../src/memrecall/calibration";
import { loadGlossary } from "../../src/memrecall/glossary";
import { embedMemoryText, LEXICAL_FUSION_WEIGHT } from "../../src/memrecall/lexical-embedder";
import { fixedSemanticRelevance, PRIOR, semanticRelevance } from "../../src/memrecall/relevance";
import { clientWith } from "../helpers/rpc";
import { type LogLine, startServer } from "../helpers/server";
import { cosineOf, type LabelledSet, startStandinEmbeddings } from "../helpers/standin-embeddings";
import { probeMeaningOf } from "../helpers/standin-labels";

/**
 * Issue 34 item 1: memory search learns what a model's cosines mean from a
 * shipped probe set (data/memrecall/probe.json) at start-up, and a probe that
 * fails leaves the service up on the fixed range with one warning.
 */

const probe = loadProbe(MEMRECALL_PROBE);
const CALIBRATED = "memory search calibrated for the model";
const NOT_CALIBRATED = "memory search not calibrated: the probe failed, semantic relevance uses the fixed range";

describe("the probe set", () => {
  it("holds 60 or more paraphrase and unrelated pairs in Chinese and in English, each text once, under a version and a digest", () => {
    expect(probe.version).toBe(1);
    expect(probe.digest).toMatch(/^[0-9a-f]{12}$/);
    for (const language of ["en", "zh"] as const) {
      for (const kind of ["paraphrase", "unrelated"] as const) {
        const n = probe.pairs.filter((p) => p.language === language && p.kind === kind).length;
        expect(n, `${language} ${kind}`).toBeGreaterThanOrEqual(60);
      }
    }
    const texts = probe.pairs.flatMap((p) => [p.memory, p.query]);
    expect(new Set(texts).size).toBe(texts.length);
  });
});

/** A seeded generator of standard normal numbers. */
function normals(seed: number): () => number {
  let s = seed;
  const uniform = () => {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    return (s + 0.5) / 2_147_483_648;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** `n` pairs of each kind: cosines around `paraphrase` and `unrelated` (sd 0.05), shares of their own. */
function measures(paraphrase: number, unrelated: number, cosineOfShare = 0): ProbeMeasure[] {
  const z = normals(7);
  const out: ProbeMeasure[] = [];
  for (const [kind, mean, share] of [
    ["paraphrase", paraphrase, 0.4],
    ["unrelated", unrelated, 0.05],
  ] as const) {
    for (let i = 0; i < 150; i++) {
      const s = Math.max(0, share + 0.15 * z());
      out.push({ kind, share: s, cosine: mean + 0.05 * z() + cosineOfShare * s });
    }
  }
  return out;
}

describe("learnScale: a model's scale from the probe's cosines", () => {
  it("puts the floor half way between the kinds and the ceiling where their likelihood ratio makes 0.9, all of it counted when it is not the words again", () => {
    const { scale } = learnScale(measures(0.5, 0.1));
    expect(scale.floor).toBeCloseTo(0.3, 1);
    expect(semanticRelevance(scale.floor + 1e-9, scale)).toBeCloseTo(PRIOR, 3);
    expect(semanticRelevance(scale.ceiling, scale)).toBeCloseTo(0.9, 6);
    expect(scale.ceiling).toBeLessThan(0.5);
    expect(scale.weight).toBeGreaterThan(0.9);
  });

  it("gives one model's cosines the same meaning whether its unrelated texts sit at 0.15 or at 0.7", () => {
    const low = measures(0.5, 0.15);
    const high = low.map((m) => ({ ...m, cosine: 0.7 + (0.3 * (m.cosine - 0.15)) / 0.85 }));
    const a = learnScale(low).scale;
    const b = learnScale(high).scale;
    for (const c of [0.2, 0.3, 0.4, 0.5, 0.6]) {
      expect(semanticRelevance(c, a)).toBeCloseTo(semanticRelevance(0.7 + (0.3 * (c - 0.15)) / 0.85, b), 9);
    }
    expect(a.weight).toBeCloseTo(b.weight, 9);
  });

  it("counts nothing of a cosine that only repeats the words (the keyword share), and moves no relevance by one that does not tell the kinds apart", () => {
    const words = learnScale(measures(0.1, 0.1, 1)).scale;
    expect(words.weight).toBeLessThan(0.15);
    expect(learnScale(measures(0.1, 0.1, 0)).scale.ceiling).toBeGreaterThan(1);
    for (const c of [0.15, 0.2, 0.3])
      expect(semanticRelevance(c, learnScale(measures(0.2, 0.2)).scale)).toBeLessThan(0.05);
  });
});

/** The dev set whose meanings the stand-in's vectors come from, and what it labels the probe's texts. */
const SET = JSON.parse(
  readFileSync(new URL("../../bench/memrecall-dev-22.json", import.meta.url), "utf8"),
) as LabelledSet;
const meaningOf = probeMeaningOf(probe);

/** An embeddings endpoint in front of `target` that answers 503 while `failing`, or never while `hanging`. */
async function startGate(target: string) {
  const gate = { failing: false, hanging: false };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (gate.hanging) return;
    if (gate.failing) {
      res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
      return;
    }
    const answer = await fetch(`${target}/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(gate, {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

const lines = (logs: LogLine[], msg: string) => logs.filter((l) => l.msg === msg);

describe("calibration at start-up against an embeddings endpoint (the stand-in model)", () => {
  const query = SET.queries.find((q) => q.relevant.length === 1)!;
  const memory = SET.memories.find((m) => m.memory_key === query.relevant[0])!;
  let standin: Awaited<ReturnType<typeof startStandinEmbeddings>>;
  let gate: Awaited<ReturnType<typeof startGate>>;
  beforeAll(async () => {
    standin = await startStandinEmbeddings({ set: SET, noise: 1, base: 0.15, seed: 34, meaningOf });
    gate = await startGate(standin.baseUrl);
  });
  afterAll(async () => {
    await gate.close();
    await standin.close();
  });

  /** The memory stored and the query searched in semantic mode: its relevance, and the cosine the stand-in gives the two. */
  async function search(baseUrl: string) {
    const c = clientWith(MemRecallService, baseUrl, { "x-account-id": `u-${randomUUID().slice(0, 8)}` });
    await c.storeMemory({ memoryKey: memory.memory_key, summary: memory.summary, content: memory.content });
    const { results } = await c.searchMemories({ query: query.query, searchMode: "semantic", minRelevanceScore: 0 });
    const cosine = cosineOf(
      standin.model.embed(query.query),
      standin.model.embed(`${memory.summary}\n${memory.content}`),
    );
    return { relevance: results.find((r) => r.memoryKey === memory.memory_key)?.relevanceScore, cosine };
  }

  it("learns the model's scale once, logs it, and searches with it", async () => {
    const server = await startServer({
      EMBEDDINGS_BASE_URL: gate.baseUrl,
      EMBEDDINGS_MODEL: "standin",
      LOG_LEVEL: "info",
    });
    try {
      const [learned, ...more] = lines(server.logs, CALIBRATED);
      expect(more).toEqual([]);
      expect(learned).toMatchObject({ model: "standin", probe_version: 1, probe_digest: probe.digest });
      expect(lines(server.logs, NOT_CALIBRATED)).toEqual([]);
      const scale = {
        floor: learned!["semantic_floor"] as number,
        ceiling: learned!["semantic_ceiling"] as number,
        weight: learned!["semantic_weight"] as number,
      };
      // The stand-in's noise has nothing to do with the words: all its evidence counts.
      expect(scale.weight).toBeGreaterThan(0.9);
      const { relevance, cosine } = await search(server.baseUrl);
      expect(relevance).toBeCloseTo(semanticRelevance(cosine, scale), 2);
      expect(relevance).toBeGreaterThan(0.9);
    } finally {
      await server.close();
    }
  });

  it("starts on the fixed range with one warning when the probe fails, ready, its searches working", async () => {
    gate.failing = true;
    const server = await startServer({ EMBEDDINGS_BASE_URL: gate.baseUrl, EMBEDDINGS_MODEL: "standin-down" });
    gate.failing = false;
    try {
      const warnings = lines(server.logs, NOT_CALIBRATED);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, model: "standin-down", probe_digest: probe.digest });
      expect(lines(server.logs, CALIBRATED)).toEqual([]);
      expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
      const { relevance, cosine } = await search(server.baseUrl);
      expect(relevance).toBeCloseTo(fixedSemanticRelevance(cosine, 0.25, 0.7), 2);
    } finally {
      await server.close();
    }
  });

  it("gives up within MEMRECALL_CALIBRATION_TIMEOUT_MS when the endpoint does not answer", async () => {
    gate.hanging = true;
    const started = performance.now();
    const server = await startServer({
      EMBEDDINGS_BASE_URL: gate.baseUrl,
      EMBEDDINGS_MODEL: "standin-hanging",
      MEMRECALL_CALIBRATION_TIMEOUT_MS: "300",
    });
    const took = performance.now() - started;
    gate.hanging = false;
    try {
      expect(took).toBeLessThan(5000);
      expect(lines(server.logs, NOT_CALIBRATED)).toHaveLength(1);
      expect((await search(server.baseUrl)).relevance).toBeDefined();
    } finally {
      await server.close();
    }
  });

  it("keeps MEMRECALL_SEMANTIC_FLOOR and CEILING over what it learns, with the learned weight", async () => {
    const server = await startServer({
      EMBEDDINGS_BASE_URL: gate.baseUrl,
      EMBEDDINGS_MODEL: "standin",
      MEMRECALL_SEMANTIC_FLOOR: "0.3",
      MEMRECALL_SEMANTIC_CEILING: "0.8",
    });
    try {
      const { relevance, cosine } = await search(server.baseUrl);
      expect(relevance).toBeCloseTo(semanticRelevance(cosine, { floor: 0.3, ceiling: 0.8, weight: 1 }), 2);
    } finally {
      await server.close();
    }
  });
});

describe("calibration at start-up of MemRecall's local embedder (no endpoint)", () => {
  const glossary = loadGlossary(DEFAULT_GLOSSARY);
  const memory = { summary: "数据库配置", content: "生产库 PostgreSQL 15，连接池 50，主机 db-prod-01:5432。" };
  const query = "生产数据库的连接池设了多大";
  const cosine = cosineOf(
    embedMemoryText(query, glossary),
    embedMemoryText(`${memory.summary}\n${memory.content}`, glossary),
  );

  async function semanticRelevanceAt(baseUrl: string): Promise<number | undefined> {
    const c = clientWith(MemRecallService, baseUrl, { "x-account-id": `u-${randomUUID().slice(0, 8)}` });
    await c.storeMemory({ memoryKey: "db_001", ...memory });
    const { results } = await c.searchMemories({ query, searchMode: "semantic", minRelevanceScore: 0 });
    return results.find((r) => r.memoryKey === "db_001")?.relevanceScore;
  }

  it("is probed like a model, its fusion weight the one fitted on the development sets' rankings, and each start logs it", async () => {
    // A service built earlier in this process has measured it: this start logs the scale all the same.
    await (await startServer({ LOG_LEVEL: "silent" })).close();
    const server = await startServer({ LOG_LEVEL: "info" });
    try {
      const [learned, ...more] = lines(server.logs, CALIBRATED);
      expect(more).toEqual([]);
      expect(learned).toMatchObject({ measured_earlier: true });
      expect(learned).toMatchObject({ model: "local-lexical+glossary", semantic_weight: LEXICAL_FUSION_WEIGHT });
      // The probe's own measure of it, logged beside: more than the rankings ask for.
      expect(learned!["probe_weight"]).toBeGreaterThan(LEXICAL_FUSION_WEIGHT);
      const scale = {
        floor: learned!["semantic_floor"] as number,
        ceiling: learned!["semantic_ceiling"] as number,
        weight: LEXICAL_FUSION_WEIGHT,
      };
      expect(cosine).toBeGreaterThan(scale.floor);
      expect(await semanticRelevanceAt(server.baseUrl)).toBeCloseTo(semanticRelevance(cosine, scale), 2);
    } finally {
      await server.close();
    }
  });

  it("keeps the fixed range (0.1, 0.5) when MEMRECALL_CALIBRATION_TIMEOUT_MS=0 turns the probe off", async () => {
    const server = await startServer({ LOG_LEVEL: "info", MEMRECALL_CALIBRATION_TIMEOUT_MS: "0" });
    try {
      expect(lines(server.logs, CALIBRATED)).toEqual([]);
      expect(lines(server.logs, NOT_CALIBRATED)).toEqual([]);
      expect(await semanticRelevanceAt(server.baseUrl)).toBeCloseTo(fixedSemanticRelevance(cosine, 0.1, 0.5), 2);
    } finally {
      await server.close();
    }
  });
});
