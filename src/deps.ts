import type { Logger } from "pino";
import type { Config, KnowledgeSource } from "./config";
import { newTraceId } from "./core/ids";
import { type Lexicon, loadLexicon } from "./core/lexicon";
import { soundDistance } from "./core/pinyin";
import { tokenize } from "./core/text";
import type { KnowledgeNetworkBackend } from "./kn/backend";
import { EmbeddedBackend } from "./kn/embedded/engine";
import { createHttpBackend } from "./kn/http/http-backend";
import type { KnowledgeDeps } from "./knowledge/deps";
import { loadVocabulary } from "./knowledge/matching/vocabulary";
import { DescriptionCache } from "./knowledge/relevance/descriptions";
import { KnowledgeSessions } from "./knowledge/session";
import { calibrate } from "./memrecall/calibration";
import { type Glossary, loadGlossary } from "./memrecall/glossary";
import { LEXICAL_FUSION_WEIGHT, memoryEmbedder } from "./memrecall/lexical-embedder";
import type { MemRecallDeps } from "./memrecall/memories-deps";
import { MemoryIndex } from "./memrecall/memory-index";
import type { SemanticScale } from "./memrecall/relevance";
import { idfOf } from "./memrecall/search-text";
import { ObjectTypeCache } from "./resolver/object-types";
import type { ResolverDeps } from "./resolver/resolve";
import { atMostEvery, type ReadinessCheck } from "./server/probes";
import { InProcessSessionStore } from "./store/in-process-session-store";
import type { MemoryStore } from "./store/memories/memory-store";
import { PostgresMemoryStore } from "./store/memories/postgres-memory-store";
import { SqliteMemoryStore } from "./store/memories/sqlite-memory-store";
import { RedisSessionStore } from "./store/redis-session-store";
import type { SessionStore } from "./store/session-store";
import { MEMORY_STORE_OPERATIONS, SESSION_STORE_OPERATIONS, traced } from "./store/traced";
import { startTracing } from "./telemetry";
import { createDataRetrievalClient } from "./upstream/data-retrieval";
import { type Embedder, localEmbedder, openAiEmbedder } from "./upstream/embeddings";
import { LlmClient } from "./upstream/llm-client";
import { httpReranker } from "./upstream/reranker";

/** The memory store's write probe runs at most this often, however many probes ask (/readyz answers anyone). */
const WRITE_PROBE_EVERY_MS = 1000;

/** A knowledge-network backend the app can close on shutdown. */
export type ClosableBackend = KnowledgeNetworkBackend & { close?(): void };

/** What the three services are built from: every client and store, made once. */
export interface Deps {
  knowledge: KnowledgeDeps;
  resolver: ResolverDeps;
  memrecall: MemRecallDeps;
  /** The dependencies /readyz checks. */
  readiness: ReadinessCheck[];
  /** What the in-process caches and indexes hold, as /metrics gauges: where the memory goes. */
  usage: { name: string; help: string; read(): number }[];
  /** Prepares what must be ready before the first call (the memory store's schema, tables loaded on first use). */
  start(): Promise<void>;
  /** Closes every pool, connection and store. */
  close(): Promise<void>;
}

/**
 * Builds the clients and stores the settings ask for, once, and hands each
 * service the ones it uses. `overrides.backend` lets tests and benchmarks
 * bring a knowledge-network backend built elsewhere.
 */
