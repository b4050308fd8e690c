import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../src/config";
import {
  bundles,
  ConfigError,
  DEFAULT_BUNDLE,
  DEFAULT_GLOSSARY,
  DEFAULT_VOCABULARY,
  fraction,
  httpUrl,
  integer,
  list,
  logLevel,
  MEMRECALL_PROBE,
  readEnv,
  regex,
  timeZone,
} from "../src/config-fields";
import { loadSimulatorConfig } from "../src/simulator/config";

describe("loadConfig", () => {
  it("runs with nothing set: port 8080 on loopback, no TLS, identity headers, no cross-origin callers, the embedded engine", () => {
    const c = loadConfig({});
    expect(c.auth).toEqual({ mode: "headers", metricsAuth: "none" });
    expect(c.server).toEqual({
      port: 8080,
      host: "127.0.0.1",
      tls: undefined,
      corsAllowedOrigins: [],
      defaultLanguage: "zh",
      readMaxBytes: 4 * 1024 * 1024,
      writeMaxBytes: 32 * 1024 * 1024,
      compressMinBytes: 64 * 1024,
      shutdownGraceMs: 10_000,
      admission: { maxInFlight: 64, maxQueued: 1000, maxWaitMs: 1000 },
      jsonMaxDepth: 64,
      jsonMaxValues: 5_000,
      streams: { perConnection: 100, total: 2000 },
      healthWatchIdleMs: 300_000,
      // Listening on loopback: only loopback names, so a DNS-rebinding page cannot reach the service.
      allowedHosts: ["localhost", "127.0.0.1", "[::1]"],
      timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 65_000, http2IdleMs: 65_000 },
    });
    expect(c.logLevel).toBe("info");
    expect(c.knowledge).toEqual({
      kind: "embedded",
      bundlePaths: [DEFAULT_BUNDLE],
      timeZone: "Asia/Shanghai",
      scanBudget: 20_000_000,
    });
    expect(c.memrecall).toMatchObject({
      store: { kind: "sqlite", path: "./data/memories.sqlite" },
      maxContextWindow: 200,
      recallTimeoutMs: 120_000,
      glossaryPaths: DEFAULT_GLOSSARY,
    });
    // The shipped glossary of MemRecall, a file that exists.
    expect(DEFAULT_GLOSSARY.map((p) => p.split("/").slice(-2).join("/"))).toEqual(["memrecall/glossary.json"]);
    expect(existsSync(DEFAULT_GLOSSARY[0]!)).toBe(true);
    expect(c.clients).toEqual({ llm: undefined, embeddings: undefined, reranker: undefined, dataRetrieval: undefined });
    // The shipped vocabulary: the generic equivalences and the sample network's other names, both files that exist.
    expect(c.matching).toEqual({ aliasRelations: [], vocabularyPaths: DEFAULT_VOCABULARY });
    expect(DEFAULT_VOCABULARY.map((p) => p.split("/").slice(-2).join("/"))).toEqual([
      "mentions/generic.json",
      "mentions/kn_medical.json",
    ]);
    for (const path of DEFAULT_VOCABULARY) expect(existsSync(path), path).toBe(true);
  });

  it("reads every setting from the environment into its section", () => {
    const c = loadConfig({
      PORT: "9090",
      HOST: "127.0.0.1",
      CORS_ALLOWED_ORIGINS: "http://a.example:3000, https://b.example",
      READ_MAX_BYTES: "2048",
      WRITE_MAX_BYTES: "4096",
      COMPRESS_MIN_BYTES: "0",
      SHUTDOWN_GRACE_MS: "0",
      LOG_LEVEL: "warn",
      DEFAULT_LANGUAGE: "en",
      ONTOLOGY_MANAGER_URL: "http://om:13014/",
      ONTOLOGY_QUERY_URL: "http://oq:13018",
      OPERATOR_MARKET_URL: "http://market:9000",
      UPSTREAM_TIMEOUT_MS: "5000",
      UPSTREAM_MAX_SOCKETS: "8",
      ADMISSION_MAX_IN_FLIGHT: "8",
      ADMISSION_MAX_QUEUED: "0",
      ADMISSION_MAX_WAIT_MS: "250",
      HTTP_HEADERS_TIMEOUT_MS: "3000",
      HTTP_REQUEST_TIMEOUT_MS: "2000",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "5000",
      HTTP2_IDLE_TIMEOUT_MS: "7000",
      JSON_MAX_DEPTH: "16",
      JSON_MAX_VALUES: "8000",
      HTTP2_MAX_CONCURRENT_STREAMS: "10",
      STREAMS_MAX_OPEN: "50",
      HEALTH_WATCH_IDLE_MS: "60000",
      ALLOWED_HOSTS: "loader.internal, LOADER.example.com,[::1]",
      UPSTREAM_ID_SPELLING: "old",
      PLATFORM_API_LAYOUT: "0.8",
      OPERATOR_MARKET_PATH_PREFIX: "/gateway/operators/",
      KEYWORD_CANDIDATE_LIMIT: "20",
      KEYWORD_NEIGHBOR_CONCURRENCY: "2",
      KEYWORD_PATHS_PER_REQUEST: "10",
      RESOLVER_DEFAULT_TIMEZONE: "Europe/Paris",
      RESOLVER_OBJECT_TYPE_CACHE_MS: "60000",
      MEMORY_STORE: "postgres",
      DATABASE_URL: "postgres://u@db:5432/memories",
      MEMRECALL_MAX_SEARCHES_PER_SESSION: "5",
      MEMRECALL_SEMANTIC_FLOOR: "0.2",
      MEMRECALL_SEMANTIC_CEILING: ".6",
      MEMRECALL_INDEX_USERS: "7",
      MEMRECALL_MAX_CONTEXT_WINDOW: "50",
      MEMRECALL_RECALL_TIMEOUT_MS: "9000",
      MEMRECALL_CALIBRATION_TIMEOUT_MS: "4000",
      REDIS_URL: "redis://cache:6379",
      REDIS_CLUSTER: "true",
      REDIS_COMMAND_TIMEOUT_MS: "300",
      SESSION_VALUE_MAX_BYTES: "2048",
      SESSION_MAX_ENTRIES: "1000",
      SESSION_MAX_BYTES: "2097152",
      LLM_BASE_URL: "http://llm/v1",
      LLM_API_KEY: "k1",
      LLM_MODEL: "m1",
      LLM_TIMEOUT_MS: "40000",
      EMBEDDINGS_BASE_URL: "http://emb/v1",
      EMBEDDINGS_API_KEY: "k2",
      EMBEDDINGS_MODEL: "m2",
      EMBEDDINGS_TIMEOUT_MS: "700",
      RERANKER_URL: "http://rerank",
      RERANKER_API_KEY: "k3",
      RERANKER_MODEL: "m3",
      RERANKER_TIMEOUT_MS: "800",
      DATA_RETRIEVAL_URL: "http://dr:9100",
      MENTION_ALIAS_RELATIONS: "has_alias, kn_x/other_name",
      MENTION_VOCABULARY: "/etc/cl/generic.json,/etc/cl/kn_x.json",
      MEMRECALL_GLOSSARY: "/etc/cl/glossary.json, /etc/cl/our-terms.json",
    });
    expect(c).toEqual({
      auth: { mode: "headers", metricsAuth: "none" },
      server: {
        port: 9090,
        host: "127.0.0.1",
        tls: undefined,
        corsAllowedOrigins: ["http://a.example:3000", "https://b.example"],
        defaultLanguage: "en",
        readMaxBytes: 2048,
        writeMaxBytes: 4096,
        compressMinBytes: 0,
        shutdownGraceMs: 0,
        admission: { maxInFlight: 8, maxQueued: 0, maxWaitMs: 250 },
        jsonMaxDepth: 16,
        jsonMaxValues: 8000,
        streams: { perConnection: 10, total: 50 },
        healthWatchIdleMs: 60_000,
        allowedHosts: ["loader.internal", "loader.example.com", "[::1]"],
        // The headers timeout is capped by the request timeout.
        timeouts: { headersMs: 2000, requestMs: 2000, keepAliveMs: 5000, http2IdleMs: 7000 },
      },
      logLevel: "warn",
      knowledge: {
        kind: "http",
        ontologyManagerUrl: "http://om:13014",
        ontologyQueryUrl: "http://oq:13018",
        operatorMarketUrl: "http://market:9000",
        timeoutMs: 5000,
        maxSockets: 8,
        spelling: "old",
        paths: {
          ontologyManager: "/api/bkn-backend/in/v1",
          ontologyQuery: "/api/ontology-query/in/v1",
          operatorIntegration: "/gateway/operators",
        },
      },
      keywordContext: { candidateLimit: 20, concurrency: 2, pathsPerRequest: 10 },
      matching: {
        aliasRelations: ["has_alias", "kn_x/other_name"],
        vocabularyPaths: ["/etc/cl/generic.json", "/etc/cl/kn_x.json"],
      },
      resolver: { defaultTimeZone: "Europe/Paris", objectTypeCacheMs: 60_000 },
      memrecall: {
        store: { kind: "postgres", url: "postgres://u@db:5432/memories" },
        maxSearchesPerSession: 5,
        semanticFloor: 0.2,
        semanticCeiling: 0.6,
        semanticRangeSet: true,
        calibrationTimeoutMs: 4000,
        probePath: MEMRECALL_PROBE,
        indexUsers: 7,
        maxContextWindow: 50,
        recallTimeoutMs: 9000,
        glossaryPaths: ["/etc/cl/glossary.json", "/etc/cl/our-terms.json"],
      },
      sessions: {
        redis: { url: "redis://cache:6379", cluster: true, commandTimeoutMs: 300 },
        maxValueBytes: 2048,
        maxMemoryEntries: 1000,
        maxMemoryBytes: 2097152,
      },
      clients: {
        llm: { baseUrl: "http://llm/v1", apiKey: "k1", model: "m1", timeoutMs: 40_000 },
        embeddings: { baseUrl: "http://emb/v1", apiKey: "k2", model: "m2", timeoutMs: 700 },
        reranker: { url: "http://rerank", apiKey: "k3", model: "m3", timeoutMs: 800 },
        dataRetrieval: { url: "http://dr:9100", timeoutMs: 5000, maxSockets: 8 },
      },
    });
  });

  it("gives embeddings and the reranker UPSTREAM_TIMEOUT_MS's value when their own timeouts are not set", () => {
    const env = { EMBEDDINGS_BASE_URL: "http://emb/v1", RERANKER_URL: "http://rerank" };
    expect(loadConfig(env).clients.embeddings!.timeoutMs).toBe(10_000);
    expect(loadConfig(env).clients.reranker!.timeoutMs).toBe(10_000);
    const clients = loadConfig({ ...env, UPSTREAM_TIMEOUT_MS: "1234" }).clients;
    expect(clients.embeddings!.timeoutMs).toBe(1234);
    expect(clients.reranker!.timeoutMs).toBe(1234);
  });

  it("lets EMBEDDINGS_TIMEOUT_MS and RERANKER_TIMEOUT_MS override UPSTREAM_TIMEOUT_MS for their client only", () => {
    const c = loadConfig({
      EMBEDDINGS_BASE_URL: "http://emb/v1",
      RERANKER_URL: "http://rerank",
      DATA_RETRIEVAL_URL: "http://dr:9100",
      UPSTREAM_TIMEOUT_MS: "1234",
      EMBEDDINGS_TIMEOUT_MS: "50",
      RERANKER_TIMEOUT_MS: "60",
    });
    expect(c.clients.embeddings!.timeoutMs).toBe(50);
    expect(c.clients.reranker!.timeoutMs).toBe(60);
    expect(c.clients.dataRetrieval!.timeoutMs).toBe(1234);
  });

  it("calls the platform on the 0.7 paths unless PLATFORM_API_LAYOUT names another release", () => {
    const platform = { ONTOLOGY_MANAGER_URL: "http://om", ONTOLOGY_QUERY_URL: "http://oq" };
    expect(loadConfig(platform).knowledge).toMatchObject({
      kind: "http",
      paths: {
        ontologyManager: "/api/ontology-manager/in/v1",
        ontologyQuery: "/api/ontology-query/in/v1",
        operatorIntegration: "/api/agent-operator-integration/internal-v1",
      },
    });
    expect(loadConfig({ ...platform, PLATFORM_API_LAYOUT: " 0.8 " }).knowledge).toMatchObject({
      paths: {
        ontologyManager: "/api/bkn-backend/in/v1",
        ontologyQuery: "/api/ontology-query/in/v1",
        operatorIntegration: "/api/agent-operator-integration/internal-v1",
      },
    });
  });

  it("lets each *_PATH_PREFIX override its service's path, '/' meaning none", () => {
    const c = loadConfig({
      ONTOLOGY_MANAGER_URL: "http://gw/bkn",
      ONTOLOGY_QUERY_URL: "http://oq",
      ONTOLOGY_MANAGER_PATH_PREFIX: "/",
      ONTOLOGY_QUERY_PATH_PREFIX: "/api/ontology-query/v1.2_beta~x/",
      PLATFORM_API_LAYOUT: "0.8",
    });
    expect(c.knowledge).toMatchObject({
      ontologyManagerUrl: "http://gw/bkn",
      paths: {
        ontologyManager: "",
        ontologyQuery: "/api/ontology-query/v1.2_beta~x",
        operatorIntegration: "/api/agent-operator-integration/internal-v1",
      },
    });
  });

  it("picks the semantic range of the embedder when MEMRECALL_SEMANTIC_FLOOR and CEILING are not set", () => {
    expect(loadConfig({}).memrecall).toMatchObject({
      semanticFloor: 0.1,
      semanticCeiling: 0.5,
      semanticRangeSet: false,
      calibrationTimeoutMs: 15_000,
    });
    expect(loadConfig({ EMBEDDINGS_BASE_URL: "http://emb/v1" }).memrecall).toMatchObject({
      semanticFloor: 0.25,
      semanticCeiling: 0.7,
    });
    expect(loadConfig({ MEMRECALL_SEMANTIC_CEILING: "0.8" }).memrecall).toMatchObject({
      semanticFloor: 0.1,
      semanticCeiling: 0.8,
      semanticRangeSet: true,
    });
  });

  it.each([
    [{ PORT: "http" }, /PORT: PORT must be a whole number \(got "http"\)/],
    [{ PORT: "70000" }, /PORT: PORT must be between 0 and 65535/],
    [
      { LOG_LEVEL: "loud" },
      /LOG_LEVEL: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/,
    ],
    [{ CORS_ALLOWED_ORIGINS: "agent.example" }, /CORS_ALLOWED_ORIGINS: each origin must be/],
    [{ READ_MAX_BYTES: "10" }, /READ_MAX_BYTES: READ_MAX_BYTES must be between 1024/],
    [
      { EMBEDDINGS_TIMEOUT_MS: "0" },
      /EMBEDDINGS_TIMEOUT_MS: EMBEDDINGS_TIMEOUT_MS must be between 1 and 600000 \(got "0"\)/,
    ],
    [{ RERANKER_TIMEOUT_MS: "soon" }, /RERANKER_TIMEOUT_MS: RERANKER_TIMEOUT_MS must be a whole number \(got "soon"\)/],
    [{ TLS_CERT: "/tmp/cert.pem" }, /TLS_CERT and TLS_KEY must be set together/],
    [
      { TLS_CERT: "/nonexistent/cert.pem", TLS_KEY: "/nonexistent/key.pem" },
      /TLS_CERT: cannot read \/nonexistent\/cert.pem/,
    ],
    [{ ONTOLOGY_MANAGER_URL: "http://om" }, /ONTOLOGY_MANAGER_URL and ONTOLOGY_QUERY_URL must be set together/],
    [
      { ONTOLOGY_MANAGER_URL: "http://om", ONTOLOGY_QUERY_URL: "http://oq", KN_BUNDLE: "a.json" },
      /KN_BUNDLE is for the embedded engine/,
    ],
    [{ MEMORY_STORE: "postgres" }, /MEMORY_STORE=postgres needs DATABASE_URL/],
    [{ PLATFORM_API_LAYOUT: "0.9" }, /PLATFORM_API_LAYOUT: PLATFORM_API_LAYOUT must be "0.7" or "0.8" .*\(got "0.9"\)/],
    [{ PLATFORM_API_LAYOUT: "v0.8" }, /PLATFORM_API_LAYOUT: PLATFORM_API_LAYOUT must be "0.7" or "0.8"/],
    [
      { ONTOLOGY_MANAGER_URL: "http://om", ONTOLOGY_QUERY_URL: "http://oq", ONTOLOGY_MANAGER_PATH_PREFIX: "api/bkn" },
      /ONTOLOGY_MANAGER_PATH_PREFIX: ONTOLOGY_MANAGER_PATH_PREFIX must be a URL path such as \/api\/bkn-backend\/in\/v1 .*\(got "api\/bkn"\)/,
    ],
    [
      {
        ONTOLOGY_MANAGER_URL: "http://om",
        ONTOLOGY_QUERY_URL: "http://oq",
        ONTOLOGY_QUERY_PATH_PREFIX: "/api/../admin",
      },
      /ONTOLOGY_QUERY_PATH_PREFIX: ONTOLOGY_QUERY_PATH_PREFIX must be a URL path/,
    ],
    [
      { ONTOLOGY_MANAGER_URL: "http://om", ONTOLOGY_QUERY_URL: "http://oq", ONTOLOGY_QUERY_PATH_PREFIX: "/api?x=1" },
      /ONTOLOGY_QUERY_PATH_PREFIX: ONTOLOGY_QUERY_PATH_PREFIX must be a URL path/,
    ],
    [
      { ONTOLOGY_MANAGER_URL: "http://om", ONTOLOGY_QUERY_URL: "http://oq", OPERATOR_MARKET_PATH_PREFIX: "/ops" },
      /OPERATOR_MARKET_PATH_PREFIX is the path below OPERATOR_MARKET_URL, which is not set/,
    ],
    [
      { ONTOLOGY_MANAGER_PATH_PREFIX: "/api/bkn-backend/in/v1" },
      /ONTOLOGY_MANAGER_PATH_PREFIX is the path below ONTOLOGY_MANAGER_URL/,
    ],
    [{ AUTH_MODE: "oauth" }, /AUTH_MODE: AUTH_MODE must be "headers", "mtls", "jwt" or "introspection"/],
    [{ AUTH_MODE: "mtls" }, /AUTH_MODE=mtls needs TLS_CERT\n.*needs TLS_KEY\n.*needs TLS_CLIENT_CA/],
    [
      { AUTH_MODE: "jwt", AUTH_JWKS_URL: "https://idp/jwks" },
      /AUTH_MODE=jwt needs AUTH_ISSUER\n.*AUTH_MODE=jwt needs AUTH_AUDIENCE/,
    ],
    [{ AUTH_MODE: "introspection" }, /AUTH_MODE=introspection needs AUTH_INTROSPECTION_URL/],
    // A deployment that forgot AUTH_MODE would otherwise trust identity headers while believing tokens are checked.
    [{ AUTH_JWKS_URL: "https://idp/jwks" }, /AUTH_JWKS_URL is for AUTH_MODE=jwt \(AUTH_MODE is headers\)/],
    [
      { AUTH_INTROSPECTION_URL: "https://idp/introspect" },
      /AUTH_INTROSPECTION_URL is for AUTH_MODE=introspection \(AUTH_MODE is headers\)/,
    ],
    [{ TLS_CLIENT_CA: "/tmp/ca.pem" }, /TLS_CLIENT_CA is for AUTH_MODE=mtls/],
    [{ AUTH_AUDIENCE: "context-loader" }, /AUTH_AUDIENCE is for AUTH_MODE=jwt or introspection/],
    [
      { AUTH_MODE: "introspection", AUTH_INTROSPECTION_URL: "http://idp", AUTH_INTROSPECTION_CLIENT_ID: "cl" },
      /AUTH_INTROSPECTION_CLIENT_ID and AUTH_INTROSPECTION_CLIENT_SECRET must be set together/,
    ],
    [
      { AUTH_MODE: "jwt", AUTH_JWKS_URL: "http://idp", AUTH_ISSUER: "i", AUTH_AUDIENCE: "a", AUTH_ALGORITHMS: "HS256" },
      /AUTH_ALGORITHMS: each algorithm must be one of RS256/,
    ],
    [{ AUTH_CLOCK_SKEW_S: "3600" }, /AUTH_CLOCK_SKEW_S must be between 0 and 600/],
    [{ METRICS_AUTH: "token" }, /METRICS_AUTH: METRICS_AUTH must be "none" or "same"/],
    [
      { MEMRECALL_SEMANTIC_FLOOR: "0.5", MEMRECALL_SEMANTIC_CEILING: "0.5" },
      /MEMRECALL_SEMANTIC_CEILING \(0.5\) must be above MEMRECALL_SEMANTIC_FLOOR \(0.5\)/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "grpc://collector:4317" }, /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/],
    [{ OTEL_EXPORTER_OTLP_HEADERS: "authorization" }, /OTEL_EXPORTER_OTLP_HEADERS: "authorization" is not key=value/],
    [{ OTEL_EXPORTER_OTLP_HEADERS: "a=%zz" }, /the value of a is not percent-encoded/],
    [{ OTEL_TRACES_SAMPLER_ARG: "2" }, /OTEL_TRACES_SAMPLER_ARG/],
    [{ ALLOWED_HOSTS: "loader.example.com:8080" }, /ALLOWED_HOSTS: each host must be .* without a port/],
    [{ ALLOWED_HOSTS: "http://loader.example.com" }, /ALLOWED_HOSTS: each host must be/],
    [{ HTTP2_MAX_CONCURRENT_STREAMS: "0" }, /HTTP2_MAX_CONCURRENT_STREAMS must be between 1/],
  ])("stops start-up naming the variable for %o", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("answers any Host when listening beyond loopback, unless ALLOWED_HOSTS names them; * means any", () => {
    expect(loadConfig({ HOST: "0.0.0.0" }).server.allowedHosts).toBeUndefined();
    expect(loadConfig({ HOST: "::1" }).server.allowedHosts).toEqual(["localhost", "127.0.0.1", "[::1]"]);
    expect(loadConfig({ HOST: "0.0.0.0", ALLOWED_HOSTS: "loader.svc" }).server.allowedHosts).toEqual(["loader.svc"]);
    expect(loadConfig({ ALLOWED_HOSTS: "*" }).server.allowedHosts).toBeUndefined();
  });

  it("treats empty values as unset", () => {
    expect(loadConfig({ PORT: "", CORS_ALLOWED_ORIGINS: " " }).server.port).toBe(8080);
  });

  it("traces only with an OTLP endpoint: the traces endpoint as given, else /v1/traces below the general one", () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }).tracing).toEqual({
      url: "http://collector:4318/v1/traces",
      headers: {},
      timeoutMs: 10_000,
      serviceName: "context-loader",
      sampleRatio: 1,
    });
    const both = loadConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp/v1/traces",
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc, x-tenant=t1",
      OTEL_SERVICE_NAME: "cl-eu",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
    }).tracing;
    expect(both).toMatchObject({
      url: "https://traces.example/otlp/v1/traces",
      headers: { authorization: "Bearer abc", "x-tenant": "t1" },
      serviceName: "cl-eu",
      sampleRatio: 0.25,
    });
  });
});

