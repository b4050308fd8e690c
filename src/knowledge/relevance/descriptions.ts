import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import { contentTokens, normalizeText } from "../../core/text";
import type { Embedder } from "../../upstream/embeddings";

/**
 * Descriptions kept at most. A network's descriptions number in the hundreds
 * (the sample network: 17 relation types, 16 object types, about 150
 * properties), so this holds dozens of networks; at 1536 dimensions an entry
 * is about 6 KB, so the cache stays under 25 MB.
 */
const MAX_DESCRIPTIONS = 4096;
/** Embedding requests in flight at once when many descriptions are new. */
const EMBED_CONCURRENCY = 4;

/** What lexical ranking reads of a description. */
export interface DescriptionWords {
  /** The description as compared (normalizeText). */
  normalized: string;
  /** Its meaningful tokens (contentTokens). */
  tokens: ReadonlySet<string>;
}

interface Entry {
  words?: DescriptionWords;
  embedding?: Float32Array;
}

/**
 * The words and embeddings of the texts that describe a network's concepts
 * (relation types, object types, properties), computed once per distinct
 * text. Schema recall, kn_search's concept recall and its property and field
 * ranking describe the same concepts with the same texts on every call, and
 * until the network changes nothing about them changes: embedding and
 * segmenting them was most of those calls' CPU. Keyed by the text itself, an
 * entry can never be stale: a network that changes describes its concepts
 * with new texts, and the old ones leave as the least recently used.
 * Questions go through it too: one kn_search ranks relation types,
 * properties and search fields against the same question, and a question,
 * used once, is the first to leave.
 */
export class DescriptionCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly embedder: Embedder,
    private readonly maxEntries = MAX_DESCRIPTIONS,
  ) {}

  /** The description's normalised text and meaningful tokens. */
  words(text: string): DescriptionWords {
    const entry = this.entry(text);
    entry.words ??= { normalized: normalizeText(text), tokens: new Set(contentTokens(text)) };
    return entry.words;
  }

  /**
   * The descriptions' embeddings, in order: those not known yet are embedded
   * `batchSize` per request, at most EMBED_CONCURRENCY requests at once (a
   * batch size of 1 on a large network must not open a request per property).
   * A failing request fails the call and caches nothing of its batch.
   */
  async embeddings(ctx: CallContext, texts: readonly string[], batchSize = texts.length): Promise<Float32Array[]> {
    const known = new Map<string, Float32Array>();
    for (const text of texts) {
      const embedding = this.entry(text).embedding;
      if (embedding) known.set(text, embedding);
    }
    const missing = [...new Set(texts.filter((t) => !known.has(t)))];
    const size = Math.max(1, batchSize);
    const batches: string[][] = [];
    for (let i = 0; i < missing.length; i += size) batches.push(missing.slice(i, i + size));
    const settled = await settleWithLimit(batches, EMBED_CONCURRENCY, ctx.signal, async (batch) => {
      const vectors = await this.embedder.embed(ctx, batch);
      batch.forEach((text, i) => {
        known.set(text, vectors[i]!);
        this.entry(text).embedding = vectors[i]!;
      });
    });
    const failed = settled.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    return texts.map((t) => known.get(t)!);
  }

  /** The text's entry, made the most recently used; the least recently used go past maxEntries. */
  private entry(text: string): Entry {
    let entry = this.entries.get(text);
    if (entry) this.entries.delete(text);
    else entry = {};
    this.entries.set(text, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return entry;
  }
}