export function buildDeps(config: Config, log: Logger, overrides: { backend?: ClosableBackend } = {}): Deps {
  const tracing = startTracing(config.tracing, log);
  const backend = overrides.backend ?? createKnowledgeBackend(config.knowledge, log);
  const inProcess = new InProcessSessionStore({
    maxValueBytes: config.sessions.maxValueBytes,
    maxEntries: config.sessions.maxMemoryEntries,
    maxBytes: config.sessions.maxMemoryBytes,
    log,
  });
  const redisStore = config.sessions.redis
    ? new RedisSessionStore({ ...config.sessions.redis, maxValueBytes: config.sessions.maxValueBytes, log })
    : undefined;
  // With tracing on, each Redis command and memory query is a span; off, the stores are used as they are.
  const redis =
    redisStore && tracing ? traced<SessionStore>(redisStore, "redis", SESSION_STORE_OPERATIONS) : redisStore;
  const llm = config.clients.llm ? new LlmClient(config.clients.llm) : undefined;
  const embedder = config.clients.embeddings ? openAiEmbedder(config.clients.embeddings) : localEmbedder;
  const reranker = config.clients.reranker ? httpReranker(config.clients.reranker) : undefined;
  const dataRetrieval = config.clients.dataRetrieval
    ? createDataRetrievalClient(config.clients.dataRetrieval)
    : undefined;
  const memoryStore = createMemoryStore(config, log);
  const memories = tracing
    ? traced(memoryStore, config.memrecall.store.kind === "postgres" ? "postgresql" : "sqlite", MEMORY_STORE_OPERATIONS)
    : memoryStore;
  const vocabulary = loadVocabulary(config.matching.vocabularyPaths);
  const glossary = loadGlossary(config.memrecall.glossaryPaths);
  const memoryEmbeddings = config.clients.embeddings ? embedder : memoryEmbedder(glossary);
  const index = new MemoryIndex(memories, config.memrecall.indexUsers);
  // Loaded by start(), before the port is open (~0.3 s): parsed while serving, it competed with the first
  // calls of a fresh process, and a first search that waited for it took 0.4 s. A failed load is tried
  // again by the next call that needs it.
  let lexiconLoad: Promise<Lexicon> | undefined;
  const lexicon = (): Promise<Lexicon> =>
    (lexiconLoad ??= loadLexicon().then(
      (l) => {
        log.info({ lexicon: l.summary }, "lexicon loaded");
        return l;
      },
      (err: unknown) => {
        lexiconLoad = undefined;
        log.warn({ err }, "lexicon not loaded: searches and mentions go without translations and synonyms");
        throw err;
      },
    ));
  const memrecall: MemRecallDeps = {
    store: memories,
    sessions: redis ?? inProcess,
    embedder: memoryEmbeddings,
    glossary,
    lexicon,
    llm,
    index,
    maxSearchesPerSession: config.memrecall.maxSearchesPerSession,
    semanticFloor: config.memrecall.semanticFloor,
    semanticCeiling: config.memrecall.semanticCeiling,
    maxContextWindow: config.memrecall.maxContextWindow,
    recallTimeoutMs: config.memrecall.recallTimeoutMs,
  };
  log.info(
    {
      sessions: redis ? "redis (default) + in_memory" : "in_memory",
      memory_store: config.memrecall.store.kind === "sqlite" ? `sqlite ${config.memrecall.store.path}` : "postgres",
      llm: llm?.model ?? null,
      embeddings: embedder.name,
      reranker: reranker?.name ?? null,
      kn_search: config.clients.dataRetrieval ? `proxied to ${config.clients.dataRetrieval.url}` : "native",
      mention_vocabulary: vocabulary.summary,
      memory_embeddings: memoryEmbeddings.name,
      memory_glossary: glossary.summary,
    },
    "clients",
  );
  return {
    knowledge: {
      backend,
      sessions: new KnowledgeSessions({ memory: inProcess, redis }),
      embedder,
      descriptions: new DescriptionCache(embedder),
      reranker,
      llm,
      dataRetrieval,
      keywordContext: config.keywordContext,
      aliasRelations: config.matching.aliasRelations,
      vocabulary,
      lexicon,
    },
    resolver: {
      backend,
      llm,
      defaultTimeZone: config.resolver.defaultTimeZone,
      objectTypeCache:
        config.resolver.objectTypeCacheMs > 0 ? new ObjectTypeCache(config.resolver.objectTypeCacheMs) : undefined,
    },
    memrecall,
    readiness: [
      ...upstreamReadiness(backend, log),
      ...(redis ? [{ name: "redis", check: () => redis.ping() }] : []),
      // Writable, not only reachable: a store that reads but refuses writes fails every StoreMemory.
      {
        name: `memory-store (${memories.kind})`,
        check: atMostEvery(WRITE_PROBE_EVERY_MS, () => memories.checkWritable()),
      },
    ],
    usage: [
      {
        name: "contextloader_session_store_entries",
        help: "Entries of the in-process session store (sessions and caches when there is no Redis).",
        read: () => inProcess.usage.entries,
      },
      {
        name: "contextloader_session_store_bytes",
        help: "Values of the in-process session store, as JSON bytes (bounded by SESSION_MAX_BYTES).",
        read: () => inProcess.usage.bytes,
      },
      {
        name: "contextloader_memory_index_users",
        help: "Users whose memory search index is in memory (at most MEMRECALL_INDEX_USERS).",
        read: () => index.usage().users,
      },
      {
        name: "contextloader_memory_index_memories",
        help: "Memories in the in-memory search indexes.",
        read: () => index.usage().memories,
      },
      {
        name: "contextloader_memory_index_embedding_bytes",
        help: "Bytes of the embeddings held by the in-memory search indexes.",
        read: () => index.usage().embeddingBytes,
      },
    ],
    async start() {
      await memories.migrate();
      await redisStore?.start();
      // jieba's IDF table and its search segmentation (500 ms), and pinyin-pro's segmenter (15 ms), load on
      // first use, a pause of the event loop: at start-up, not in the first calls.
      idfOf("预热");
      tokenize("预热");
      soundDistance("预热", "预备");
      await lexicon().catch(() => undefined);
      memrecall.semanticScale = await semanticScaleAtStart(config, log, glossary, memoryEmbeddings);
    },
    async close() {
      backend.close?.();
      dataRetrieval?.close();
      await Promise.all([inProcess.close(), redis?.close(), memories.close()]);
      // Last: the spans of the calls just drained are exported before the process ends.
      await tracing?.shutdown();
    },
  };
}

