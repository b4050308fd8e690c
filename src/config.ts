import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { isValidTimeZone } from "./core/calendar";

/**
 * Every setting of the service, read from the environment once at start-up.
 * Nothing else reads process.env. Each setting is documented in README.md
 * ("Settings"); a bad value stops start-up with a message naming the variable.
 */
export interface Config {
  /** TCP port for every protocol (gRPC, gRPC-web, Connect, plain HTTP). */
  port: number;
  /** Interface to bind. */
  host: string;
  /** PEM certificate and key; when both are set the port speaks TLS (ALPN h2 + http/1.1). */
  tls: { cert: Buffer; key: Buffer } | undefined;
  /** Browser origins allowed to call the service; "*" allows any. Empty: no cross-origin calls. */
  corsAllowedOrigins: string[];
  /** Largest request message accepted, bytes. */
  readMaxBytes: number;
  /** Largest response message sent, bytes. */
  writeMaxBytes: number;
  /** Responses smaller than this are sent uncompressed even to clients that accept gzip or brotli, bytes. */
  compressMinBytes: number;
  /** How long in-flight calls may run after SIGTERM/SIGINT before they are cut, ms. */
  shutdownGraceMs: number;
  /** pino level. */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Largest context window ExpandContextWindow grants, in messages. */
  memrecallMaxContextWindow: number;
  /** Where knowledge networks are read: the platform over HTTP, or the embedded engine over bundle files. */
  knowledge: KnowledgeSource;
  /** Session state: always in memory; in Redis too when REDIS_URL is set (then the default). */
  sessions: {
    redis: { url: string; cluster: boolean; commandTimeoutMs: number } | undefined;
    maxValueBytes: number;
    maxMemoryEntries: number;
  };
  /** An OpenAI-compatible chat completions endpoint; undefined when LLM_BASE_URL is not set. */
  llm: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
  /** An OpenAI-compatible embeddings endpoint; undefined: the local lexical embedder. */
  embeddings: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
  /** data-retrieval, to which kn_search is forwarded; undefined (kn_search computed here) when DATA_RETRIEVAL_URL is not set. */
  dataRetrieval: { url: string; timeoutMs: number; maxSockets: number } | undefined;
  /** The platform's reranker; undefined when RERANKER_URL is not set. */
  reranker: { url: string; apiKey: string | undefined; model: string; timeoutMs: number } | undefined;
  /** Keyword context: candidates fetched before local scoring, and neighbour requests in flight at once. */
  keywordContext: { candidateLimit: number; concurrency: number; pathsPerRequest: number };
  /** Logic property resolver: the default time zone, and how long object type definitions are cached (0: fetched every call). */
  resolver: { defaultTimeZone: string; objectTypeCacheMs: number };
  /** Where memories are kept, and how they are searched. */
  memrecall: {
    store: { kind: "sqlite"; path: string } | { kind: "postgres"; url: string };
    maxSearchesPerSession: number;
    /** Cosines mapped to relevance 0 and 1 (they depend on the embedder). */
    semanticFloor: number;
    semanticCeiling: number;
    /** Users whose search index (embeddings and tokens) is held in memory at once. */
    indexUsers: number;
  };
}

/** The knowledge-network backend: the platform's services, or bundles served in-process. */
export type KnowledgeSource =
  | {
      kind: "http";
      ontologyManagerUrl: string;
      ontologyQueryUrl: string;
      /** agent-operator-integration; without it operator parameter schemas are not fetched. */
      operatorMarketUrl: string | undefined;
      timeoutMs: number;
      maxSockets: number;
      /** Identity field names sent upstream: "new" (_instance_identities) or "old" (unique_identities). */
      spelling: "new" | "old";
    }
  | {
      kind: "embedded";
      bundlePaths: string[];
      /** Time zone of metric calendar buckets. */
      timeZone: string;
    };

/** The sample network shipped in data/, used when KN_BUNDLE is not set. */
export const DEFAULT_BUNDLE = fileURLToPath(new URL("../data/kn_medical.bundle.json", import.meta.url));

