import type { CallContext } from "../core/call-context";
import { ToolError } from "../errors/tool-error";
import type { MemoryRecord } from "../store/memories/memory-store";
import { accountKey } from "../store/session-store";
import type { MemoriesDeps } from "./memories-deps";
import { cached, digest, ownerOf, versionOf } from "./owner";

/** Spec §6.1: a memory read stays hot for 10 minutes. */
const DETAIL_TTL_MS = 10 * 60_000;

/** A record as cached (JSON has no Date). */
type CachedRecord = Omit<MemoryRecord, "created_at" | "updated_at"> & { created_at: string; updated_at: string };

/**
 * get_memory_detail (spec §2.2): the caller's memory, from the hot-memory
 * cache (10 minutes, spec §6.1) or the store. A key the caller does not have
 * — absent, or another user's — is the same NOT_FOUND with the spec's text.
 */
export async function getMemoryDetail(deps: MemoriesDeps, ctx: CallContext, memoryKey: string): Promise<MemoryRecord> {
  const owner = ownerOf(ctx.caller);
  const version = await versionOf(deps, ctx, owner);
  const key = version === undefined ? undefined : accountKey(owner, `mem:detail:${version}:${digest(memoryKey)}`);
  const hit = await cached<CachedRecord | null>(ctx, deps, key, DETAIL_TTL_MS, async () => {
    const record = await deps.store.get(owner, memoryKey);
    return record
      ? { ...record, created_at: record.created_at.toISOString(), updated_at: record.updated_at.toISOString() }
      : null;
  });
  if (!hit) throw memoryNotFound(memoryKey);
  return { ...hit, created_at: new Date(hit.created_at), updated_at: new Date(hit.updated_at) };
}

function memoryNotFound(memoryKey: string): ToolError {
  return new ToolError({
    code: "not_found",
    reason: "MEMORY_NOT_FOUND",
    message: `未找到记忆: ${memoryKey}`,
    metadata: { memory_key: memoryKey },
    hint: {
      message:
        "memory_key 必须来自本用户 search_memories 的结果；尝试换个说法或 semantic 模式重新搜索，或向用户询问更多信息。",
      nextRpc: "contextloader.memrecall.v1.MemRecallService/SearchMemories",
    },
  });
}
