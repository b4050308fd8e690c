import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { Config, KnowledgeSource } from "./config";
import { EmbeddedBackend } from "./kn/embedded/engine";
import { newTraceId } from "./core/ids";
import type { ReadinessCheck } from "./server/probes";
import { createHttpBackend } from "./kn/http/http-backend";
import type { KnowledgeNetworkBackend } from "./kn/backend";
import { file_contextloader_common_v1_errors } from "../gen/contextloader/common/v1/errors_pb";
import { KnowledgeRetrievalService } from "../gen/contextloader/knowledge/v1/knowledge_pb";
import { MemRecallService } from "../gen/contextloader/memrecall/v1/memrecall_pb";
import { LogicPropertyResolverService } from "../gen/contextloader/resolver/v1/resolver_pb";
import { file_google_rpc_error_details } from "../gen/google/rpc/error_details_pb";
import { file_google_rpc_status } from "../gen/google/rpc/status_pb";
import { Health } from "../gen/grpc/health/v1/health_pb";
import { registerKnowledge, type KnowledgeDeps } from "./knowledge/knowledge-service";
import { rerankRoutes } from "./knowledge/rerank-route";
import { knowledgeRoutes } from "./knowledge/rest-routes";
import { KnowledgeSessions } from "./knowledge/session";
import { InProcessSessionStore } from "./store/in-process-session-store";
import { RedisSessionStore } from "./store/redis-session-store";
import { localEmbedder, openAiEmbedder } from "./upstream/embeddings";
import { LlmClient } from "./upstream/llm-client";
import { createDataRetrievalClient } from "./upstream/data-retrieval";
import { httpReranker } from "./upstream/reranker";
import { registerMemRecall, type MemRecallDeps } from "./memrecall/memrecall-service";
import { MemoryIndex } from "./memrecall/memory-index";
import type { MemoryStore } from "./store/memories/memory-store";
import { PostgresMemoryStore } from "./store/memories/postgres-memory-store";
import { SqliteMemoryStore } from "./store/memories/sqlite-memory-store";
import { ObjectTypeCache, type ResolverDeps } from "./resolver/resolve";
import { registerResolver } from "./resolver/resolver-service";
import { resolverRoutes } from "./resolver/rest-routes";
import { createCors } from "./server/cors";
import { HealthState, registerHealth } from "./server/health";
import { createHttpRoutes } from "./server/http-routes";
import { callInterceptor } from "./server/interceptors";
import { Listener } from "./server/listener";
import { createMetrics, type Metrics } from "./server/metrics";
import { probeRoutes } from "./server/probes";
import { documentedDescriptors, registerReflection } from "./server/reflection";
import { createRpcHandler } from "./server/rpc-handler";

/** The three product services, in the order reflection lists them. */
export const productServices = [KnowledgeRetrievalService, LogicPropertyResolverService, MemRecallService] as const;

export interface App {
  /** Binds the configured port (0 picks a free one); resolves with the bound port. */
  listen(): Promise<number>;
  /** Graceful shutdown: NOT_SERVING, stop accepting, drain, then abort what is left. Idempotent. */
  shutdown(): Promise<void>;
  readonly health: HealthState;
  readonly metrics: Metrics;
}

/** A knowledge backend the app can close on shutdown. */
type Knowledge = KnowledgeNetworkBackend & { close?(): void };

/**
 * The knowledge-network backend the settings ask for: the platform's services
 * over HTTP, or the embedded engine over the KN bundles (the default). A bad
 * bundle throws a BundleError naming the file.
 */
export function createKnowledgeBackend(source: KnowledgeSource, log: Logger): Knowledge {
  if (source.kind === "http") {
    log.info({ ontology_manager: source.ontologyManagerUrl, ontology_query: source.ontologyQueryUrl, operator_market: source.operatorMarketUrl ?? null }, "knowledge networks: the platform over HTTP");
    return createHttpBackend(source);
  }
  const started = performance.now();
  const engine = EmbeddedBackend.fromFiles(source.bundlePaths, { timeZone: source.timeZone });
  log.info(
    { bundles: source.bundlePaths, instances: engine.stats(), ms: Math.round(performance.now() - started) },
    "knowledge networks: the embedded engine over KN bundles",
  );
  return engine;
}

/** The memory store the settings ask for (its schema is migrated when the app starts listening). */
function createMemoryStore(config: Config, log: Logger): MemoryStore {
  const where = config.memrecall.store;
  return where.kind === "postgres" ? new PostgresMemoryStore({ connectionString: where.url, log }) : new SqliteMemoryStore({ path: where.path, log });
}

/** Readiness of the platform's services: ontology-manager answers a one-entry list. */
function upstreamReadiness(knowledge: Knowledge, log: Logger): ReadinessCheck[] {
  if (knowledge.kind !== "http") return [];
  return [
    {
      name: "ontology-manager",
      async check(signal) {
        const ctx = { caller: { accountId: "", accountType: "app" as const }, traceId: newTraceId(), log, signal, remainingMs: () => undefined };
        await knowledge.listKnowledgeNetworks(ctx, { limit: 1 });
      },
    },
  ];
}

/**
 * Builds the whole service from its settings: clients and stores once, the
 * routes with their dependencies, the interceptors, and the one-port listener.
 * `overrides` lets tests hand in dependencies built elsewhere.
 */
