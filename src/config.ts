import { readFileSync } from "node:fs";
import { z } from "zod";
import {
  bundles,
  ConfigError,
  DEFAULT_BUNDLE,
  DEFAULT_GLOSSARY,
  DEFAULT_VOCABULARY,
  fraction,
  httpUrl,
  integer,
  type LogLevel,
  list,
  logLevel,
  MEMRECALL_PROBE,
  otlpHeaders,
  pathPrefix,
  readEnv,
  timeZone,
} from "./config-fields";
import type { Language } from "./errors/text";
import { DEFAULT_SCAN_BUDGET } from "./kn/embedded/scan-budget";
import type { HttpBackendOptions } from "./kn/http/http-backend";
import {
  DEFAULT_PLATFORM_LAYOUT,
  PLATFORM_LAYOUT_NAMES,
  PLATFORM_LAYOUTS,
  type PlatformLayout,
  type PlatformPaths,
} from "./kn/http/platform-paths";
import type { AdmissionSettings } from "./server/admission";
import { type AuthSettings, JWT_ALGORITHMS } from "./server/auth/settings";
import type { ConnectionTimeouts } from "./server/listener";
import type { RedisConnection, SentinelSettings } from "./store/redis-connection";

/**
 * Every setting of the service, read from the environment once at start-up,
 * in one section per part of the service that uses it (deps.ts hands each
 * section to the clients, stores and features it builds). Nothing else reads
 * process.env. Each setting is documented in docs/configuration.md; a bad
 * value stops start-up with a message naming the variable.
 */
