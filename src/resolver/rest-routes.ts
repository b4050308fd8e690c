import { z } from "zod";
import type { ToolError } from "../errors/tool-error";
import { parseOrThrow } from "../errors/validation";
import type { HttpRoute } from "../server/http-routes";
import { jsonRoute, type JsonRouteOptions } from "../server/json-route";
import { resolveLogicProperties, type ResolverDeps } from "./resolve";
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
  .transform(({ _instance_identities, ...rest }) => (_instance_identities === undefined ? rest : { ...rest, instance_identities: _instance_identities }));

/**
 * `POST /api/kn/logic-property-resolver` (spec §5.1), also served at the
 * existing implementation's path so agent configurations keep working. Success
 * passes the properties' values through (`datas` aligned to the identities,
 * plus `debug` when asked); failure is `{error_code, message, missing?,
 * trace_id}` (spec §9.1).
 */
export function resolverRoutes(deps: ResolverDeps, route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping">): HttpRoute[] {
  return ["/api/kn/logic-property-resolver", "/api/agent-retrieval/in/v1/kn/logic-property-resolver"].map((path) =>
    jsonRoute({
      ...route,
      path,
      async handle(raw, ctx) {
        const input = parseOrThrow(resolveInput, parseOrThrow(restBody, raw ?? {}));
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

/** The spec's error body (§9.1), for every failure of the resolver route. */
export function resolverError(err: ToolError, traceId: string) {
  return {
    error_code: err.reason,
    message: err.message,
    ...(err.missing.length > 0 ? { missing: err.missing } : {}),
    ...(err.violations.length > 0 ? { field_violations: err.violations } : {}),
    ...(err.hint ? { hint: err.hint.message } : {}),
    trace_id: traceId,
  };
}
