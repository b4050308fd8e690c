import type { Logger } from "pino";
import type { HealthState } from "./health";
import { type HttpRoute, sendJson } from "./http-routes";
import type { Metrics } from "./metrics";

/** A dependency the service needs to answer calls (Redis, the database, ...). */
export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects with the reason otherwise. */
  check(signal: AbortSignal): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2000;

/**
 * `check`, run at most once per `intervalMs`: probes arriving meanwhile share
 * the outcome of the last run (or of the one in flight). For a check that
 * writes: /readyz answers anyone, and a flood of probes must not become a
 * flood of writes (or of pool connections taken from calls).
 */
export function atMostEvery(intervalMs: number, check: ReadinessCheck["check"]): ReadinessCheck["check"] {
  let last: { at: number; outcome: Promise<void> } | undefined;
  return (signal) => {
    const now = performance.now();
    if (last === undefined || now - last.at >= intervalMs) last = { at: now, outcome: check(signal) };
    return last.outcome;
  };
}

/**
 * GET /healthz (the process is up), GET /readyz (it is not shutting down and
 * every dependency answers) and GET /metrics (Prometheus text).
 */
export function probeRoutes(deps: {
  health: HealthState;
  metrics: Metrics;
  checks: readonly ReadinessCheck[];
  log: Logger;
}): HttpRoute[] {
  return [
    {
      method: "GET",
      path: "/healthz",
      unqueued: true,
      handle(_req, res) {
        sendJson(res, 200, { status: "ok" });
      },
    },
    {
      method: "GET",
      path: "/readyz",
      unqueued: true,
      async handle(_req, res) {
        const checks: Record<string, string> = {};
        const results = await Promise.all(
          deps.checks.map(async (c) => {
            try {
              await c.check(AbortSignal.timeout(CHECK_TIMEOUT_MS));
              checks[c.name] = "ok";
              return true;
            } catch (err) {
              // The probe answers anyone: a dependency's own words (its host, port, database) go to the log only.
              checks[c.name] = "failing";
              deps.log.warn({ err, check: c.name }, "readiness check failing");
              return false;
            }
          }),
        );
        const serving = deps.health.serving;
        checks["server"] = serving ? "ok" : "shutting down";
        const ready = serving && results.every(Boolean);
        sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready", checks });
      },
    },
    {
      method: "GET",
      path: "/metrics",
      unqueued: true,
      async handle(_req, res) {
        const text = await deps.metrics.registry.metrics();
        res.writeHead(200, { "content-type": deps.metrics.registry.contentType });
        res.end(text);
      },
    },
  ];
}