export function createApp(config: Config, log: Logger, overrides: { knowledge?: Knowledge } = {}): App {
  const metrics = createMetrics();
  const knowledge = overrides.knowledge ?? createKnowledgeBackend(config.knowledge, log);
  const memorySessions = new InProcessSessionStore({ maxValueBytes: config.sessions.maxValueBytes, maxEntries: config.sessions.maxMemoryEntries, log });
  const redisSessions = config.sessions.redis
    ? new RedisSessionStore({ ...config.sessions.redis, maxValueBytes: config.sessions.maxValueBytes, log })
    : undefined;
  const llm = config.llm ? new LlmClient(config.llm) : undefined;
  const embedder = config.embeddings ? openAiEmbedder(config.embeddings) : localEmbedder;
  const reranker = config.reranker ? httpReranker(config.reranker) : undefined;
  const dataRetrieval = config.dataRetrieval ? createDataRetrievalClient(config.dataRetrieval) : undefined;
  log.info(
    {
      sessions: redisSessions ? "redis (default) + in_memory" : "in_memory",
      memory_store: config.memrecall.store.kind === "sqlite" ? `sqlite ${config.memrecall.store.path}` : "postgres",
      llm: llm?.model ?? null,
      embeddings: embedder.name,
      reranker: reranker?.name ?? null,
      kn_search: dataRetrieval ? `proxied to ${config.dataRetrieval!.url}` : "native",
    },
    "clients",
  );
  const knowledgeDeps: KnowledgeDeps = {
    backend: knowledge,
    sessions: new KnowledgeSessions({ memory: memorySessions, redis: redisSessions }),
    embedder,
    reranker,
    llm,
    dataRetrieval,
    ...config.keywordContext,
  };
  const resolverDeps: ResolverDeps = {
    backend: knowledge,
    llm,
    defaultTimeZone: config.resolver.defaultTimeZone,
    objectTypeCache: config.resolver.objectTypeCacheMs > 0 ? new ObjectTypeCache(config.resolver.objectTypeCacheMs) : undefined,
  };
  const memories = createMemoryStore(config, log);
  const memrecallDeps: MemRecallDeps = {
    store: memories,
    sessions: redisSessions ?? memorySessions,
    embedder,
    llm,
    index: new MemoryIndex(memories, config.memrecall.indexUsers),
    maxSearchesPerSession: config.memrecall.maxSearchesPerSession,
    semanticFloor: config.memrecall.semanticFloor,
    semanticCeiling: config.memrecall.semanticCeiling,
    maxContextWindow: config.memrecallMaxContextWindow,
  };
  const readiness: ReadinessCheck[] = [
    ...upstreamReadiness(knowledge, log),
    ...(redisSessions ? [{ name: "redis", check: () => redisSessions.ping() }] : []),
    { name: `memory-store (${memories.kind})`, check: () => memories.ping() },
  ];
  const health = new HealthState(productServices.map((s) => s.typeName));
  const stopping = new AbortController();
  // Every call in flight listens to this signal (connect's shutdownSignal): no listener cap.
  setMaxListeners(0, stopping.signal);
  const documented = documentedDescriptors(readFileSync(new URL("../gen/descriptors.binpb", import.meta.url)));

  const routes = (router: ConnectRouter) => {
    registerKnowledge(router, knowledgeDeps);
    registerResolver(router, resolverDeps);
    registerMemRecall(router, memrecallDeps);
    registerHealth(router, health);
    registerReflection(
      router,
      [...productServices, Health],
      [file_google_rpc_error_details, file_google_rpc_status, file_contextloader_common_v1_errors],
      documented,
    );
  };

  const rpc = createRpcHandler({
    routes,
    routerOptions: {
      grpc: true,
      grpcWeb: true,
      connect: true,
      readMaxBytes: config.readMaxBytes,
      writeMaxBytes: config.writeMaxBytes,
      // Compressing a few kilobytes costs more time than it saves on the networks agents run in.
      compressMinBytes: config.compressMinBytes,
      // Agents compose JSON by hand: a misspelt field is an error, not silently ignored.
      // Zero values are written too, so every answer has the spec's full shape (false, 0, [] included).
      jsonOptions: { useProtoFieldName: true, ignoreUnknownFields: false, alwaysEmitImplicit: true },
      interceptors: [callInterceptor({ log, metrics })],
      shutdownSignal: stopping.signal,
    },
    fallback: createHttpRoutes({
      routes: [
        ...probeRoutes({ health, metrics, checks: readiness }),
        ...knowledgeRoutes(knowledgeDeps, { log, maxBytes: config.readMaxBytes, stopping: stopping.signal }),
        ...rerankRoutes(knowledgeDeps, { log, maxBytes: config.readMaxBytes, stopping: stopping.signal }),
        ...resolverRoutes(resolverDeps, { log, maxBytes: config.readMaxBytes, stopping: stopping.signal }),
      ],
      metrics,
      log,
    }),
    log,
  });
  const cors = createCors(config.corsAllowedOrigins);
  const listener = new Listener({
    handler: (req, res) => {
      if (!cors(req, res)) rpc(req, res);
    },
    tls: config.tls,
    log,
  });

  let stopped: Promise<void> | undefined;
  return {
    health,
    metrics,
    async listen() {
      await memories.migrate();
      const port = await listener.listen(config.port, config.host);
      log.info({ port, host: config.host, tls: config.tls !== undefined }, "listening: gRPC, gRPC-web and Connect on one port");
      return port;
    },
    shutdown() {
      stopped ??= (async () => {
        log.info({ grace_ms: config.shutdownGraceMs }, "shutting down: not serving, draining in-flight calls");
        health.markNotServing();
        await listener.shutdown(config.shutdownGraceMs, () =>
          stopping.abort(new ConnectError("the server is shutting down; retry on another replica", Code.Unavailable)),
        );
        knowledge.close?.();
        dataRetrieval?.close();
        await Promise.all([memorySessions.close(), redisSessions?.close(), memories.close()]);
        log.info("stopped");
      })();
      return stopped;
    },
  };
}
