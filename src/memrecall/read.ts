import type { CallContext } from "../core/call-context";
import { text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import type { MemoryRecord } from "../store/memories/memory-store";
import { accountKey } from "../store/session-store";
import type { MemoriesDeps } from "./memories-deps";
import { cached, digest, maySeeSensitive, ownerOf, versionOf } from "./owner";

/** Spec §6.1: a memory read stays hot for 10 minutes. */
const DETAIL_TTL_MS = 10 * 60_000;

/** A memory as a caller reads it: `redacted` when its content and metadata are withheld from that caller. */
export interface MemoryDetail extends MemoryRecord {
  redacted: boolean;
}

/** A record as cached (JSON has no Date; the stated times are missing from records cached before they existed). */
type CachedRecord = Omit<MemoryRecord, "created_at" | "updated_at" | "stated_at" | "valid_until"> & {
  created_at: string;
  updated_at: string;
  stated_at?: string;
  valid_until?: string;
};

/**
 * get_memory_detail (spec §2.2): the caller's memory, from the hot-memory
 * cache (10 minutes, spec §6.1; never a sensitive memory) or the store. A key the caller does not have
 * — absent, or another user's — is the same NOT_FOUND with the spec's text.
 * A sensitive memory's content and metadata are withheld from a caller
 * without the permission (spec §7): key, summary and keywords remain.
 */
export async function getMemoryDetail(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<MemoryDetail> {
  const owner = ownerOf(ctx.caller);
  const version = await versionOf(deps, ctx, owner);
  const key = version === undefined ? undefined : accountKey(owner, `mem:detail:${version}:${digest(memoryKey)}`);
  const hit = await cached<CachedRecord | null>(
    ctx,
    deps,
    key,
    DETAIL_TTL_MS,
    async () => {
      const record = await deps.store.get(owner, memoryKey);
      if (!record) return null;
      const { valid_until, ...rest } = record;
      return {
        ...rest,
        created_at: record.created_at.toISOString(),
        updated_at: record.updated_at.toISOString(),
        stated_at: record.stated_at.toISOString(),
        ...(valid_until ? { valid_until: valid_until.toISOString() } : {}),
      };
    },
    // A sensitive memory is never cached: the cache (Redis, shared by replicas) would hold its
    // content in plain text. It is read from the store each time, as the cache would save only that read.
    (record) => (record?.sensitive ? undefined : record),
  );
  if (!hit) throw memoryNotFound(memoryKey);
  // `sensitive` may be missing from a record cached before the flag existed: it was not sensitive.
  const { valid_until, ...fields } = hit;
  const record = {
    ...fields,
    sensitive: hit.sensitive === true,
    created_at: new Date(hit.created_at),
    updated_at: new Date(hit.updated_at),
    stated_at: new Date(hit.stated_at ?? hit.created_at),
    ...(valid_until ? { valid_until: new Date(valid_until) } : {}),
  };
  if (!record.sensitive || maySeeSensitive(ctx.caller)) return { ...record, redacted: false };
  return { ...record, content: "", metadata: {}, redacted: true };
}

function memoryNotFound(memoryKey: string): ToolError {
  return new ToolError({
    code: "not_found",
    reason: "MEMORY_NOT_FOUND",
    message: text(`memory not found: ${memoryKey}`, `未找到记忆: ${memoryKey}`),
    metadata: { memory_key: memoryKey },
    hint: {
      message: text(
        "memory_key must come from this user's SearchMemories results; search again in other words or in semantic mode, or ask the user for more.",
        "memory_key 必须来自本用户 SearchMemories 的结果；尝试换个说法或 semantic 模式重新搜索，或向用户询问更多信息。",
      ),
      nextRpc: "contextloader.memrecall.v1.MemRecallService/SearchMemories",
    },
  });
}
