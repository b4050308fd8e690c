import { z } from "zod";
import { ToolError } from "../errors/tool-error";
import { parseOrThrow } from "../errors/validation";
import type { HttpRoute } from "../server/http-routes";
import { type JsonRouteOptions, jsonRoute } from "../server/json-route";
import { type ResolverDeps, resolveLogicProperties } from "./resolve";
import { resolveInput } from "./resolver-input";

/** The REST body: the spec's fields only (a misspelt one is an error), identities under either spelling. */
const restBody = z
  .object({
    kn_id: z.unknown(),
    ot_id: z.unknown(),
    query: z.unknown(),
    unique_identities: z.unknown(),
    _instance_identities: z.unknown(),
    properties: z.unknown(),
    additional_context: z.unknown(),
    now_ms: z.unknown(),
    timezone: z.unknown(),
    options: z.unknown(),
  })
  .partial()
  .strict()
  .transform(({ _instance_identities, ...rest }) =>
    _instance_identities === undefined ? rest : { ...rest, instance_identities: _instance_identities },
  );

const LEGACY_PATH = "/api/agent-retrieval/in/v1/kn/logic-property-resolver";

/**
 * `POST /api/kn/logic-property-resolver` (spec §5.1), also served at the
 * existing implementation's path so agent configurations keep working. Success
 * passes the properties' values through (`datas` aligned to the identities,
 * plus `debug` when asked); failure is `{error_code, message, missing?,
 * trace_id}` (spec §9.1). At the legacy path MISSING_INPUT_PARAMS is HTTP 200,
 * as the existing service answers it (agents there read `error_code`).
 */
export function resolverRoutes(
  deps: ResolverDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">,
): HttpRoute[] {
  return ["/api/kn/logic-property-resolver", LEGACY_PATH].map((path) =>
    jsonRoute({
      ...route,
      path,
      statusOf: (err) => (path === LEGACY_PATH && err.reason === "MISSING_INPUT_PARAMS" ? 200 : undefined),
      async handle(raw, ctx) {
        const input = withRestFieldNames(() => parseOrThrow(resolveInput, parseOrThrow(restBody, raw ?? {})));
        const r = await resolveLogicProperties(deps, ctx, input);
        return {
          datas: r.datas,
          ...(r.unmatched_identities.length > 0 ? { unmatched_identities: r.unmatched_identities } : {}),
          ...(r.debug ? { debug: r.debug } : {}),
        };
      },
      renderError: resolverError,
    }),
  );
}

/** Violations name the body's own field: `_instance_identities`, which the input schema reads as instance_identities. */
function withRestFieldNames<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof ToolError) || !err.violations.some((v) => v.field.startsWith("instance_identities")))
      throw err;
    const violations = err.violations.map((v) =>
      v.field.startsWith("instance_identities") ? { ...v, field: `_${v.field}` } : v,
    );
    throw new ToolError({
      code: err.code,
      reason: err.reason,
      message: err.message
        .replaceAll("instance_identities", "_instance_identities")
        .replaceAll("__instance", "_instance"),
      violations,
      ...(err.hint ? { hint: err.hint } : {}),
    });
  }
}

/** The spec's error body (§9.1), for every failure of the resolver route. */
export function resolverError(err: ToolError, traceId: string) {
  return {
    error_code: err.reason,
    message: err.message,
    ...(err.missing.length > 0 ? { missing: err.missing } : {}),
    ...(err.violations.length > 0 ? { field_violations: err.violations } : {}),
    ...(err.hint ? { hint: err.hint.message } : {}),
    ...(err.metadata["llm_errors"] ? { llm_errors: err.metadata["llm_errors"] } : {}),
    ...(err.metadata["upstream"] ? { upstream: err.metadata["upstream"] } : {}),
    ...(err.metadata["error_code"] ? { upstream_error_code: err.metadata["error_code"] } : {}),
    ...(err.metadata["description"] ? { upstream_description: err.metadata["description"] } : {}),
    ...(err.metadata["debug"] ? { debug: JSON.parse(err.metadata["debug"]) as unknown } : {}),
    trace_id: traceId,
  };
}
