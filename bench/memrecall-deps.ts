import { randomUUID } from "node:crypto";
import { pino } from "pino";
import { loadConfig } from "../src/config";
import type { CallContext } from "../src/core/call-context";
import { loadLexicon } from "../src/core/lexicon";
import { loadGlossary } from "../src/memrecall/glossary";
import { memoryEmbedder } from "../src/memrecall/lexical-embedder";
import type { MemRecallDeps } from "../src/memrecall/memories-deps";
import { MemoryIndex } from "../src/memrecall/memory-index";
import { InProcessSessionStore } from "../src/store/in-process-session-store";
import type { MemoryStore } from "../src/store/memories/memory-store";
import type { LlmClient } from "../src/upstream/llm-client";

/** What the memory benches share: MemRecall as shipped, in the bench's process, logging nothing. */

export const benchLog = pino({ level: "silent" });
export const shipped = loadConfig({}).memrecall;
export const glossary = loadGlossary(shipped.glossaryPaths);

/** A call of `accountId`'s, with no deadline. */
export function benchContext(accountId: string): CallContext {
  return {
    caller: { accountId, accountType: "user" },
    traceId: randomUUID().replaceAll("-", ""),
    language: "en" as const,
    log: benchLog,
    signal: new AbortController().signal,
    remainingMs: () => undefined,
  };
}

/** The service's MemRecall dependencies as shipped over `store`: no embeddings endpoint, the shipped glossary, the LLM given (none by default). */
export function benchDeps(store: MemoryStore, llm?: LlmClient): MemRecallDeps {
  return {
    store,
    sessions: new InProcessSessionStore({ maxValueBytes: 1 << 20, maxEntries: 1_000_000, log: benchLog }),
    embedder: memoryEmbedder(glossary),
    glossary,
    lexicon: () => loadLexicon(),
    llm,
    index: new MemoryIndex(store, 4),
    maxSearchesPerSession: 3,
    semanticFloor: shipped.semanticFloor,
    semanticCeiling: shipped.semanticCeiling,
    maxContextWindow: shipped.maxContextWindow,
    recallTimeoutMs: shipped.recallTimeoutMs,
  };
}
