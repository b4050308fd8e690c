import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { inBoth, type Language, type Text } from "../errors/text";
import { renderIn, ToolError } from "../errors/tool-error";
import { parseOrThrow } from "../errors/validation";
import type { HttpRoute } from "../server/http-routes";
import type { JsonRouteOptions } from "../server/json-route";
import { platformError, platformRoute } from "../server/platform-route";
import { resolveAnswer } from "./answer";
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

/** The spec's own path (§5.1). */
const SPEC_PATH = "/api/kn/logic-property-resolver";
/** The platform's path of its get_logic_properties_values tool. */
const PLATFORM_PATH = "/api/agent-retrieval/in/v1/kn/logic-property-resolver";

/**
 * `POST /api/kn/logic-property-resolver` (spec §5.1), also served at the
 * platform's path so agent configurations keep working. Both take
 * `?response_format=json|toon|yaml` as the platform's tool routes do: JSON
 * passes the properties' values through (`datas` aligned to the identities,
 * plus `debug` when asked), toon and yaml write the compact answer of the MCP
 * tool get_logic_properties_values. Errors are JSON with the status their code
 * means: at the spec path in the spec's shape `{error_code, message, missing?,
 * trace_id}` (§9.1), at the platform's path in the platform's envelope
 * `{code, description, solution, link, details}`.
 */
export function resolverRoutes(
  deps: ResolverDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "defaultLanguage">,
): HttpRoute[] {
  const run = async (raw: unknown, _query: URLSearchParams, ctx: CallContext) => {
    const input = withRestFieldNames(() => parseOrThrow(resolveInput, parseOrThrow(restBody, raw ?? {})));
    const r = await resolveLogicProperties(deps, ctx, input);
    return {
      json: {
        datas: r.datas,
        ...(r.unmatched_identities.length > 0 ? { unmatched_identities: r.unmatched_identities } : {}),
        ...(r.debug ? { debug: r.debug } : {}),
      },
      compact: () => resolveAnswer(r),
    };
  };
  return [
    platformRoute({ ...route, path: SPEC_PATH, run, renderError: resolverError }),
    platformRoute({ ...route, path: PLATFORM_PATH, run, renderError: resolverPlatformError }),
  ];
}

/** Violations name the body's own field: `_instance_identities`, which the input schema reads as instance_identities. */
function withRestFieldNames<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof ToolError) || !err.violations.some((v) => v.field.startsWith("instance_identities")))
      throw err;
    const named = (words: string) =>
      words.replaceAll("instance_identities", "_instance_identities").replaceAll("__instance", "_instance");
    const namedText = (t: Text) => inBoth((l) => named(t[l]));
    const violations = err.violations.map((v) => ({ field: named(v.field), description: namedText(v.description) }));
    throw new ToolError({
      code: err.code,
      reason: err.reason,
      message: namedText(err.text),
      violations,
      ...(err.hint ? { hint: err.hint } : {}),
    });
  }
}

/** The spec's error body (§9.1), for every failure at the spec's path, in the caller's language. */
export function resolverError(err: ToolError, traceId: string, language: Language) {
  const words = renderIn(err, language);
  return {
    error_code: err.reason,
    message: words.message,
    ...(err.missing.length > 0 ? { missing: err.missing } : {}),
    ...(words.violations.length > 0 ? { field_violations: words.violations } : {}),
    ...(words.hint ? { hint: words.hint.message } : {}),
    ...(err.metadata["upstream"] ? { upstream: err.metadata["upstream"] } : {}),
    ...(err.metadata["error_code"] ? { upstream_error_code: err.metadata["error_code"] } : {}),
    ...(err.metadata["description"] ? { upstream_description: err.metadata["description"] } : {}),
    ...llmDetails(err),
    trace_id: traceId,
  };
}

/**
 * The platform's envelope, with MISSING_INPUT_PARAMS's structured list in
 * `details.missing` (the platform writes it there as a Go string) and the
 * LLM's reasons and debug beside the trace id.
 */
function resolverPlatformError(err: ToolError, traceId: string, language: Language) {
  const { details, ...envelope } = platformError(err, traceId, language);
  const { trace_id, ...rest } = details;
  return {
    ...envelope,
    details: {
      ...(err.missing.length > 0 ? { missing: err.missing } : {}),
      ...rest,
      ...llmDetails(err),
      trace_id,
    },
  };
}

/** What the LLM said when it could not give a parameter, and the debug asked for, on a failure. */
function llmDetails(err: ToolError) {
  return {
    ...(err.metadata["llm_errors"] ? { llm_errors: err.metadata["llm_errors"] } : {}),
    ...(err.metadata["debug"] ? { debug: JSON.parse(err.metadata["debug"]) as unknown } : {}),
  };
}
