import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemRecallService, type RecallHandoff } from "../../gen/contextloader/memrecall/v1/memrecall_pb";
import { clientWith } from "../helpers/rpc";
import { startServer, type TestServer } from "../helpers/server";

/**
 * Recall's deterministic strategy through the RPC on issue 22's development
 * set (bench/recall-dev-22.json: may be tuned on; the held-out set is never
 * read here), one conversation per cause the tuning addressed: a widened
 * search names what clears the bar, not only what is close to the best; a
 * weak lone guess sharing one word is no answer; version numbers and long
 * digit runs are searched.
 */

interface DevSet {
  memories: {
    memory_key: string;
    memory_type: string;
    summary: string;
    content: string;
    keywords?: string[];
    created_days_ago: number;
    supersedes?: string;
  }[];
  conversations: { id: string; messages: { role: string; content: string }[]; needed: string[] }[];
}
const SET = JSON.parse(readFileSync(new URL("../../bench/recall-dev-22.json", import.meta.url), "utf8")) as DevSet;

let server: TestServer;
let memories: Client<typeof MemRecallService>;
beforeAll(async () => {
  server = await startServer({ LOG_LEVEL: "silent" });
  memories = clientWith(MemRecallService, server.baseUrl, { "x-account-id": `u-dev22-${randomUUID().slice(0, 8)}` });
  // Oldest first, as the bench stores them: a newer memory is written after what it replaces.
  const oldestFirst = SET.memories
    .map((m, i) => ({ m, i }))
    .sort((a, b) => b.m.created_days_ago - a.m.created_days_ago || a.i - b.i);
  for (const { m } of oldestFirst) {
    await memories.storeMemory({
      memoryKey: m.memory_key,
      memoryType: m.memory_type,
      summary: m.summary,
      content: m.content,
      keywords: (m.keywords ?? []).map((keyword) => ({ keyword, weight: 1 })),
      ...(m.supersedes ? { supersedes: m.supersedes } : {}),
    });
  }
}, 60_000);
afterAll(() => server?.close());

async function recall(id: string): Promise<{ handoff: RecallHandoff; needed: string[] }> {
  const c = SET.conversations.find((x) => x.id === id)!;
  let handoff: RecallHandoff | undefined;
  for await (const e of memories.recall({ messages: c.messages, strategy: "deterministic" }))
    if (e.event.case === "handoff") handoff = e.event.value;
  return { handoff: handoff!, needed: c.needed };
}

describe("Recall, deterministic, on issue 22's development set", () => {
  it.each([
    ["m01", "他们老大是谁: the widened search names what clears the bar, not only the best's neighbours"],
    ["o02", "mqtt 3.1.1: a version number is searched"],
    ["w05", "32960？: a long digit run is searched"],
  ])("%s — %s", async (id) => {
    const { handoff, needed } = await recall(id);
    expect(handoff.relevantMemoryKeys.slice(0, 3)).toEqual(expect.arrayContaining(needed));
  });

  it.each([["n04"], ["n05"]])("%s names nothing: a lone weak hit sharing one word is no answer", async (id) => {
    const { handoff } = await recall(id);
    expect(handoff.relevantMemoryKeys).toEqual([]);
  });
});
