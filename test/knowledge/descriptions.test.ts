import { describe, expect, it } from "vitest";
import { verbatim } from "../../src/errors/text";
import { ToolError } from "../../src/errors/tool-error";
import { DescriptionCache } from "../../src/knowledge/relevance/descriptions";
import { semanticRelevance } from "../../src/knowledge/relevance/semantic";
import { type Embedder, localEmbedder } from "../../src/upstream/embeddings";
import { testContext } from "../helpers/call-context";

/** The local embedder, noting every batch it is asked for; fails while `failing` is set. */
function countingEmbedder() {
  const batches: string[][] = [];
  const state = { failing: false };
  const embedder: Embedder = {
    name: "counting",
    async embed(ctx, texts) {
      batches.push([...texts]);
      if (state.failing)
        throw new ToolError({ code: "unavailable", reason: "EMBEDDINGS_UNAVAILABLE", message: verbatim("down") });
      return localEmbedder.embed(ctx, texts);
    },
  };
  return { embedder, batches, state };
}

const PROPERTIES = ["disease_name 疾病名称 疾病的名字", "treatment 治疗方法", "money 治疗费用 人民币"];

describe("the description cache", () => {
  it("embeds each description once across calls and answers what the embedder answers", async () => {
    const { embedder, batches } = countingEmbedder();
    const cache = new DescriptionCache(embedder);
    const first = await cache.embeddings(testContext(), PROPERTIES);
    const again = await cache.embeddings(testContext(), [PROPERTIES[2]!, PROPERTIES[0]!]);
    expect(batches).toEqual([PROPERTIES]);
    expect(again).toEqual([first[2], first[0]]);
    expect(first).toEqual(await localEmbedder.embed(testContext(), PROPERTIES));
  });

  it("asks only for the descriptions it does not know, batchSize per request", async () => {
    const { embedder, batches } = countingEmbedder();
    const cache = new DescriptionCache(embedder);
    await cache.embeddings(testContext(), [PROPERTIES[0]!]);
    await cache.embeddings(testContext(), [...PROPERTIES, "age 发病年龄"], 2);
    expect(batches).toEqual([[PROPERTIES[0]], [PROPERTIES[1], PROPERTIES[2]], ["age 发病年龄"]]);
  });

  it("caches nothing of a failed request: the next call asks again", async () => {
    const { embedder, batches, state } = countingEmbedder();
    const cache = new DescriptionCache(embedder);
    state.failing = true;
    await expect(cache.embeddings(testContext(), PROPERTIES)).rejects.toMatchObject({
      reason: "EMBEDDINGS_UNAVAILABLE",
    });
    state.failing = false;
    await cache.embeddings(testContext(), PROPERTIES);
    expect(batches).toEqual([PROPERTIES, PROPERTIES]);
  });

  it("keeps at most maxEntries descriptions, the least recently used going first", async () => {
    const { embedder, batches } = countingEmbedder();
    const cache = new DescriptionCache(embedder, 2);
    await cache.embeddings(testContext(), [PROPERTIES[0]!, PROPERTIES[1]!]);
    await cache.embeddings(testContext(), [PROPERTIES[0]!]); // now the most recently used
    await cache.embeddings(testContext(), [PROPERTIES[2]!]); // PROPERTIES[1] goes
    await cache.embeddings(testContext(), [PROPERTIES[0]!, PROPERTIES[1]!]);
    expect(batches).toEqual([[PROPERTIES[0], PROPERTIES[1]], [PROPERTIES[2]], [PROPERTIES[1]]]);
  });

  it("gives semantic relevance the same scores from the cache as computed afresh", async () => {
    const question = "肺炎的治疗费用是多少";
    const fresh = await semanticRelevance(testContext(), new DescriptionCache(localEmbedder), question, PROPERTIES, 1);
    const cache = new DescriptionCache(localEmbedder);
    await semanticRelevance(testContext(), cache, "另一个问题", PROPERTIES, 128);
    expect(await semanticRelevance(testContext(), cache, question, PROPERTIES, 128)).toEqual(fresh);
    expect(fresh[2]).toBeGreaterThan(fresh[0]!);
  });
});