export interface Config {
  /** The one port and how it answers. */
  server: {
    /** TCP port for every protocol (gRPC, gRPC-web, Connect, plain HTTP). */
    port: number;
    /** Interface to bind. */
    host: string;
    /**
     * PEM certificate and key; when both are set the port speaks TLS (ALPN h2 + http/1.1).
     * `clientCa` (AUTH_MODE=mtls): clients are asked for a certificate, checked against it.
     */
    tls: { cert: Buffer; key: Buffer; clientCa?: Buffer } | undefined;
    /** Browser origins allowed to call the service; "*" allows any. Empty: no cross-origin calls. */
    corsAllowedOrigins: string[];
    /** The language of errors and hints for a caller that asks for none (no Accept-Language or language header). */
    defaultLanguage: Language;
    /** Largest request message accepted, bytes. */
    readMaxBytes: number;
    /** Largest response message sent, bytes. */
    writeMaxBytes: number;
    /** Responses smaller than this are sent uncompressed even to clients that accept gzip or brotli, bytes. */
    compressMinBytes: number;
    /** How long in-flight calls may run after SIGTERM/SIGINT before they are cut, ms. */
    shutdownGraceMs: number;
    /** Calls in progress at most, calls waiting at most, and how long one may wait (ADMISSION_*). */
    admission: AdmissionSettings;
    /** JSON request bodies nested deeper than this are refused before they are parsed. */
    jsonMaxDepth: number;
    /** JSON request bodies holding more values (members and array items) than this are refused while they are read. */
    jsonMaxValues: number;
    /** Streams and requests open at once: per HTTP/2 connection (advertised in SETTINGS) and in the whole process. */
    streams: { perConnection: number; total: number };
    /** A grpc.health.v1 Watch that saw no change for this long is ended (the client watches again), ms. */
    healthWatchIdleMs: number;
    /**
     * Host (or :authority) names the service answers to, any port; undefined: any host. Defaults to
     * localhost, 127.0.0.1 and [::1] when HOST is a loopback address (a DNS-rebinding page cannot reach it).
     */
    allowedHosts: string[] | undefined;
    /** How long a connection may take to send what it must (HTTP_*_TIMEOUT_MS, HTTP2_IDLE_TIMEOUT_MS). */
    timeouts: ConnectionTimeouts;
  };
  /** How a caller's identity is established (AUTH_MODE), and whether /metrics needs it. */
  auth: AuthSettings;
  /** pino level. */
  logLevel: LogLevel;
  /** Where knowledge networks are read: the platform over HTTP, or the embedded engine over bundle files. */
  knowledge: KnowledgeSource;
  /** Keyword context: candidates fetched before local scoring, and neighbour requests in flight at once. */
  keywordContext: { candidateLimit: number; concurrency: number; pathsPerRequest: number };
  /**
   * Mention matching (keyword context and kn_search): relation types to treat as alias relations beside those
   * the schema names so, and the vocabulary files (generic equivalences, each network's other names).
   */
  matching: { aliasRelations: string[]; vocabularyPaths: string[] };
  /** Logic property resolver: the default time zone, and how long object type definitions are cached (0: fetched every call). */
  resolver: { defaultTimeZone: string; objectTypeCacheMs: number };
  /** Where memories are kept, and how they are searched and expanded. */
  memrecall: {
    store: { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };
    maxSearchesPerSession: number;
    /**
     * The semantic scale's cosines (memrecall/relevance.ts: relevance about 0 at the floor, 0.9 at
     * the ceiling) until the start-up probe learns the model's own, and when it cannot: the fixed
     * range of the embedder, MEMRECALL_SEMANTIC_FLOOR/CEILING applied.
     */
    semanticFloor: number;
    semanticCeiling: number;
    /** MEMRECALL_SEMANTIC_FLOOR or _CEILING is set: that range holds, whatever the probe learns. */
    semanticRangeSet: boolean;
    /** The longest the start-up probe of the embedder may take, ms; 0: no probe, the fixed range. */
    calibrationTimeoutMs: number;
    /** The probe set (data/memrecall/probe.json). */
    probePath: string;
    /** Users whose search index (embeddings and tokens) is held in memory at once. */
    indexUsers: number;
    /** Largest context window ExpandContextWindow grants and Recall reads, in messages. */
    maxContextWindow: number;
    /** The longest one Recall may run, ms, whatever the caller's deadline. */
    recallTimeoutMs: number;
    /** The glossary files: groups of equivalent terms, applied when memories are stored and searched. */
    glossaryPaths: string[];
  };
  /** Session state: always in memory; in Redis too when REDIS_URL or REDIS_SENTINELS is set (then the default). */
  sessions: {
    redis: (RedisConnection & { commandTimeoutMs: number }) | undefined;
    maxValueBytes: number;
    maxMemoryEntries: number;
    /** In-memory session values kept at most, counted as their JSON size, bytes. */
    maxMemoryBytes: number;
  };
  /** The outbound services besides the knowledge networks; each is undefined when its URL is not set. */
  clients: {
    /** An OpenAI-compatible chat completions endpoint (LLM_BASE_URL). */
    llm: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
    /**
     * An OpenAI-compatible embeddings endpoint (EMBEDDINGS_BASE_URL); undefined: the local lexical embedder.
     * Its timeout, like the reranker's, is UPSTREAM_TIMEOUT_MS unless set on its own.
     */
    embeddings: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
    /** The platform's reranker (RERANKER_URL). */
    reranker: { url: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
    /** data-retrieval (DATA_RETRIEVAL_URL), to which kn_search is forwarded; undefined: kn_search is computed here. */
    dataRetrieval: { url: string; timeoutMs: number; maxSockets: number } | undefined;
  };
  /**
   * Spans exported over OTLP/HTTP (JSON) to `url` (OTEL_EXPORTER_OTLP_ENDPOINT or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); undefined: no tracing at all.
   */
  tracing:
    | {
        url: string;
        headers: Record<string, string>;
        timeoutMs: number;
        serviceName: string;
        /** Share of new traces recorded (a caller's sampled traceparent is always followed). */
        sampleRatio: number;
      }
    | undefined;
}

/**
 * The knowledge-network backend: the platform's services (the HTTP backend's
 * options: URLs, UPSTREAM_TIMEOUT_MS, UPSTREAM_MAX_SOCKETS, UPSTREAM_ID_SPELLING,
 * the path prefixes of PLATFORM_API_LAYOUT and the *_PATH_PREFIX overrides),
 * or bundles served in-process.
 */
export type KnowledgeSource =
  | ({ kind: "http"; paths: PlatformPaths } & HttpBackendOptions)
  | {
      kind: "embedded";
      bundlePaths: string[];
      /** Time zone of metric calendar buckets. */
      timeZone: string;
      /** Row checks one call may make (rows scanned × condition leaves). */
      scanBudget: number;
    };

const origin = z.string().refine((o) => o === "*" || /^https?:\/\/[^/\s]+$/.test(o), {
  message: 'each origin must be "*" or scheme://host[:port] without a path',
});

/** An ALLOWED_HOSTS entry: "*", a host name, an IPv4 address or a bracketed IPv6 address (no port: any port matches). */
const allowedHost = z
  .string()
  .transform((h) => h.toLowerCase())
  .refine((h) => h === "*" || /^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])$/.test(h), {
    message: 'each host must be "*", a host name, an IPv4 address or [an IPv6 address], without a port',
  });

/** The Host names a loopback-only service answers to by default. */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"];

/** A REDIS_SENTINELS entry: host:port, an IPv6 address in brackets. */
const sentinelAddress = z.string().transform((item, ctx) => {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(item);
  const port = Number(m?.[2]);
  if (!m || port < 1 || port > 65535) {
    ctx.addIssue({
      code: "custom",
      message: `"${item}" is not host:port; each sentinel is host:port with a port from 1 to 65535 (an IPv6 address in brackets)`,
    });
    return z.NEVER;
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port };
});

