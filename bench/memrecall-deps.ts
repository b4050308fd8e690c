import { randomUUID } from "node:crypto";
import { pino } from "pino";
import type { Config } from "../src/config";
import type { CallContext } from "../src/core/call-context";
import { buildDeps, type ClosableBackend } from "../src/deps";
import { EmbeddedBackend } from "../src/kn/embedded/engine";
import type { KnowledgeDeps } from "../src/knowledge/deps";
import type { MemRecallDeps } from "../src/memrecall/memories-deps";
import { MemoryIndex } from "../src/memrecall/memory-index";
import { InProcessSessionStore } from "../src/store/in-process-session-store";
import type { MemoryStore } from "../src/store/memories/memory-store";
import type { LlmClient } from "../src/upstream/llm-client";

/** What the quality benches share: the service's dependencies made from one configuration, in the bench's process, logging nothing. */

export const benchLog = pino({ level: "silent" });

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

/**
 * The service's dependencies as `buildDeps` makes them from a configuration
 * (the shipped one for `npm run bench`, the environment's for `npm run
 * eval`): the same embedder, LLM, glossary, relevance range and whatever
 * start-up prepares, so the benches measure what `npm start` would run.
 */
export interface BenchSetup {
  config: Config;
  /** MemRecall's dependencies; each bench puts its own store under them with benchDeps. */
  memrecall: MemRecallDeps;
  /** Keyword context's and the matcher's dependencies, over the backend given to benchSetup. */
  knowledge: KnowledgeDeps;
  close(): Promise<void>;
}

/**
 * Builds and starts the service's dependencies from `config`, with what a
 * bench must own replaced: memories in a store of the bench's (the one built
 * here is an empty SQLite in memory), sessions in this process (no Redis),
 * no tracing, and `backend` as the knowledge networks (by default none: the
 * memory benches read no network).
 */
export async function benchSetup(config: Config, backend?: ClosableBackend): Promise<BenchSetup> {
  const own: Config = {
    ...config,
    memrecall: { ...config.memrecall, store: { kind: "sqlite", path: ":memory:" } },
    sessions: { ...config.sessions, redis: undefined },
    tracing: undefined,
  };
  const deps = buildDeps(own, benchLog, {
    backend: backend ?? new EmbeddedBackend([], { timeZone: config.resolver.defaultTimeZone }),
  });
  await deps.start();
  return { config, memrecall: deps.memrecall, knowledge: deps.knowledge, close: () => deps.close() };
}

/**
 * `setup`'s MemRecall dependencies over `store`: a fresh index and fresh
 * session caches (what a process started after the store's writes sees), and
 * `llm` instead of the configured LLM when given.
 */
export function benchDeps(setup: BenchSetup, store: MemoryStore, llm?: LlmClient): MemRecallDeps {
  return {
    ...setup.memrecall,
    store,
    sessions: new InProcessSessionStore({ maxValueBytes: 1 << 20, maxEntries: 1_000_000, log: benchLog }),
    index: new MemoryIndex(store, 4),
    ...(llm ? { llm } : {}),
  };
}
