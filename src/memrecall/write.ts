import type { CallContext } from "../core/call-context";
import type { MemoryRecord } from "../store/memories/memory-store";
import { MAX_CONTENT_BYTES, type StoreMemoryInput } from "./inputs";
import { extractLocally } from "./keyword-extraction";
import type { MemoriesDeps } from "./memories-deps";
import { bumpVersion, ownerOf } from "./owner";
import { searchTextOf } from "./search-text";

/** Keywords extracted for a memory stored without any. */
const STORED_KEYWORDS = 8;
/** Characters of a memory that go into its embedding (endpoints limit input size). */
const EMBED_CHARS = 8000;

export interface StoredMemory {
  record: MemoryRecord;
  created: boolean;
}

/**
 * StoreMemory: creates the memory or replaces the caller's memory with that
 * key. Content over 100 KB (spec §6.2) is cut at a character boundary and
 * flagged; keywords not given are extracted (jieba TF-IDF). Acknowledged only
 * after the store committed it; the caller's caches are invalidated so the
 * next search finds it.
 */
export async function storeMemory(
  deps: MemoriesDeps,
  ctx: CallContext,
  input: StoreMemoryInput,
): Promise<StoredMemory> {
  const owner = ownerOf(ctx.caller);
  const { text: content, truncated } = capBytes(input.content, MAX_CONTENT_BYTES);
  const keywords =
    input.keywords.length > 0
      ? input.keywords
      : extractLocally(`${input.summary}\n${content.slice(0, 20_000)}`, "", STORED_KEYWORDS).map(
          ({ keyword, weight }) => ({ keyword, weight }),
        );
  const [embedding] = await deps.embedder.embed(ctx, [`${input.summary}\n${content}`.slice(0, EMBED_CHARS)]);
  const searchText = searchTextOf([input.summary, content, keywords.map((k) => k.keyword).join(" ")]);
  const result = await deps.index.serially(owner, async () => {
    const written = await deps.store.upsert(owner, {
      memory_key: input.memory_key,
      memory_type: input.memory_type,
      summary: input.summary,
      content,
      content_truncated: truncated,
      keywords,
      metadata: input.metadata,
      search_text: searchText,
      embedding: embedding!,
    });
    await bumpVersion(deps, ctx, owner, {
      put: {
        memory_key: written.record.memory_key,
        embedding: embedding!,
        search_text: searchText,
        memory_type: written.record.memory_type,
        created_at: written.record.created_at,
        keywords: written.record.keywords.map((k) => k.keyword),
      },
    });
    return written;
  });
  const bytes = Buffer.byteLength(content);
  ctx.log.info({ memory_key: input.memory_key, created: result.created, truncated, bytes }, "memory stored");
  return result;
}

/** DeleteMemory: true when the caller had a memory with that key. */
export async function deleteMemory(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<boolean> {
  const owner = ownerOf(ctx.caller);
  return deps.index.serially(owner, async () => {
    const deleted = await deps.store.delete(owner, memoryKey);
    if (deleted) await bumpVersion(deps, ctx, owner, { remove: memoryKey });
    return deleted;
  });
}

/** `text` cut to at most `maxBytes` of UTF-8 without splitting a character. */
function capBytes(text: string, maxBytes: number): { text: string; truncated: boolean } {
  if (Buffer.byteLength(text) <= maxBytes) return { text, truncated: false };
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return { text: text.slice(0, end), truncated: true };
}
