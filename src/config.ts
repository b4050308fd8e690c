import { readFileSync } from "node:fs";
import { z } from "zod";

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
  /** How long in-flight calls may run after SIGTERM/SIGINT before they are cut, ms. */
  shutdownGraceMs: number;
  /** pino level. */
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Largest context window ExpandContextWindow grants, in messages. */
  memrecallMaxContextWindow: number;
}

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

const origin = z.string().refine((o) => o === "*" || /^https?:\/\/[^/\s]+$/.test(o), {
  message: 'each origin must be "*" or scheme://host[:port] without a path',
});

const envSchema = z.object({
  PORT: integer("PORT", 0, 65535).default(8080),
  HOST: z.string().trim().min(1).default("0.0.0.0"),
  TLS_CERT: z.string().trim().optional(),
  TLS_KEY: z.string().trim().optional(),
  CORS_ALLOWED_ORIGINS: list.pipe(z.array(origin)).default([]),
  READ_MAX_BYTES: integer("READ_MAX_BYTES", 1024, 256 * 1024 * 1024).default(4 * 1024 * 1024),
  WRITE_MAX_BYTES: integer("WRITE_MAX_BYTES", 1024, 256 * 1024 * 1024).default(32 * 1024 * 1024),
  SHUTDOWN_GRACE_MS: integer("SHUTDOWN_GRACE_MS", 0, 600_000).default(10_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  MEMRECALL_MAX_CONTEXT_WINDOW: integer("MEMRECALL_MAX_CONTEXT_WINDOW", 1, 100_000).default(200),
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
  return {
    port: e.PORT,
    host: e.HOST,
    tls: e.TLS_CERT && e.TLS_KEY ? { cert: readPem("TLS_CERT", e.TLS_CERT), key: readPem("TLS_KEY", e.TLS_KEY) } : undefined,
    corsAllowedOrigins: e.CORS_ALLOWED_ORIGINS,
    readMaxBytes: e.READ_MAX_BYTES,
    writeMaxBytes: e.WRITE_MAX_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    logLevel: e.LOG_LEVEL,
    memrecallMaxContextWindow: e.MEMRECALL_MAX_CONTEXT_WINDOW,
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
