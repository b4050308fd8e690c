import type { Lexicon } from "../core/lexicon";
import type { MemoryStore } from "../store/memories/memory-store";
import type { SessionStore } from "../store/session-store";
import type { Embedder } from "../upstream/embeddings";
import type { LlmClient } from "../upstream/llm-client";
import type { Glossary } from "./glossary";
import type { MemoryIndex } from "./memory-index";
import type { SemanticScale } from "./relevance";

/** What the memory verbs (owner, write, read, search) are built from: one record, passed to each. */
export interface MemoriesDeps {
  store: MemoryStore;
  /** Caches, the per-user memory version and the per-session search counts. */
  sessions: SessionStore;
  /** An endpoint's model, or MemRecall's local embedder (lexical-embedder.ts) over the same glossary. */
  embedder: Embedder;
  /** Equivalent terms, applied when memories are stored and searched. */
  glossary: Glossary;
  /**
   * CC-CEDICT and WordNet (core/lexicon.ts), loaded once on first use: a
   * search also finds a query's words in the other language and as synonyms,
   * weighted below the glossary (lexicon-bridge.ts). Without it, no bridge.
   */
  lexicon?: () => Promise<Lexicon>;
  llm: LlmClient | undefined;
  /** The in-process search index of each user's memories. */
  index: MemoryIndex;
  /** Searches allowed per recall session (spec §6.2: 3). */
  maxSearchesPerSession: number;
  /**
   * The fixed semantic range of the configured embedder (relevance 0 at the
   * floor, 0.9 at the ceiling, linear; relevance.ts): what search uses while
   * `semanticScale` is unset.
   */
  semanticFloor: number;
  semanticCeiling: number;
  /**
   * The embedder's scale as the start-up probe learned it (calibration.ts),
   * set once by Deps.start before the port opens; unset when the probe is off
   * or failed.
   */
  semanticScale?: SemanticScale;
}

/** What MemRecallService and its tools are built from: the memory verbs' dependencies and the recall agent's bounds. */
export interface MemRecallDeps extends MemoriesDeps {
  /** Largest context window ExpandContextWindow grants and Recall reads. */
  maxContextWindow: number;
  /** The longest one Recall may run, ms, whatever the caller's deadline. */
  recallTimeoutMs: number;
}