/** true or false, left unset when not given (a setting of another mode must be seen to be set). */
const flag = (name: string) => z.enum(["true", "false"], { error: `${name} must be "true" or "false"` }).optional();

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const envSchema = z.object({
  // server
  PORT: integer("PORT", 0, 65535).default(8080),
  // Loopback unless a deployment opens it: identity headers are trusted in the default AUTH_MODE.
  HOST: z.string().trim().min(1).default("127.0.0.1"),
  TLS_CERT: z.string().trim().optional(),
  TLS_KEY: z.string().trim().optional(),
  CORS_ALLOWED_ORIGINS: list.pipe(z.array(origin)).default([]),
  READ_MAX_BYTES: integer("READ_MAX_BYTES", 1024, 256 * 1024 * 1024).default(4 * 1024 * 1024),
  WRITE_MAX_BYTES: integer("WRITE_MAX_BYTES", 1024, 256 * 1024 * 1024).default(32 * 1024 * 1024),
  COMPRESS_MIN_BYTES: integer("COMPRESS_MIN_BYTES", 0, 256 * 1024 * 1024).default(64 * 1024),
  SHUTDOWN_GRACE_MS: integer("SHUTDOWN_GRACE_MS", 0, 600_000).default(10_000),
  ADMISSION_MAX_IN_FLIGHT: integer("ADMISSION_MAX_IN_FLIGHT", 1, 100_000).default(64),
  ADMISSION_MAX_QUEUED: integer("ADMISSION_MAX_QUEUED", 0, 1_000_000).default(1000),
  ADMISSION_MAX_WAIT_MS: integer("ADMISSION_MAX_WAIT_MS", 1, 600_000).default(1000),
  HTTP_HEADERS_TIMEOUT_MS: integer("HTTP_HEADERS_TIMEOUT_MS", 100, 600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: integer("HTTP_REQUEST_TIMEOUT_MS", 100, 3_600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: integer("HTTP_KEEP_ALIVE_TIMEOUT_MS", 100, 3_600_000).default(65_000),
  HTTP2_IDLE_TIMEOUT_MS: integer("HTTP2_IDLE_TIMEOUT_MS", 100, 3_600_000).default(65_000),
  JSON_MAX_DEPTH: integer("JSON_MAX_DEPTH", 8, 10_000).default(64),
  JSON_MAX_VALUES: integer("JSON_MAX_VALUES", 100, 10_000_000).default(5_000),
  HTTP2_MAX_CONCURRENT_STREAMS: integer("HTTP2_MAX_CONCURRENT_STREAMS", 1, 100_000).default(100),
  STREAMS_MAX_OPEN: integer("STREAMS_MAX_OPEN", 1, 1_000_000).default(2000),
  HEALTH_WATCH_IDLE_MS: integer("HEALTH_WATCH_IDLE_MS", 1000, 86_400_000).default(300_000),
  ALLOWED_HOSTS: list.pipe(z.array(allowedHost)).optional(),
  LOG_LEVEL: logLevel.default("info"),
  DEFAULT_LANGUAGE: z.enum(["zh", "en"], { error: 'DEFAULT_LANGUAGE must be "zh" or "en"' }).default("zh"),
  // auth
  AUTH_MODE: z
    .enum(["headers", "mtls", "jwt", "introspection"], {
      error: 'AUTH_MODE must be "headers", "mtls", "jwt" or "introspection"',
    })
    .default("headers"),
  TLS_CLIENT_CA: z.string().trim().optional(),
  AUTH_JWKS_URL: httpUrl.optional(),
  AUTH_ISSUER: z.string().trim().optional(),
  AUTH_AUDIENCE: z.string().trim().optional(),
  AUTH_ALGORITHMS: list
    .pipe(
      z
        .array(z.enum(JWT_ALGORITHMS, { error: `each algorithm must be one of ${JWT_ALGORITHMS.join(", ")}` }))
        .min(1, "AUTH_ALGORITHMS must name at least one algorithm"),
    )
    .optional(),
  AUTH_CLOCK_SKEW_S: integer("AUTH_CLOCK_SKEW_S", 0, 600).default(30),
  AUTH_ACCOUNT_ID_CLAIM: z.string().trim().min(1).default("sub"),
  AUTH_ACCOUNT_TYPE_CLAIM: z.string().trim().optional(),
  AUTH_SCOPES_CLAIM: z.string().trim().min(1).default("scope"),
  AUTH_INTROSPECTION_URL: httpUrl.optional(),
  AUTH_INTROSPECTION_CLIENT_ID: z.string().trim().optional(),
  AUTH_INTROSPECTION_CLIENT_SECRET: z.string().trim().optional(),
  AUTH_INTROSPECTION_CACHE_MS: integer("AUTH_INTROSPECTION_CACHE_MS", 0, 300_000).default(10_000),
  AUTH_TIMEOUT_MS: integer("AUTH_TIMEOUT_MS", 100, 60_000).default(5000),
  METRICS_AUTH: z.enum(["none", "same"], { error: 'METRICS_AUTH must be "none" or "same"' }).default("none"),
  // knowledge
  ONTOLOGY_MANAGER_URL: httpUrl.optional(),
  ONTOLOGY_QUERY_URL: httpUrl.optional(),
  OPERATOR_MARKET_URL: httpUrl.optional(),
  UPSTREAM_TIMEOUT_MS: integer("UPSTREAM_TIMEOUT_MS", 1, 600_000).default(10_000),
  UPSTREAM_MAX_SOCKETS: integer("UPSTREAM_MAX_SOCKETS", 1, 10_000).default(64),
  UPSTREAM_ID_SPELLING: z.enum(["new", "old"]).default("new"),
  PLATFORM_API_LAYOUT: z
    .string()
    .trim()
    .pipe(
      z.enum(PLATFORM_LAYOUT_NAMES as [PlatformLayout, ...PlatformLayout[]], {
        error: `PLATFORM_API_LAYOUT must be ${PLATFORM_LAYOUT_NAMES.map((l) => `"${l}"`).join(" or ")} (the platform's release)`,
      }),
    )
    .default(DEFAULT_PLATFORM_LAYOUT),
  ONTOLOGY_MANAGER_PATH_PREFIX: pathPrefix("ONTOLOGY_MANAGER_PATH_PREFIX").optional(),
  ONTOLOGY_QUERY_PATH_PREFIX: pathPrefix("ONTOLOGY_QUERY_PATH_PREFIX").optional(),
  OPERATOR_MARKET_PATH_PREFIX: pathPrefix("OPERATOR_MARKET_PATH_PREFIX").optional(),
  KN_BUNDLE: bundles.optional(),
  EMBEDDED_TIMEZONE: timeZone("EMBEDDED_TIMEZONE").default("Asia/Shanghai"),
  EMBEDDED_SCAN_BUDGET: integer("EMBEDDED_SCAN_BUDGET", 1000, 1_000_000_000_000).default(DEFAULT_SCAN_BUDGET),
  // keywordContext
  KEYWORD_CANDIDATE_LIMIT: integer("KEYWORD_CANDIDATE_LIMIT", 10, 10_000).default(200),
  KEYWORD_NEIGHBOR_CONCURRENCY: integer("KEYWORD_NEIGHBOR_CONCURRENCY", 1, 64).default(4),
  KEYWORD_PATHS_PER_REQUEST: integer("KEYWORD_PATHS_PER_REQUEST", 1, 1000).default(50),
  // matching
  MENTION_ALIAS_RELATIONS: list.default([]),
  MENTION_VOCABULARY: list.optional(),
  // resolver
  RESOLVER_DEFAULT_TIMEZONE: timeZone("RESOLVER_DEFAULT_TIMEZONE").default("Asia/Shanghai"),
  RESOLVER_OBJECT_TYPE_CACHE_MS: integer("RESOLVER_OBJECT_TYPE_CACHE_MS", 0, 86_400_000).default(0),
  // memrecall
  MEMORY_STORE: z
    .enum(["sqlite", "postgres"], { error: 'MEMORY_STORE must be "sqlite" or "postgres"' })
    .default("sqlite"),
  SQLITE_PATH: z.string().trim().min(1).default("./data/memories.sqlite"),
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\//, "DATABASE_URL must start with postgres:// or postgresql://")
    .optional(),
  MEMRECALL_MAX_SEARCHES_PER_SESSION: integer("MEMRECALL_MAX_SEARCHES_PER_SESSION", 1, 1000).default(3),
  MEMRECALL_SEMANTIC_FLOOR: fraction("MEMRECALL_SEMANTIC_FLOOR").optional(),
  MEMRECALL_SEMANTIC_CEILING: fraction("MEMRECALL_SEMANTIC_CEILING").optional(),
  MEMRECALL_CALIBRATION_TIMEOUT_MS: integer("MEMRECALL_CALIBRATION_TIMEOUT_MS", 0, 600_000).default(15_000),
  MEMRECALL_INDEX_USERS: integer("MEMRECALL_INDEX_USERS", 1, 100_000).default(64),
  MEMRECALL_MAX_CONTEXT_WINDOW: integer("MEMRECALL_MAX_CONTEXT_WINDOW", 1, 100_000).default(200),
  MEMRECALL_RECALL_TIMEOUT_MS: integer("MEMRECALL_RECALL_TIMEOUT_MS", 100, 3_600_000).default(120_000),
  MEMRECALL_GLOSSARY: list.optional(),
  // sessions
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^rediss?:\/\//, "REDIS_URL must start with redis:// or rediss://")
    .optional(),
  REDIS_CLUSTER: z.enum(["true", "false"]).default("false"),
  REDIS_SENTINELS: list
    .pipe(z.array(sentinelAddress).min(1, "REDIS_SENTINELS must name at least one sentinel (host:port)"))
    .optional(),
  REDIS_SENTINEL_MASTER: z
    .string()
    .trim()
    .regex(/^\S+$/, 'REDIS_SENTINEL_MASTER must be one word: the name in the sentinels\' "sentinel monitor" line')
    .optional(),
  REDIS_SENTINEL_PASSWORD: z.string().trim().optional(),
  REDIS_SENTINEL_TLS: flag("REDIS_SENTINEL_TLS"),
  REDIS_USERNAME: z.string().trim().optional(),
  REDIS_PASSWORD: z.string().trim().optional(),
  REDIS_TLS: flag("REDIS_TLS"),
  REDIS_COMMAND_TIMEOUT_MS: integer("REDIS_COMMAND_TIMEOUT_MS", 1, 60_000).default(2000),
  SESSION_VALUE_MAX_BYTES: integer("SESSION_VALUE_MAX_BYTES", 1024, 64 * 1024 * 1024).default(1024 * 1024),
  SESSION_MAX_ENTRIES: integer("SESSION_MAX_ENTRIES", 100, 100_000_000).default(100_000),
  SESSION_MAX_BYTES: integer("SESSION_MAX_BYTES", 1024 * 1024, 64 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  // clients
  LLM_BASE_URL: httpUrl.optional(),
  LLM_API_KEY: z.string().trim().optional(),
  LLM_MODEL: z.string().trim().min(1).default("gpt-4o-mini"),
  LLM_TIMEOUT_MS: integer("LLM_TIMEOUT_MS", 100, 600_000).default(30_000),
  EMBEDDINGS_BASE_URL: httpUrl.optional(),
  EMBEDDINGS_API_KEY: z.string().trim().optional(),
  EMBEDDINGS_MODEL: z.string().trim().min(1).default("text-embedding-3-small"),
  /** Default: UPSTREAM_TIMEOUT_MS's value, which embeddings calls used before they had a setting of their own. */
  EMBEDDINGS_TIMEOUT_MS: integer("EMBEDDINGS_TIMEOUT_MS", 1, 600_000).optional(),
  RERANKER_URL: httpUrl.optional(),
  RERANKER_API_KEY: z.string().trim().optional(),
  RERANKER_MODEL: z.string().trim().min(1).default("reranker"),
  /** Default: UPSTREAM_TIMEOUT_MS's value, which reranker calls used before they had a setting of their own. */
  RERANKER_TIMEOUT_MS: integer("RERANKER_TIMEOUT_MS", 1, 600_000).optional(),
  /** data-retrieval is a platform service: it shares UPSTREAM_TIMEOUT_MS and UPSTREAM_MAX_SOCKETS with the knowledge networks. */
  DATA_RETRIEVAL_URL: httpUrl.optional(),
  // tracing: OpenTelemetry's own variable names, read here so a bad one stops start-up like any other
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders.optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: integer("OTEL_EXPORTER_OTLP_TIMEOUT", 100, 600_000).default(10_000),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default("context-loader"),
  OTEL_TRACES_SAMPLER_ARG: fraction("OTEL_TRACES_SAMPLER_ARG").default(1),
});

type Env = z.output<typeof envSchema>;

const WHAT = "settings";

/** Parses the settings from an environment map (process.env in production, a plain object in tests). */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const e = readEnv(envSchema, env, WHAT);
  checkPairs(e);
  return {
    server: serverSection(e),
    auth: authSection(e),
    logLevel: e.LOG_LEVEL,
    knowledge: knowledgeSource(e),
    keywordContext: {
      candidateLimit: e.KEYWORD_CANDIDATE_LIMIT,
      concurrency: e.KEYWORD_NEIGHBOR_CONCURRENCY,
      pathsPerRequest: e.KEYWORD_PATHS_PER_REQUEST,
    },
    matching: {
      aliasRelations: e.MENTION_ALIAS_RELATIONS,
      vocabularyPaths: e.MENTION_VOCABULARY ?? DEFAULT_VOCABULARY,
    },
    resolver: { defaultTimeZone: e.RESOLVER_DEFAULT_TIMEZONE, objectTypeCacheMs: e.RESOLVER_OBJECT_TYPE_CACHE_MS },
    memrecall: memrecallSection(e),
    sessions: {
      redis: redisSection(e),
      maxValueBytes: e.SESSION_VALUE_MAX_BYTES,
      maxMemoryEntries: e.SESSION_MAX_ENTRIES,
      maxMemoryBytes: e.SESSION_MAX_BYTES,
    },
    clients: clientsSection(e),
    tracing: tracingSection(e),
  };
}

/**
 * OTLP/HTTP trace export, on only when an endpoint is set: the traces
 * endpoint as given, or `/v1/traces` below the general one (the OTLP spec's
 * rule for the two variables).
 */
function tracingSection(e: Env): Config["tracing"] {
  const url =
    e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${e.OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`);
  if (url === undefined) return undefined;
  return {
    url,
    headers: e.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    timeoutMs: e.OTEL_EXPORTER_OTLP_TIMEOUT,
    serviceName: e.OTEL_SERVICE_NAME,
    sampleRatio: e.OTEL_TRACES_SAMPLER_ARG,
  };
}

/** Settings that only make sense together, or not together. */
function checkPairs(e: Env): void {
  if ((e.TLS_CERT === undefined) !== (e.TLS_KEY === undefined)) {
    throw new ConfigError(WHAT, ["TLS_CERT and TLS_KEY must be set together (or neither)"]);
  }
  if ((e.ONTOLOGY_MANAGER_URL === undefined) !== (e.ONTOLOGY_QUERY_URL === undefined)) {
    throw new ConfigError(WHAT, [
      "ONTOLOGY_MANAGER_URL and ONTOLOGY_QUERY_URL must be set together (the platform), or neither (the embedded engine)",
    ]);
  }
  if (e.ONTOLOGY_QUERY_URL !== undefined && e.KN_BUNDLE !== undefined) {
    throw new ConfigError(WHAT, [
      "KN_BUNDLE is for the embedded engine; unset it, or unset ONTOLOGY_MANAGER_URL and ONTOLOGY_QUERY_URL",
    ]);
  }
  // A prefix without its service's URL would silently do nothing.
  const prefixes: [keyof Env, keyof Env][] = [
    ["ONTOLOGY_MANAGER_PATH_PREFIX", "ONTOLOGY_MANAGER_URL"],
    ["ONTOLOGY_QUERY_PATH_PREFIX", "ONTOLOGY_QUERY_URL"],
    ["OPERATOR_MARKET_PATH_PREFIX", "OPERATOR_MARKET_URL"],
  ];
  const idle = prefixes.filter(([prefix, url]) => e[prefix] !== undefined && e[url] === undefined);
  if (idle.length > 0) {
    throw new ConfigError(
      WHAT,
      idle.map(([prefix, url]) => `${prefix} is the path below ${url}, which is not set`),
    );
  }
  if (e.MEMORY_STORE === "postgres" && e.DATABASE_URL === undefined) {
    throw new ConfigError(WHAT, ["MEMORY_STORE=postgres needs DATABASE_URL (postgres://user@host:5432/database)"]);
  }
}

/** Settings only Sentinel mode reads; with REDIS_URL, credentials and TLS are in the URL. */
const SENTINEL_ONLY = [
  "REDIS_SENTINEL_MASTER",
  "REDIS_SENTINEL_PASSWORD",
  "REDIS_SENTINEL_TLS",
  "REDIS_USERNAME",
  "REDIS_PASSWORD",
  "REDIS_TLS",
] as const;

/**
 * Redis for sessions: one node or a Cluster seed node (REDIS_URL), or a master
 * found through Sentinel (REDIS_SENTINELS and REDIS_SENTINEL_MASTER, which
 * take no REDIS_URL: the sentinels say where the master is); none of them: no Redis.
 */
function redisSection(e: Env): Config["sessions"]["redis"] {
  const commandTimeoutMs = e.REDIS_COMMAND_TIMEOUT_MS;
  if (e.REDIS_SENTINELS === undefined) {
    const stray = SENTINEL_ONLY.filter((k) => e[k] !== undefined);
    if (stray.length > 0) {
      const inUrl =
        e.REDIS_URL === undefined ? "" : " (with REDIS_URL, the user, password and rediss:// go in the URL)";
      throw new ConfigError(
        WHAT,
        stray.map((k) => `${k} is for Redis behind Sentinel, and REDIS_SENTINELS is not set${inUrl}`),
      );
    }
    return e.REDIS_URL === undefined
      ? undefined
      : { url: e.REDIS_URL, cluster: e.REDIS_CLUSTER === "true", commandTimeoutMs };
  }
  const problems = [
    ...(e.REDIS_SENTINEL_MASTER === undefined
      ? ["REDIS_SENTINELS needs REDIS_SENTINEL_MASTER: the name the sentinels monitor the master under"]
      : []),
    ...(e.REDIS_URL === undefined
      ? []
      : [
          "REDIS_URL and REDIS_SENTINELS both say where Redis is: with Sentinel, unset REDIS_URL (the sentinels name the master) and give the master's user and password in REDIS_USERNAME and REDIS_PASSWORD",
        ]),
    ...(e.REDIS_CLUSTER === "true"
      ? ["REDIS_CLUSTER=true and REDIS_SENTINELS cannot be used together: Redis is a Cluster or behind Sentinel"]
      : []),
  ];
  if (problems.length > 0) throw new ConfigError(WHAT, problems);
  const sentinel: SentinelSettings = {
    sentinels: e.REDIS_SENTINELS,
    masterName: e.REDIS_SENTINEL_MASTER!,
    sentinelPassword: e.REDIS_SENTINEL_PASSWORD,
    username: e.REDIS_USERNAME,
    password: e.REDIS_PASSWORD,
    tls: e.REDIS_TLS === "true",
    sentinelTls: e.REDIS_SENTINEL_TLS === "true",
  };
  return { sentinel, commandTimeoutMs };
}

function serverSection(e: Env): Config["server"] {
  return {
    port: e.PORT,
    host: e.HOST,
    tls:
      e.TLS_CERT && e.TLS_KEY
        ? {
            cert: readPem("TLS_CERT", e.TLS_CERT),
            key: readPem("TLS_KEY", e.TLS_KEY),
            ...(e.TLS_CLIENT_CA ? { clientCa: readPem("TLS_CLIENT_CA", e.TLS_CLIENT_CA) } : {}),
          }
        : undefined,
    corsAllowedOrigins: e.CORS_ALLOWED_ORIGINS,
    defaultLanguage: e.DEFAULT_LANGUAGE,
    readMaxBytes: e.READ_MAX_BYTES,
    writeMaxBytes: e.WRITE_MAX_BYTES,
    compressMinBytes: e.COMPRESS_MIN_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    admission: {
      maxInFlight: e.ADMISSION_MAX_IN_FLIGHT,
      maxQueued: e.ADMISSION_MAX_QUEUED,
      maxWaitMs: e.ADMISSION_MAX_WAIT_MS,
    },
    jsonMaxDepth: e.JSON_MAX_DEPTH,
    jsonMaxValues: e.JSON_MAX_VALUES,
    streams: { perConnection: e.HTTP2_MAX_CONCURRENT_STREAMS, total: e.STREAMS_MAX_OPEN },
    healthWatchIdleMs: e.HEALTH_WATCH_IDLE_MS,
    allowedHosts:
      e.ALLOWED_HOSTS === undefined
        ? isLoopback(e.HOST)
          ? LOOPBACK_HOSTS
          : undefined
        : e.ALLOWED_HOSTS.includes("*")
          ? undefined
          : e.ALLOWED_HOSTS,
    timeouts: {
      // The whole request includes its headers: a longer headers timeout could never fire.
      headersMs: Math.min(e.HTTP_HEADERS_TIMEOUT_MS, e.HTTP_REQUEST_TIMEOUT_MS),
      requestMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      http2IdleMs: e.HTTP2_IDLE_TIMEOUT_MS,
    },
  };
}

/** Settings each mode needs, and settings of another mode (set by mistake, they would silently do nothing). */
const AUTH_NEEDS: Record<Env["AUTH_MODE"], (keyof Env)[]> = {
  headers: [],
  mtls: ["TLS_CERT", "TLS_KEY", "TLS_CLIENT_CA"],
  jwt: ["AUTH_JWKS_URL", "AUTH_ISSUER", "AUTH_AUDIENCE"],
  introspection: ["AUTH_INTROSPECTION_URL"],
};
const AUTH_ONLY_FOR: [keyof Env, Env["AUTH_MODE"][]][] = [
  ["TLS_CLIENT_CA", ["mtls"]],
  ["AUTH_JWKS_URL", ["jwt"]],
  ["AUTH_ALGORITHMS", ["jwt"]],
  ["AUTH_ISSUER", ["jwt", "introspection"]],
  ["AUTH_AUDIENCE", ["jwt", "introspection"]],
  ["AUTH_ACCOUNT_TYPE_CLAIM", ["jwt", "introspection"]],
  ["AUTH_INTROSPECTION_URL", ["introspection"]],
  ["AUTH_INTROSPECTION_CLIENT_ID", ["introspection"]],
  ["AUTH_INTROSPECTION_CLIENT_SECRET", ["introspection"]],
];

function authSection(e: Env): AuthSettings {
  const mode = e.AUTH_MODE;
  const problems = [
    ...AUTH_NEEDS[mode].filter((k) => e[k] === undefined).map((k) => `AUTH_MODE=${mode} needs ${k}`),
    ...AUTH_ONLY_FOR.filter(([k, modes]) => e[k] !== undefined && !modes.includes(mode)).map(
      ([k, modes]) => `${k} is for AUTH_MODE=${modes.join(" or ")} (AUTH_MODE is ${mode})`,
    ),
  ];
  if ((e.AUTH_INTROSPECTION_CLIENT_ID === undefined) !== (e.AUTH_INTROSPECTION_CLIENT_SECRET === undefined)) {
    problems.push(
      "AUTH_INTROSPECTION_CLIENT_ID and AUTH_INTROSPECTION_CLIENT_SECRET must be set together (or neither)",
    );
  }
  if (problems.length > 0) throw new ConfigError(WHAT, problems);
  const metricsAuth = e.METRICS_AUTH;
  const claims = {
    accountId: e.AUTH_ACCOUNT_ID_CLAIM,
    accountType: e.AUTH_ACCOUNT_TYPE_CLAIM,
    scopes: e.AUTH_SCOPES_CLAIM,
  };
  switch (mode) {
    case "headers":
    case "mtls":
      return { mode, metricsAuth };
    case "jwt":
      return {
        mode,
        metricsAuth,
        jwksUrl: e.AUTH_JWKS_URL!,
        issuer: e.AUTH_ISSUER!,
        audience: e.AUTH_AUDIENCE!,
        algorithms: e.AUTH_ALGORITHMS ?? [...JWT_ALGORITHMS],
        clockSkewS: e.AUTH_CLOCK_SKEW_S,
        claims,
        timeoutMs: e.AUTH_TIMEOUT_MS,
      };
    case "introspection":
      return {
        mode,
        metricsAuth,
        url: e.AUTH_INTROSPECTION_URL!,
        client:
          e.AUTH_INTROSPECTION_CLIENT_ID === undefined
            ? undefined
            : { id: e.AUTH_INTROSPECTION_CLIENT_ID, secret: e.AUTH_INTROSPECTION_CLIENT_SECRET! },
        cacheMs: e.AUTH_INTROSPECTION_CACHE_MS,
        issuer: e.AUTH_ISSUER,
        audience: e.AUTH_AUDIENCE,
        clockSkewS: e.AUTH_CLOCK_SKEW_S,
        claims,
        timeoutMs: e.AUTH_TIMEOUT_MS,
      };
  }
}

function knowledgeSource(e: Env): KnowledgeSource {
  if (e.ONTOLOGY_MANAGER_URL === undefined || e.ONTOLOGY_QUERY_URL === undefined) {
    return {
      kind: "embedded",
      bundlePaths: e.KN_BUNDLE ?? [DEFAULT_BUNDLE],
      timeZone: e.EMBEDDED_TIMEZONE,
      scanBudget: e.EMBEDDED_SCAN_BUDGET,
    };
  }
  return {
    kind: "http",
    ontologyManagerUrl: e.ONTOLOGY_MANAGER_URL,
    ontologyQueryUrl: e.ONTOLOGY_QUERY_URL,
    operatorMarketUrl: e.OPERATOR_MARKET_URL,
    timeoutMs: e.UPSTREAM_TIMEOUT_MS,
    maxSockets: e.UPSTREAM_MAX_SOCKETS,
    spelling: e.UPSTREAM_ID_SPELLING,
    paths: platformPaths(e),
  };
}

/** PLATFORM_API_LAYOUT's path prefixes, each *_PATH_PREFIX that is set winning over its service's. */
function platformPaths(e: Env): PlatformPaths {
  const layout = PLATFORM_LAYOUTS[e.PLATFORM_API_LAYOUT];
  return {
    ontologyManager: e.ONTOLOGY_MANAGER_PATH_PREFIX ?? layout.ontologyManager,
    ontologyQuery: e.ONTOLOGY_QUERY_PATH_PREFIX ?? layout.ontologyQuery,
    operatorIntegration: e.OPERATOR_MARKET_PATH_PREFIX ?? layout.operatorIntegration,
  };
}

// The fixed semantic ranges (memrecall/relevance.ts), for an embedder the
// start-up probe did not measure. The local default is measured for MemRecall's
// local embedder on the labelled sets (bench/memrecall*.json): 99 % of
// unrelated pairs stay under 0.2 in Chinese and English alike, relevant pairs
// have a median of 0.22 to 0.3, and a memory scoring s is then relevant about
// s of the time. An endpoint's is what holds when its probe fails or is off: a
// guess for a model nobody measured, unrelated texts of text-embedding-3-small
// under the floor, its paraphrases near the ceiling.
const LOCAL_SEMANTIC_RANGE = { floor: 0.1, ceiling: 0.5 };
const ENDPOINT_SEMANTIC_RANGE = { floor: 0.25, ceiling: 0.7 };

function memrecallSection(e: Env): Config["memrecall"] {
  const semantic = e.EMBEDDINGS_BASE_URL === undefined ? LOCAL_SEMANTIC_RANGE : ENDPOINT_SEMANTIC_RANGE;
  const semanticFloor = e.MEMRECALL_SEMANTIC_FLOOR ?? semantic.floor;
  const semanticCeiling = e.MEMRECALL_SEMANTIC_CEILING ?? semantic.ceiling;
  if (semanticCeiling <= semanticFloor) {
    const problem = `MEMRECALL_SEMANTIC_CEILING (${semanticCeiling}) must be above MEMRECALL_SEMANTIC_FLOOR (${semanticFloor})`;
    throw new ConfigError(WHAT, [problem]);
  }
  return {
    store:
      e.MEMORY_STORE === "postgres"
        ? { kind: "postgres", url: e.DATABASE_URL! }
        : { kind: "sqlite", path: e.SQLITE_PATH },
    maxSearchesPerSession: e.MEMRECALL_MAX_SEARCHES_PER_SESSION,
    semanticFloor,
    semanticCeiling,
    semanticRangeSet: e.MEMRECALL_SEMANTIC_FLOOR !== undefined || e.MEMRECALL_SEMANTIC_CEILING !== undefined,
    calibrationTimeoutMs: e.MEMRECALL_CALIBRATION_TIMEOUT_MS,
    probePath: MEMRECALL_PROBE,
    indexUsers: e.MEMRECALL_INDEX_USERS,
    maxContextWindow: e.MEMRECALL_MAX_CONTEXT_WINDOW,
    recallTimeoutMs: e.MEMRECALL_RECALL_TIMEOUT_MS,
    glossaryPaths: e.MEMRECALL_GLOSSARY ?? DEFAULT_GLOSSARY,
  };
}

function clientsSection(e: Env): Config["clients"] {
  const llm = e.LLM_BASE_URL;
  const embeddings = e.EMBEDDINGS_BASE_URL;
  const reranker = e.RERANKER_URL;
  const dataRetrieval = e.DATA_RETRIEVAL_URL;
  return {
    llm:
      llm === undefined
        ? undefined
        : { baseUrl: llm, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL, timeoutMs: e.LLM_TIMEOUT_MS },
    embeddings:
      embeddings === undefined
        ? undefined
        : {
            baseUrl: embeddings,
            apiKey: e.EMBEDDINGS_API_KEY,
            model: e.EMBEDDINGS_MODEL,
            timeoutMs: e.EMBEDDINGS_TIMEOUT_MS ?? e.UPSTREAM_TIMEOUT_MS,
          },
    reranker:
      reranker === undefined
        ? undefined
        : {
            url: reranker,
            apiKey: e.RERANKER_API_KEY,
            model: e.RERANKER_MODEL,
            timeoutMs: e.RERANKER_TIMEOUT_MS ?? e.UPSTREAM_TIMEOUT_MS,
          },
    dataRetrieval:
      dataRetrieval === undefined
        ? undefined
        : { url: dataRetrieval, timeoutMs: e.UPSTREAM_TIMEOUT_MS, maxSockets: e.UPSTREAM_MAX_SOCKETS },
  };
}

function readPem(name: string, path: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new ConfigError(WHAT, [`${name}: cannot read ${path}: ${(err as Error).message}`]);
  }
  if (!pem.toString("utf8").includes("-----BEGIN")) {
    throw new ConfigError(WHAT, [`${name}: ${path} is not a PEM file`]);
  }
  return pem;
}
