import { z } from "zod";
import type { CallContext } from "../core/call-context";
import type { Json } from "../core/json";
import { OUTPUT_FORMATS, type OutputFormat, render } from "../core/output-format";
import { type Language, text } from "../errors/text";
import { invalidArgument, renderIn, type ToolError } from "../errors/tool-error";
import type { HttpRoute } from "./http-routes";
import { type JsonRouteOptions, jsonRoute, TextAnswer } from "./json-route";

/**
 * The platform's error envelope for its tool routes (agent-retrieval's
 * `/kn/...` and data-retrieval's kn_search): `code` the stable reason,
 * `description` what went wrong, `solution` the next step, and in `details`
 * the invalid fields, the values to choose from, the next RPC, the upstream
 * service's own error fields when it failed, and the trace id.
 */
export function platformError(err: ToolError, traceId: string, language: Language) {
  const said = renderIn(err, language);
  const upstream = ["upstream", "upstream_status", "error_code", "description", "upstream_detail"].filter(
    (k) => err.metadata[k] !== undefined,
  );
  return {
    code: err.reason,
    description: said.message,
    details: {
      ...(said.violations.length > 0 ? { field_violations: said.violations } : {}),
      ...(err.hint?.validValues?.length ? { valid_values: err.hint.validValues } : {}),
      ...(err.hint?.nextRpc ? { next_rpc: err.hint.nextRpc } : {}),
      ...Object.fromEntries(
        upstream.map((k) => [k === "error_code" || k === "description" ? `upstream_${k}` : k, err.metadata[k]]),
      ),
      trace_id: traceId,
    },
    solution: said.hint?.message ?? "",
    link: "",
  };
}

const responseFormat = z.enum(OUTPUT_FORMATS);

const CONTENT_TYPES: Record<Exclude<OutputFormat, "json">, string> = {
  yaml: "application/yaml; charset=utf-8",
  toon: "application/toon; charset=utf-8",
};

/**
 * A POST route of the platform's agent tools: a JSON body and parameters in
 * the query string; the answer as JSON, or with `?response_format=toon|yaml`
 * the compact answer (the MCP tool's) as text with its content type, as the
 * platform answers TOON; errors always JSON, in the platform's envelope unless
 * the route's own contract gives another body (`renderError`: the resolver
 * spec's §9.1 shape at its spec path).
 */
export function platformRoute(
  opts: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "path" | "defaultLanguage"> & {
    run(body: unknown, query: URLSearchParams, ctx: CallContext): Promise<{ json: unknown; compact(): Json }>;
    renderError?: JsonRouteOptions["renderError"];
  },
): HttpRoute {
  return jsonRoute({
    ...opts,
    renderError: opts.renderError ?? platformError,
    async handle(body, ctx, query) {
      const asked = responseFormat.safeParse(query.get("response_format") || "json");
      if (!asked.success) {
        throw invalidArgument([
          {
            field: "response_format",
            description: text('must be "json", "toon" or "yaml"', '必须是 "json"、"toon" 或 "yaml"'),
          },
        ]);
      }
      const format = asked.data;
      const answer = await opts.run(body, query, ctx);
      return format === "json" ? answer.json : new TextAnswer(render(answer.compact(), format), CONTENT_TYPES[format]);
    },
  });
}