/**
 * MemRecall's semantic scale: what the probe learns of the embedder (within
 * MEMRECALL_CALIBRATION_TIMEOUT_MS, before the port opens), its range
 * replaced by MEMRECALL_SEMANTIC_FLOOR/CEILING when either is set. The local
 * lexical embedder is probed as a model is (in process, about 0.2 s);
 * its fusion weight is the one fitted ahead on the development sets' rankings
 * (lexical-embedder.ts). Undefined (the fixed range and its fusion,
 * relevance.ts) when the probe is off or failed: the service starts all the same.
 */
async function semanticScaleAtStart(
  config: Config,
  log: Logger,
  glossary: Glossary,
  embedder: Embedder,
): Promise<SemanticScale | undefined> {
  const settings = config.memrecall;
  const endpoint = config.clients.embeddings;
  const learned =
    settings.calibrationTimeoutMs === 0
      ? undefined
      : await calibrate(log, {
          // An endpoint gets a client of its own: what the probe's answers teach it (their vectors' size) is not the service's.
          embedder: endpoint === undefined ? embedder : openAiEmbedder(endpoint),
          source: endpoint === undefined ? "local" : endpoint.baseUrl,
          glossary,
          glossaryPaths: settings.glossaryPaths,
          probePath: settings.probePath,
          timeoutMs: settings.calibrationTimeoutMs,
          ...(endpoint === undefined ? { fusionWeight: LEXICAL_FUSION_WEIGHT } : {}),
        });
  if (learned === undefined || !settings.semanticRangeSet) return learned;
  return { floor: settings.semanticFloor, ceiling: settings.semanticCeiling, weight: learned.weight };
}

/**
 * The knowledge-network backend the settings ask for: the platform's services
 * over HTTP, or the embedded engine over the KN bundles (the default). A bad
 * bundle throws a BundleError naming the file.
 */
export function createKnowledgeBackend(source: KnowledgeSource, log: Logger): ClosableBackend {
  if (source.kind === "http") {
    log.info(
      {
        ontology_manager: source.ontologyManagerUrl,
        ontology_query: source.ontologyQueryUrl,
        operator_market: source.operatorMarketUrl ?? null,
        path_prefixes: source.paths,
      },
      "knowledge networks: the platform over HTTP",
    );
    return createHttpBackend(source);
  }
  const started = performance.now();
  const engine = EmbeddedBackend.fromFiles(source.bundlePaths, {
    timeZone: source.timeZone,
    scanBudget: source.scanBudget,
  });
  log.info(
    { bundles: source.bundlePaths, instances: engine.stats(), ms: Math.round(performance.now() - started) },
    "knowledge networks: the embedded engine over KN bundles",
  );
  return engine;
}

/** The memory store the settings ask for (its schema is migrated by Deps.start). */
function createMemoryStore(config: Config, log: Logger): MemoryStore {
  const where = config.memrecall.store;
  return where.kind === "postgres"
    ? new PostgresMemoryStore({ connectionString: where.url, log })
    : new SqliteMemoryStore({ path: where.path, log });
}

/** Readiness of the platform's services: ontology-manager answers a one-entry list. */
function upstreamReadiness(backend: KnowledgeNetworkBackend, log: Logger): ReadinessCheck[] {
  if (backend.kind !== "http") return [];
  return [
    {
      name: "ontology-manager",
      async check(signal) {
        const ctx = {
          caller: { accountId: "", accountType: "app" as const },
          traceId: newTraceId(),
          // A readiness probe's own call: its words go to the probe's log, in English.
          language: "en" as const,
          log,
          signal,
          remainingMs: () => undefined,
        };
        await backend.listKnowledgeNetworks(ctx, { limit: 1 });
      },
    },
  ];
}
