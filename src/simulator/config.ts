import { z } from "zod";
import {
  bundles,
  DEFAULT_BUNDLE,
  fraction,
  integer,
  type LogLevel,
  logLevel,
  readEnv,
  regex,
  timeZone,
} from "../config-fields";

/** Faults the simulator injects into its answers (see simulator.ts). */
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

/** Settings of `npm run simulator`, the embedded engine behind the platform's REST contract. */
export interface SimulatorConfig {
  port: number;
  host: string;
  /** KN_BUNDLE and EMBEDDED_TIMEZONE, read as the service reads them. */
  bundlePaths: string[];
  timeZone: string;
  /** Field names of its answers: "new" (2026) or "old" (id, unique_identities, display). */
  spelling: "new" | "old";
  faults: SimulatorFaults;
  logLevel: LogLevel;
}

const simulatorSchema = z.object({
  SIM_PORT: integer("SIM_PORT", 0, 65535).default(9180),
  SIM_HOST: z.string().trim().min(1).default("127.0.0.1"),
  KN_BUNDLE: bundles.default([DEFAULT_BUNDLE]),
  EMBEDDED_TIMEZONE: timeZone("EMBEDDED_TIMEZONE").default("Asia/Shanghai"),
  SIM_SPELLING: z.enum(["new", "old"]).default("new"),
  SIM_LATENCY_MS: integer("SIM_LATENCY_MS", 0, 600_000).default(0),
  SIM_JITTER_MS: integer("SIM_JITTER_MS", 0, 600_000).default(0),
  SIM_ERROR_RATE: fraction("SIM_ERROR_RATE").default(0),
  SIM_TIMEOUT_RATE: fraction("SIM_TIMEOUT_RATE").default(0),
  SIM_MALFORMED_RATE: fraction("SIM_MALFORMED_RATE").default(0),
  SIM_FAULT_MATCH: regex("SIM_FAULT_MATCH").optional(),
  LOG_LEVEL: logLevel.default("info"),
});

/** Parses the simulator's settings from an environment map; a bad value throws a ConfigError naming the variable. */
export function loadSimulatorConfig(env: Record<string, string | undefined>): SimulatorConfig {
  const e = readEnv(simulatorSchema, env, "simulator settings");
  return {
    port: e.SIM_PORT,
    host: e.SIM_HOST,
    bundlePaths: e.KN_BUNDLE,
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