describe("loadConfig: caller authentication", () => {
  it("reads AUTH_MODE=jwt: the key set, issuer, audience, algorithms, skew, claims and timeout", () => {
    const c = loadConfig({
      AUTH_MODE: "jwt",
      AUTH_JWKS_URL: "https://idp.example/.well-known/jwks.json",
      AUTH_ISSUER: "https://idp.example/",
      AUTH_AUDIENCE: "context-loader",
      AUTH_ALGORITHMS: "RS256, ES256",
      AUTH_CLOCK_SKEW_S: "5",
      AUTH_ACCOUNT_ID_CLAIM: "uid",
      AUTH_ACCOUNT_TYPE_CLAIM: "ext.visitor_type",
      AUTH_SCOPES_CLAIM: "scp",
      AUTH_TIMEOUT_MS: "2000",
      METRICS_AUTH: "same",
    });
    expect(c.auth).toEqual({
      mode: "jwt",
      metricsAuth: "same",
      jwksUrl: "https://idp.example/.well-known/jwks.json",
      issuer: "https://idp.example/",
      audience: "context-loader",
      algorithms: ["RS256", "ES256"],
      clockSkewS: 5,
      claims: { accountId: "uid", accountType: "ext.visitor_type", scopes: "scp" },
      timeoutMs: 2000,
    });
  });

  it("defaults AUTH_MODE=jwt to the asymmetric algorithms, 30 s of skew, sub and scope", () => {
    const c = loadConfig({ AUTH_MODE: "jwt", AUTH_JWKS_URL: "http://idp/jwks", AUTH_ISSUER: "i", AUTH_AUDIENCE: "a" });
    expect(c.auth).toMatchObject({
      algorithms: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"],
      clockSkewS: 30,
      claims: { accountId: "sub", accountType: undefined, scopes: "scope" },
      timeoutMs: 5000,
    });
  });

  it("reads AUTH_MODE=introspection: the endpoint, its client credentials, the cache and the optional issuer and audience", () => {
    const c = loadConfig({
      AUTH_MODE: "introspection",
      AUTH_INTROSPECTION_URL: "http://hydra-admin:4445/oauth2/introspect",
      AUTH_INTROSPECTION_CLIENT_ID: "context-loader",
      AUTH_INTROSPECTION_CLIENT_SECRET: "s3cret",
      AUTH_INTROSPECTION_CACHE_MS: "0",
    });
    expect(c.auth).toEqual({
      mode: "introspection",
      metricsAuth: "none",
      url: "http://hydra-admin:4445/oauth2/introspect",
      client: { id: "context-loader", secret: "s3cret" },
      cacheMs: 0,
      issuer: undefined,
      audience: undefined,
      clockSkewS: 30,
      claims: { accountId: "sub", accountType: undefined, scopes: "scope" },
      timeoutMs: 5000,
    });
    expect(loadConfig({ AUTH_MODE: "introspection", AUTH_INTROSPECTION_URL: "http://idp" }).auth).toMatchObject({
      client: undefined,
      cacheMs: 10_000,
    });
  });

  it("reads AUTH_MODE=mtls: the client CA goes to the TLS listener", () => {
    const dir = mkdtempSync(join(tmpdir(), "cl-config-"));
    const pem = (name: string) => {
      const path = join(dir, name);
      writeFileSync(path, `-----BEGIN ${name}-----\n-----END ${name}-----\n`);
      return path;
    };
    const c = loadConfig({
      AUTH_MODE: "mtls",
      TLS_CERT: pem("cert"),
      TLS_KEY: pem("key"),
      TLS_CLIENT_CA: pem("ca"),
    });
    expect(c.auth).toEqual({ mode: "mtls", metricsAuth: "none" });
    expect(c.server.tls?.clientCa?.toString()).toContain("-----BEGIN ca-----");
    expect(() =>
      loadConfig({ AUTH_MODE: "mtls", TLS_CERT: pem("c"), TLS_KEY: pem("k"), TLS_CLIENT_CA: join(dir, "none") }),
    ).toThrow(/TLS_CLIENT_CA: cannot read/);
  });
});

