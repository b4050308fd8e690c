import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Hit, type IndexQuery, MemoryIndex, type Scoring } from "../src/memrecall/memory-index";
import { keywordEvidence, type SemanticScale, semanticEvidence } from "../src/memrecall/relevance";
import type { MemoryFilters } from "../src/store/memories/memory-store";
import { type EvalSet, readSet, storeSet } from "./memrecall";
import type { BenchSetup } from "./memrecall-deps";
import { line } from "./stats";

/** The sets the weight is fitted on: the development sets only, never the held-out one. */
const DEVELOPMENT_SETS = ["memrecall-eval.json", "memrecall-work-eval.json", "memrecall-dev-22.json"];

/** One hybrid search's candidates: each one's keyword and semantic evidence, and whether it is relevant. */
interface Ranking {
  candidates: { keyword: number; semantic: number; relevant: boolean }[];
}

/** An index that also notes, per hybrid search, each memory's keyword share and cosine, by key. */
class NotingIndex extends MemoryIndex {
  last = new Map<string, { share: number; cosine: number }>();

  override async rank(
    userId: string,
    version: number | undefined,
    query: IndexQuery,
    filters: MemoryFilters,
    limit: number,
    score: Scoring,
  ): Promise<Hit[]> {
    if (query.keyword && query.vector) {
      const every = Number.MAX_SAFE_INTEGER;
      // Every memory once by its share and once by its cosine (moved above 0, which ranking drops).
      const shares = await super.rank(userId, version, query, filters, every, (share) => share);
      const cosines = await super.rank(userId, version, query, filters, every, (_, cosine) => cosine + 2);
      const share = new Map(shares.map((h) => [h.memory_key, h.score]));
      this.last = new Map(
        cosines.map((h) => [h.memory_key, { share: share.get(h.memory_key) ?? 0, cosine: h.score - 2 }]),
      );
    }
    return super.rank(userId, version, query, filters, limit, score);
  }
}

/**
 * The fusion weight the development sets' rankings ask for, under `setup`'s
 * semantic scale: hybrid relevance is the keyword evidence plus weight ×
 * the semantic evidence (relevance.ts), so the weight that ranks their
 * relevant memories best is that of a conditional logit over each query's
 * candidates (the memories holding a word of it or above the floor), with
 * the keyword evidence's coefficient free: the ratio of the two
 * coefficients. Printed beside the weight in use (the local embedder's was
 * fitted this way: LEXICAL_FUSION_WEIGHT; a model's is the probe's).
 */
export async function benchFusionWeight(setup: BenchSetup): Promise<void> {
  const scale = setup.memrecall.semanticScale;
  if (scale === undefined) {
    line("hybrid fusion weight", "not fitted: the semantic scale is the fixed range (the probe is off or failed)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "bench-fusion-"));
  const rankings: Ranking[] = [];
  try {
    for (const [i, file] of DEVELOPMENT_SETS.entries())
      rankings.push(...(await rankingsOf(setup, readSet(file), scale, join(dir, `${i}.db`))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [keyword, semantic] = conditionalLogit(rankings);
  line(
    "hybrid fusion weight",
    `fitted on the development sets' rankings ${(semantic / keyword).toFixed(3)} ` +
      `(${rankings.length} queries; keyword coefficient ${keyword.toFixed(2)}), in use ${scale.weight.toFixed(3)}`,
  );
}

async function rankingsOf(setup: BenchSetup, data: EvalSet, scale: SemanticScale, path: string): Promise<Ranking[]> {
  let noting: NotingIndex | undefined;
  const stored = await storeSet(setup, data, path, (store) => {
    noting = new NotingIndex(store, 4);
    return noting;
  });
  try {
    const rankings: Ranking[] = [];
    for (const q of data.queries) {
      if (q.relevant.length === 0) continue;
      await stored.search(q.query, "hybrid", 0);
      const candidates = [...noting!.last]
        .filter(([, m]) => m.share > 0 || m.cosine > scale.floor)
        .map(([key, m]) => ({
          keyword: keywordEvidence(m.share),
          semantic: semanticEvidence(m.cosine, scale),
          relevant: q.relevant.includes(key),
        }));
      if (candidates.some((c) => c.relevant)) rankings.push({ candidates });
    }
    return rankings;
  } finally {
    await stored.close();
  }
}

/**
 * The two coefficients maximising the likelihood that each query's relevant
 * memories are the ones picked among its candidates (softmax over the
 * candidates), by gradient ascent from keyword-only (1, 0); the likelihood is
 * concave, so the steps converge.
 */
function conditionalLogit(rankings: readonly Ranking[]): [number, number] {
  let w: [number, number] = [1, 0];
  const step = 0.5 / rankings.length;
  for (let iteration = 0; iteration < 3000; iteration++) {
    const gradient: [number, number] = [0, 0];
    for (const { candidates } of rankings) {
      const scores = candidates.map((c) => w[0] * c.keyword + w[1] * c.semantic);
      const top = Math.max(...scores);
      const e = scores.map((s) => Math.exp(s - top));
      const all = e.reduce((a, b) => a + b, 0);
      const relevant = e.reduce((a, b, i) => a + (candidates[i]!.relevant ? b : 0), 0);
      for (const [f, of] of [
        [0, (c: Ranking["candidates"][number]) => c.keyword],
        [1, (c: Ranking["candidates"][number]) => c.semantic],
      ] as const) {
        const expectedRelevant = e.reduce((a, b, i) => a + (candidates[i]!.relevant ? b * of(candidates[i]!) : 0), 0);
        const expected = e.reduce((a, b, i) => a + b * of(candidates[i]!), 0);
        gradient[f] += expectedRelevant / relevant - expected / all;
      }
    }
    w = [w[0] + step * gradient[0], w[1] + step * gradient[1]];
  }
  return w;
}
