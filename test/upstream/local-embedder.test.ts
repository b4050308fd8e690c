import { describe, expect, it } from "vitest";
import { normalizeText, tokenize } from "../../src/core/text";
import { embedLocally, LOCAL_EMBEDDING_DIMENSIONS, normalizeInPlace } from "../../src/upstream/local-embedder";

/**
 * The local embedder as first written, feature by feature: memories stored
 * with it keep their embeddings, so any faster way of computing them must
 * give exactly the same vectors.
 */
function reference(text: string): Float32Array {
  const vector = new Float32Array(LOCAL_EMBEDDING_DIMENSIONS);
  const normalized = normalizeText(text);
  const chars = [...normalized.replace(/[^\p{L}\p{N}]+/gu, " ")];
  const fnv = (s: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    return h >>> 0;
  };
  const add = (feature: string, weight: number) => {
    const h = fnv(feature);
    vector[h % LOCAL_EMBEDDING_DIMENSIONS]! += (h & 0x80000000) === 0 ? weight : -weight;
  };
  for (let n = 1; n <= 3; n++) {
    for (let i = 0; i + n <= chars.length; i++) {
      const gram = chars.slice(i, i + n).join("");
      if (gram.trim().length === n) add(`c${n}:${gram}`, n === 1 ? 0.5 : 1);
    }
  }
  for (const token of tokenize(normalized)) add(`w:${token}`, 1.5);
  return normalizeInPlace(vector);
}

const TEXTS = [
  "",
  "   ",
  "肺炎有哪些症状",
  "上、下气道梗阻",
  "ＩｇＡ（２型）肾病",
  "生产环境 PostgreSQL 数据库配置\nhost=pg-prod.internal port=5432，连接池 max_connections=200",
  "a b c d e",
  "x",
  "emoji 😀 in 𠀋 text 𝒜𝒝",
  "𠀋𠀌𠀍",
  " 𠀋 a𠀋b 𠀋 𠀋 ",
  "𠀋 x 𠀋x𠀋",
  "Redis 7, maxmemory 2gb, allkeys-lru — what did we decide about the embedding model last week?",
  "趋势图用折线图，深色主题，坐标轴从零开始，图例放在右侧。".repeat(30),
];

describe("the local lexical embedder", () => {
  it.each(TEXTS)("gives exactly the vector of its first implementation for %j", (text) => {
    expect(embedLocally(text)).toEqual(reference(text));
  });

  it("is unit length, or zero for a text without letters or digits", () => {
    const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    expect(norm(embedLocally("肺炎有哪些症状"))).toBeCloseTo(1, 5);
    expect(norm(embedLocally(" ,.;"))).toBe(0);
  });
});