describe("field parsers", () => {
  // Each parser under the variable name it is tested with, as a settings schema uses it.
  const schema = z.object({
    COUNT: integer("COUNT", 1, 10).optional(),
    SHARE: fraction("SHARE").optional(),
    URL: httpUrl.optional(),
    NAMES: list.optional(),
    ZONE: timeZone("ZONE").optional(),
    LOG_LEVEL: logLevel.optional(),
    KN_BUNDLE: bundles.optional(),
    PATTERN: regex("PATTERN").optional(),
  });
  type Name = keyof z.output<typeof schema>;
  const read = (name: Name, value: string) => readEnv(schema, { [name]: value }, "test settings")[name];

  it.each<[Name, string, unknown]>([
    ["COUNT", "1", 1],
    ["COUNT", " 10 ", 10],
    ["SHARE", "0", 0],
    ["SHARE", "1", 1],
    ["SHARE", "1.0", 1],
    ["SHARE", "0.25", 0.25],
    ["SHARE", ".5", 0.5],
    ["URL", "http://host:8080", "http://host:8080"],
    ["URL", "https://host/base//", "https://host/base"],
    ["NAMES", "a, b,,c ", ["a", "b", "c"]],
    ["ZONE", "Asia/Shanghai", "Asia/Shanghai"],
    ["ZONE", " UTC ", "UTC"],
    ["LOG_LEVEL", "debug", "debug"],
    ["LOG_LEVEL", "silent", "silent"],
    ["KN_BUNDLE", "a.json", ["a.json"]],
    ["KN_BUNDLE", "a.json, b.json", ["a.json", "b.json"]],
    ["PATTERN", 'object-types/disease .*"operation"', 'object-types/disease .*"operation"'],
    ["PATTERN", " subgraph", " subgraph"],
  ])("reads %s=%j as %j", (name, value, expected) => {
    expect(read(name, value)).toEqual(expected);
  });

  it.each<[Name, string, string]>([
    ["COUNT", "ten", 'COUNT: COUNT must be a whole number (got "ten")'],
    ["COUNT", "-1", 'COUNT: COUNT must be a whole number (got "-1")'],
    ["COUNT", "2.5", 'COUNT: COUNT must be a whole number (got "2.5")'],
    ["COUNT", "0", 'COUNT: COUNT must be between 1 and 10 (got "0")'],
    ["COUNT", "11", 'COUNT: COUNT must be between 1 and 10 (got "11")'],
    ["SHARE", "1.5", 'SHARE: SHARE must be a number from 0 to 1 (got "1.5")'],
    ["SHARE", "-0.1", 'SHARE: SHARE must be a number from 0 to 1 (got "-0.1")'],
    ["SHARE", "half", 'SHARE: SHARE must be a number from 0 to 1 (got "half")'],
    ["SHARE", "1e-1", 'SHARE: SHARE must be a number from 0 to 1 (got "1e-1")'],
    ["URL", "host:8080", 'URL: must be an http(s) URL (got "host:8080")'],
    ["URL", "ftp://host", 'URL: must be an http(s) URL (got "ftp://host")'],
    ["ZONE", "Mars/Olympus", 'ZONE: ZONE must be an IANA time zone such as Asia/Shanghai (got "Mars/Olympus")'],
    [
      "LOG_LEVEL",
      "loud",
      'LOG_LEVEL: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ],
    ["KN_BUNDLE", " , ", 'KN_BUNDLE: KN_BUNDLE must name at least one file (got " , ")'],
    ["PATTERN", "(", 'PATTERN: PATTERN must be a regular expression (got "(")'],
    ["PATTERN", "[a-", 'PATTERN: PATTERN must be a regular expression (got "[a-")'],
  ])("refuses %s=%j with a message naming it", (name, value, message) => {
    expect(() => read(name, value)).toThrow(new ConfigError("test settings", [message]));
  });

  it("lists every bad variable, one per line, under the name of the settings", () => {
    expect(() => readEnv(schema, { COUNT: "0", SHARE: "2", URL: "http://fine" }, "test settings")).toThrow(
      'invalid test settings:\n  COUNT: COUNT must be between 1 and 10 (got "0")\n  SHARE: SHARE must be a number from 0 to 1 (got "2")',
    );
  });

  it("treats empty and blank values as unset", () => {
    expect(readEnv(schema, { COUNT: "", SHARE: "  ", PATTERN: undefined }, "test settings")).toEqual({});
  });
});

describe("loadSimulatorConfig", () => {
  it("runs with nothing set: port 9180 on loopback, the sample bundle, no faults", () => {
    expect(loadSimulatorConfig({})).toEqual({
      port: 9180,
      host: "127.0.0.1",
      bundlePaths: [DEFAULT_BUNDLE],
      timeZone: "Asia/Shanghai",
      spelling: "new",
      faults: { latencyMs: 0, jitterMs: 0, errorRate: 0, timeoutRate: 0, malformedRate: 0, match: undefined },
      logLevel: "info",
    });
  });

  it("reads the SIM_* settings and the service's KN_BUNDLE, EMBEDDED_TIMEZONE and LOG_LEVEL", () => {
    expect(
      loadSimulatorConfig({
        SIM_PORT: "0",
        SIM_HOST: "0.0.0.0",
        KN_BUNDLE: "a.json,b.json",
        EMBEDDED_TIMEZONE: "UTC",
        SIM_SPELLING: "old",
        SIM_LATENCY_MS: "20",
        SIM_JITTER_MS: "5",
        SIM_ERROR_RATE: "0.1",
        SIM_TIMEOUT_RATE: ".2",
        SIM_MALFORMED_RATE: "1",
        SIM_FAULT_MATCH: "subgraph|has_alias",
        LOG_LEVEL: "debug",
      }),
    ).toEqual({
      port: 0,
      host: "0.0.0.0",
      bundlePaths: ["a.json", "b.json"],
      timeZone: "UTC",
      spelling: "old",
      faults: {
        latencyMs: 20,
        jitterMs: 5,
        errorRate: 0.1,
        timeoutRate: 0.2,
        malformedRate: 1,
        match: "subgraph|has_alias",
      },
      logLevel: "debug",
    });
  });

  it.each([
    [{ SIM_ERROR_RATE: "1.5" }, 'SIM_ERROR_RATE: SIM_ERROR_RATE must be a number from 0 to 1 (got "1.5")'],
    [{ SIM_TIMEOUT_RATE: "often" }, 'SIM_TIMEOUT_RATE: SIM_TIMEOUT_RATE must be a number from 0 to 1 (got "often")'],
    [
      { SIM_FAULT_MATCH: "(subgraph" },
      'SIM_FAULT_MATCH: SIM_FAULT_MATCH must be a regular expression (got "(subgraph")',
    ],
    [{ SIM_PORT: "99999" }, 'SIM_PORT: SIM_PORT must be between 0 and 65535 (got "99999")'],
    [
      { EMBEDDED_TIMEZONE: "UTC+8" },
      'EMBEDDED_TIMEZONE: EMBEDDED_TIMEZONE must be an IANA time zone such as Asia/Shanghai (got "UTC+8")',
    ],
  ])("stops start-up naming the variable for %o", (env, problem) => {
    expect(() => loadSimulatorConfig(env)).toThrow(new ConfigError("simulator settings", [problem]));
  });
});
