import type { Lexicon } from "../core/lexicon";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import type { DataRetrievalClient } from "../upstream/data-retrieval";
import type { Embedder } from "../upstream/embeddings";
import type { LlmClient } from "../upstream/llm-client";
import type { Reranker } from "../upstream/reranker";
import type { Vocabulary } from "./matching/vocabulary";
import type { DescriptionCache } from "./relevance/descriptions";
import type { KnowledgeSessions } from "./session";

/** Keyword context's settings (KEYWORD_* in docs/configuration.md). */
export interface KeywordContextSettings {
  /** Instances fetched by the fuzzy query before local scoring. */
  candidateLimit: number;
  /** Neighbour requests in flight at once. */
  concurrency: number;
  /** Neighbour paths per subgraph request. */
  pathsPerRequest: number;
}

/** What KnowledgeRetrievalService is built from (deps.ts makes each once). */
export interface KnowledgeDeps {
  backend: KnowledgeNetworkBackend;
  sessions: KnowledgeSessions;
  embedder: Embedder;
  /** The words and embeddings (by `embedder`) of the texts that describe concepts, computed once per text. */
  descriptions: DescriptionCache;
  /** The platform's reranker, when RERANKER_URL is set. */
  reranker: Reranker | undefined;
  /** The chat LLM, when LLM_BASE_URL is set. */
  llm: LlmClient | undefined;
  /** data-retrieval, when DATA_RETRIEVAL_URL is set: kn_search is then forwarded to it. */
  dataRetrieval: DataRetrievalClient | undefined;
  keywordContext: KeywordContextSettings;
  /** Relation types taken as alias relations beside those the schema names so (MENTION_ALIAS_RELATIONS). */
  aliasRelations: readonly string[];
  /** What mentions may stand for beyond the network's data (MENTION_VOCABULARY). */
  vocabulary: Vocabulary;
  /** CC-CEDICT and WordNet (core/lexicon.ts), loaded once: a mention's translations are looked up beside it. */
  lexicon?: () => Promise<Lexicon>;
}

/** What schema recall reads (also concept recall in kn_search). */
export type SchemaDeps = Pick<
  KnowledgeDeps,
  "backend" | "sessions" | "embedder" | "descriptions" | "reranker" | "llm" | "aliasRelations"
>;
/** What kn_search reads, in either mode. */
export type KnSearchDeps = SchemaDeps & Pick<KnowledgeDeps, "dataRetrieval" | "vocabulary" | "lexicon">;
/** What keyword context reads. */
export type KeywordContextDeps = Pick<
  KnowledgeDeps,
  "backend" | "sessions" | "keywordContext" | "vocabulary" | "embedder" | "lexicon" | "llm"
>;
/** What concept rerank reads. */
export type RerankDeps = Pick<KnowledgeDeps, "llm" | "descriptions">;
