import { z } from "zod";
import { isValidTimeZone } from "./core/calendar";
import { packagePath } from "./core/package-root";

/**
 * The field parsers every settings loader builds its schema from (the service's
 * config.ts, the simulator's simulator/config.ts), and readEnv, which runs such a
 * schema over an environment. Each parser reads the text of one variable; a
 * message it gives names the variable, so the person starting the program sees
 * which setting to fix.
 */

/** A setting that cannot be used; start-up stops with this message. */
export class ConfigError extends Error {
  override name = "ConfigError";

  /** `what` names the program's settings ("settings", "simulator settings"); each problem is one line. */
  constructor(what: string, problems: string[]) {
    super(`invalid ${what}:\n  ${problems.join("\n  ")}`);
  }
}

/** A whole number from min to max. */
export function integer(name: string, min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);
}

/** A decimal number from 0 to 1 (a share or a score), written as digits: "0.25", ".5", "1". */
export function fraction(name: string) {
  const message = `${name} must be a number from 0 to 1`;
  return z
    .string()
    .trim()
    .regex(/^(\d+(\.\d*)?|\.\d+)$/, message)
    .transform(Number)
    .refine((n) => n <= 1, message);
}

/** An http(s) URL; trailing slashes are dropped so paths can be appended. */
export const httpUrl = z
  .string()
  .trim()
  .url("must be an http(s) URL")
  .refine((u) => /^https?:\/\//.test(u), "must be an http(s) URL")
  .transform((u) => u.replace(/\/+$/, ""));

/**
 * OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs separated by commas, values
 * percent-decoded (the OTLP exporter spec's format), e.g.
 * `authorization=Bearer%20abc,x-tenant=t1`.
 */
export const otlpHeaders = z
  .string()
  .trim()
  .transform((text, ctx) => {
    const headers: Record<string, string> = {};
    for (const pair of text.split(",").filter((p) => p.trim() !== "")) {
      const at = pair.indexOf("=");
      const key = pair.slice(0, at).trim().toLowerCase();
      if (at <= 0 || !/^[a-z0-9!#$%&'*+.^_`|~-]+$/.test(key)) {
        ctx.addIssue({ code: "custom", message: `OTEL_EXPORTER_OTLP_HEADERS: "${pair.trim()}" is not key=value` });
        return z.NEVER;
      }
      try {
        headers[key] = decodeURIComponent(pair.slice(at + 1).trim());
      } catch {
        ctx.addIssue({
          code: "custom",
          message: `OTEL_EXPORTER_OTLP_HEADERS: the value of ${key} is not percent-encoded`,
        });
        return z.NEVER;
      }
    }
    return headers;
  });

/**
 * A URL path put between a service's base URL and its resources, such as
 * /api/bkn-backend/in/v1: segments of letters, digits, "-", "_", "." and "~"
 * ("." and ".." alone refused), a trailing slash dropped; "/" alone means no
 * prefix (a gateway that strips it).
 */
export function pathPrefix(name: string) {
  return z
    .string()
    .trim()
    .transform((p) => (p === "/" ? "" : p.replace(/\/+$/, "")))
    .refine(
      (p) => p === "" || (/^(\/[A-Za-z0-9._~-]+)+$/.test(p) && !p.split("/").some((s) => s === "." || s === "..")),
      `${name} must be a URL path such as /api/bkn-backend/in/v1 (letters, digits, "-", "_", ".", "~" between slashes), or / for none`,
    );
}

/** A comma-separated list; items are trimmed and empty ones dropped. */
export const list = z.string().transform((s) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x.length > 0),
);

/** An IANA time zone name, checked against the runtime's time-zone data. */
export function timeZone(name: string) {
  return z.string().trim().refine(isValidTimeZone, `${name} must be an IANA time zone such as Asia/Shanghai`);
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** A pino level. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** LOG_LEVEL: one of pino's levels. */
export const logLevel = z.enum(LOG_LEVELS, { error: `LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}` });

/** The sample network shipped in data/, served when KN_BUNDLE is not set. */
export const DEFAULT_BUNDLE = packagePath("data/kn_medical.bundle.json");

/** The vocabulary shipped in data/mentions: the generic equivalences and the sample network's other names. */
export const DEFAULT_VOCABULARY = ["generic.json", "kn_medical.json"].map((f) => packagePath(`data/mentions/${f}`));

/** KN_BUNDLE: the KN bundle files the embedded engine serves, comma-separated; DEFAULT_BUNDLE when unset. */
export const bundles = list.pipe(z.array(z.string()).min(1, "KN_BUNDLE must name at least one file"));

/** A JavaScript regular expression, kept as its source text. Not trimmed: spaces may be part of the pattern. */
export function regex(name: string) {
  return z.string().refine((source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  }, `${name} must be a regular expression`);
}

/**
 * Runs `schema` over an environment map (process.env, or a plain object in
 * tests). Empty and blank values count as unset, so `PORT=` in a .env file
 * means the default. Throws one ConfigError listing every bad variable with
 * the value it was given; `what` names the settings in that message.
 */
export function readEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
  what: string,
): z.output<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""));
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    what,
    parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "environment");
      const got = present[name];
      return `${name}: ${issue.message}${got === undefined ? "" : ` (got ${JSON.stringify(got)})`}`;
    }),
  );
}

/** MemRecall's glossary shipped in data/memrecall: equivalent terms of the domain in Chinese and English. */
export const DEFAULT_GLOSSARY = [packagePath("data/memrecall/glossary.json")];

/** MemRecall's calibration probe shipped in data/memrecall: what teaches memory search a model's cosines. */
export const MEMRECALL_PROBE = packagePath("data/memrecall/probe.json");