const integer = (name: string, min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const list = z
  .string()
  .transform((s) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter((x) => x.length > 0),
  );

const httpUrl = z
  .string()
  .trim()
  .url("must be an http(s) URL")
  .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL")
  .transform((u) => u.replace(/\/+$/, ""));

const origin = z.string().refine((o) => o === "*" || /^https?:\/\/[^/\s]+$/.test(o), {
  message: 'each origin must be "*" or scheme://host[:port] without a path',
});

const LOCAL_SEMANTIC_RANGE = { floor: 0.1, ceiling: 0.5 };
const ENDPOINT_SEMANTIC_RANGE = { floor: 0.25, ceiling: 0.7 };

/** A number 0..1 from its text. */
function fraction(name: string) {
  return z
    .string()
    .trim()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, `${name} must be a number from 0 to 1`)
    .transform(Number);
}

const envSchema = z.object({
  PORT: integer("PORT", 0, 65535).default(8080),
  HOST: z.string().trim().min(1).default("0.0.0.0"),
  TLS_CERT: z.string().trim().optional(),
  TLS_KEY: z.string().trim().optional(),
  CORS_ALLOWED_ORIGINS: list.pipe(z.array(origin)).default([]),
  READ_MAX_BYTES: integer("READ_MAX_BYTES", 1024, 256 * 1024 * 1024).default(4 * 1024 * 1024),
  WRITE_MAX_BYTES: integer("WRITE_MAX_BYTES", 1024, 256 * 1024 * 1024).default(32 * 1024 * 1024),
  COMPRESS_MIN_BYTES: integer("COMPRESS_MIN_BYTES", 0, 256 * 1024 * 1024).default(64 * 1024),
  SHUTDOWN_GRACE_MS: integer("SHUTDOWN_GRACE_MS", 0, 600_000).default(10_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  MEMRECALL_MAX_CONTEXT_WINDOW: integer("MEMRECALL_MAX_CONTEXT_WINDOW", 1, 100_000).default(200),
  ONTOLOGY_MANAGER_URL: httpUrl.optional(),
  ONTOLOGY_QUERY_URL: httpUrl.optional(),
  OPERATOR_MARKET_URL: httpUrl.optional(),
  DATA_RETRIEVAL_URL: httpUrl.optional(),
  UPSTREAM_TIMEOUT_MS: integer("UPSTREAM_TIMEOUT_MS", 1, 600_000).default(10_000),
  UPSTREAM_MAX_SOCKETS: integer("UPSTREAM_MAX_SOCKETS", 1, 10_000).default(64),
  UPSTREAM_ID_SPELLING: z.enum(["new", "old"]).default("new"),
  KN_BUNDLE: list.pipe(z.array(z.string()).min(1, "KN_BUNDLE must name at least one file")).optional(),
  EMBEDDED_TIMEZONE: z.string().trim().refine(isValidTimeZone, "EMBEDDED_TIMEZONE must be an IANA time zone such as Asia/Shanghai").default("Asia/Shanghai"),
  REDIS_URL: z.string().trim().regex(/^rediss?:\/\//, "REDIS_URL must start with redis:// or rediss://").optional(),
  REDIS_CLUSTER: z.enum(["true", "false"]).default("false"),
  REDIS_COMMAND_TIMEOUT_MS: integer("REDIS_COMMAND_TIMEOUT_MS", 1, 60_000).default(2000),
  SESSION_VALUE_MAX_BYTES: integer("SESSION_VALUE_MAX_BYTES", 1024, 64 * 1024 * 1024).default(1024 * 1024),
  SESSION_MAX_ENTRIES: integer("SESSION_MAX_ENTRIES", 100, 100_000_000).default(100_000),
  LLM_BASE_URL: httpUrl.optional(),
  LLM_API_KEY: z.string().trim().optional(),
  LLM_MODEL: z.string().trim().min(1).default("gpt-4o-mini"),
  LLM_TIMEOUT_MS: integer("LLM_TIMEOUT_MS", 100, 600_000).default(30_000),
  EMBEDDINGS_BASE_URL: httpUrl.optional(),
  EMBEDDINGS_API_KEY: z.string().trim().optional(),
  EMBEDDINGS_MODEL: z.string().trim().min(1).default("text-embedding-3-small"),
  RERANKER_URL: httpUrl.optional(),
  RERANKER_API_KEY: z.string().trim().optional(),
  RERANKER_MODEL: z.string().trim().min(1).default("reranker"),
  KEYWORD_CANDIDATE_LIMIT: integer("KEYWORD_CANDIDATE_LIMIT", 10, 10_000).default(200),
  KEYWORD_NEIGHBOR_CONCURRENCY: integer("KEYWORD_NEIGHBOR_CONCURRENCY", 1, 64).default(4),
  KEYWORD_PATHS_PER_REQUEST: integer("KEYWORD_PATHS_PER_REQUEST", 1, 1000).default(50),
  RESOLVER_DEFAULT_TIMEZONE: z.string().trim().refine(isValidTimeZone, "RESOLVER_DEFAULT_TIMEZONE must be an IANA time zone such as Asia/Shanghai").default("Asia/Shanghai"),
  RESOLVER_OBJECT_TYPE_CACHE_MS: integer("RESOLVER_OBJECT_TYPE_CACHE_MS", 0, 86_400_000).default(0),
  MEMORY_STORE: z.enum(["sqlite", "postgres"], { error: 'MEMORY_STORE must be "sqlite" or "postgres"' }).default("sqlite"),
  SQLITE_PATH: z.string().trim().min(1).default("./data/memories.sqlite"),
  DATABASE_URL: z.string().trim().regex(/^postgres(ql)?:\/\//, "DATABASE_URL must start with postgres:// or postgresql://").optional(),
  MEMRECALL_MAX_SEARCHES_PER_SESSION: integer("MEMRECALL_MAX_SEARCHES_PER_SESSION", 1, 1000).default(3),
  MEMRECALL_SEMANTIC_FLOOR: fraction("MEMRECALL_SEMANTIC_FLOOR").optional(),
  MEMRECALL_SEMANTIC_CEILING: fraction("MEMRECALL_SEMANTIC_CEILING").optional(),
  MEMRECALL_INDEX_USERS: integer("MEMRECALL_INDEX_USERS", 1, 100_000).default(64),
});

/** A setting that cannot be used; start-up stops with this message. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses the settings from an environment map (process.env in production, a
 * plain object in tests). Empty strings count as unset.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "environment");
      const got = present[name];
      return `${name}: ${issue.message}${got === undefined ? "" : ` (got ${JSON.stringify(got)})`}`;
    });
    throw new ConfigError(`invalid settings:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  if ((e.TLS_CERT === undefined) !== (e.TLS_KEY === undefined)) {
    throw new ConfigError("invalid settings:\n  TLS_CERT and TLS_KEY must be set together (or neither)");
  }
  if ((e.ONTOLOGY_MANAGER_URL === undefined) !== (e.ONTOLOGY_QUERY_URL === undefined)) {
    throw new ConfigError(
      "invalid settings:\n  ONTOLOGY_MANAGER_URL and ONTOLOGY_QUERY_URL must be set together (the platform), or neither (the embedded engine)",
    );
  }
  if (e.ONTOLOGY_QUERY_URL !== undefined && e.KN_BUNDLE !== undefined) {
    throw new ConfigError("invalid settings:\n  KN_BUNDLE is for the embedded engine; unset it, or unset ONTOLOGY_MANAGER_URL and ONTOLOGY_QUERY_URL");
  }
  if (e.MEMORY_STORE === "postgres" && e.DATABASE_URL === undefined) {
    throw new ConfigError("invalid settings:\n  MEMORY_STORE=postgres needs DATABASE_URL (postgres://user@host:5432/database)");
  }
  // Defaults measured on bench/memrecall-eval.json: the local lexical embedder's
  // cosines run lower than a neural model's.
  const semantic = e.EMBEDDINGS_BASE_URL === undefined ? LOCAL_SEMANTIC_RANGE : ENDPOINT_SEMANTIC_RANGE;
  const semanticFloor = e.MEMRECALL_SEMANTIC_FLOOR ?? semantic.floor;
  const semanticCeiling = e.MEMRECALL_SEMANTIC_CEILING ?? semantic.ceiling;
  if (semanticCeiling <= semanticFloor) {
    throw new ConfigError(`invalid settings:\n  MEMRECALL_SEMANTIC_CEILING (${semanticCeiling}) must be above MEMRECALL_SEMANTIC_FLOOR (${semanticFloor})`);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    tls: e.TLS_CERT && e.TLS_KEY ? { cert: readPem("TLS_CERT", e.TLS_CERT), key: readPem("TLS_KEY", e.TLS_KEY) } : undefined,
    corsAllowedOrigins: e.CORS_ALLOWED_ORIGINS,
    readMaxBytes: e.READ_MAX_BYTES,
    writeMaxBytes: e.WRITE_MAX_BYTES,
    compressMinBytes: e.COMPRESS_MIN_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    logLevel: e.LOG_LEVEL,
    memrecallMaxContextWindow: e.MEMRECALL_MAX_CONTEXT_WINDOW,
    knowledge:
      e.ONTOLOGY_MANAGER_URL !== undefined && e.ONTOLOGY_QUERY_URL !== undefined
        ? {
            kind: "http",
            ontologyManagerUrl: e.ONTOLOGY_MANAGER_URL,
            ontologyQueryUrl: e.ONTOLOGY_QUERY_URL,
            operatorMarketUrl: e.OPERATOR_MARKET_URL,
            timeoutMs: e.UPSTREAM_TIMEOUT_MS,
            maxSockets: e.UPSTREAM_MAX_SOCKETS,
            spelling: e.UPSTREAM_ID_SPELLING,
          }
        : { kind: "embedded", bundlePaths: e.KN_BUNDLE ?? [DEFAULT_BUNDLE], timeZone: e.EMBEDDED_TIMEZONE },
    sessions: {
      redis: e.REDIS_URL === undefined ? undefined : { url: e.REDIS_URL, cluster: e.REDIS_CLUSTER === "true", commandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS },
      maxValueBytes: e.SESSION_VALUE_MAX_BYTES,
      maxMemoryEntries: e.SESSION_MAX_ENTRIES,
    },
    llm: e.LLM_BASE_URL === undefined ? undefined : { baseUrl: e.LLM_BASE_URL, apiKey: e.LLM_API_KEY, model: e.LLM_MODEL, timeoutMs: e.LLM_TIMEOUT_MS },
    embeddings:
      e.EMBEDDINGS_BASE_URL === undefined
        ? undefined
        : { baseUrl: e.EMBEDDINGS_BASE_URL, apiKey: e.EMBEDDINGS_API_KEY, model: e.EMBEDDINGS_MODEL, timeoutMs: e.UPSTREAM_TIMEOUT_MS },
    dataRetrieval:
      e.DATA_RETRIEVAL_URL === undefined ? undefined : { url: e.DATA_RETRIEVAL_URL, timeoutMs: e.UPSTREAM_TIMEOUT_MS, maxSockets: e.UPSTREAM_MAX_SOCKETS },
    reranker:
      e.RERANKER_URL === undefined ? undefined : { url: e.RERANKER_URL, apiKey: e.RERANKER_API_KEY, model: e.RERANKER_MODEL, timeoutMs: e.UPSTREAM_TIMEOUT_MS },
    keywordContext: {
      candidateLimit: e.KEYWORD_CANDIDATE_LIMIT,
      concurrency: e.KEYWORD_NEIGHBOR_CONCURRENCY,
      pathsPerRequest: e.KEYWORD_PATHS_PER_REQUEST,
    },
    resolver: { defaultTimeZone: e.RESOLVER_DEFAULT_TIMEZONE, objectTypeCacheMs: e.RESOLVER_OBJECT_TYPE_CACHE_MS },
    memrecall: {
      store: e.MEMORY_STORE === "postgres" ? { kind: "postgres", url: e.DATABASE_URL! } : { kind: "sqlite", path: e.SQLITE_PATH },
      maxSearchesPerSession: e.MEMRECALL_MAX_SEARCHES_PER_SESSION,
      semanticFloor,
      semanticCeiling,
      indexUsers: e.MEMRECALL_INDEX_USERS,
    },
  };
}

function readPem(name: string, path: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`invalid settings:\n  ${name}: cannot read ${path}: ${(err as Error).message}`);
  }
  if (!pem.toString("utf8").includes("-----BEGIN")) {
    throw new ConfigError(`invalid settings:\n  ${name}: ${path} is not a PEM file`);
  }
  return pem;
}

/** Faults the simulator injects into its answers (see src/embedded/simulator.ts). */
export interface SimulatorFaults {
  /** Added to every answer, ms. */
  latencyMs: number;
  /** Plus a uniform random 0..jitterMs, ms. */
  jitterMs: number;
  /** Share of calls answered 503 with an upstream error body, 0..1. */
  errorRate: number;
  /** Share of calls never answered (the client's timeout must fire), 0..1. */
  timeoutRate: number;
  /** Share of calls answered 200 with a body that is not JSON, 0..1. */
  malformedRate: number;
  /** When set, faults apply only to calls whose "METHOD path body" matches this regular expression. */
  match: string | undefined;
}

/** Settings of `npm run sim`, the embedded engine behind the platform's REST contract. */
export interface SimulatorConfig {
  port: number;
  host: string;
  bundlePaths: string[];
  timeZone: string;
  spelling: "new" | "old";
  faults: SimulatorFaults;
  logLevel: Config["logLevel"];
}

const rate = (name: string) =>
  z
    .string()
    .trim()
    .transform(Number)
    .refine((n) => Number.isFinite(n) && n >= 0 && n <= 1, `${name} must be a number between 0 and 1`);

const simulatorSchema = z.object({
  SIM_PORT: integer("SIM_PORT", 0, 65535).default(9180),
  SIM_HOST: z.string().trim().min(1).default("127.0.0.1"),
  KN_BUNDLE: list.pipe(z.array(z.string()).min(1, "KN_BUNDLE must name at least one file")).optional(),
  EMBEDDED_TIMEZONE: z.string().trim().refine(isValidTimeZone, "EMBEDDED_TIMEZONE must be an IANA time zone such as Asia/Shanghai").default("Asia/Shanghai"),
  SIM_SPELLING: z.enum(["new", "old"]).default("new"),
  SIM_LATENCY_MS: integer("SIM_LATENCY_MS", 0, 600_000).default(0),
  SIM_JITTER_MS: integer("SIM_JITTER_MS", 0, 600_000).default(0),
  SIM_ERROR_RATE: rate("SIM_ERROR_RATE").default(0),
  SIM_TIMEOUT_RATE: rate("SIM_TIMEOUT_RATE").default(0),
  SIM_MALFORMED_RATE: rate("SIM_MALFORMED_RATE").default(0),
  SIM_FAULT_MATCH: z
    .string()
    .refine((r) => {
      try {
        new RegExp(r);
        return true;
      } catch {
        return false;
      }
    }, "SIM_FAULT_MATCH must be a regular expression")
    .optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export function loadSimulatorConfig(env: Record<string, string | undefined>): SimulatorConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""));
  const parsed = simulatorSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${String(i.path[0] ?? "environment")}: ${i.message}`);
    throw new ConfigError(`invalid simulator settings:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  return {
    port: e.SIM_PORT,
    host: e.SIM_HOST,
    bundlePaths: e.KN_BUNDLE ?? [DEFAULT_BUNDLE],
    timeZone: e.EMBEDDED_TIMEZONE,
    spelling: e.SIM_SPELLING,
    faults: {
      latencyMs: e.SIM_LATENCY_MS,
      jitterMs: e.SIM_JITTER_MS,
      errorRate: e.SIM_ERROR_RATE,
      timeoutRate: e.SIM_TIMEOUT_RATE,
      malformedRate: e.SIM_MALFORMED_RATE,
      match: e.SIM_FAULT_MATCH,
    },
    logLevel: e.LOG_LEVEL,
  };
}
