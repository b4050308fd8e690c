import { toJson } from "@bufbuild/protobuf";
import { z } from "zod";
import {
  RetrieveKeywordContextResponseSchema,
  RetrieveSchemaResponseSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { type Language, text } from "../errors/text";
import { invalidArgument, renderIn, type ToolError } from "../errors/tool-error";
import { parseOrThrow } from "../errors/validation";
import type { HttpRoute } from "../server/http-routes";
import { httpStatusFor, type JsonRouteOptions, jsonRoute } from "../server/json-route";
import { platformError } from "../server/platform-route";
import type { KnowledgeDeps } from "./deps";
import { keywordContextResponse, schemaResponse } from "./encode";
import { keywordContextInput } from "./keyword-context/input";
import { retrieveKeywordContext } from "./keyword-context/retrieve-keyword-context";
import { knSearchInput } from "./kn-search/input";
import { knSearch } from "./kn-search/kn-search";
import { renderAnswer } from "./kn-search/rest-shape";
import { rerankConceptsInput } from "./rerank/input";
import { rerankConcepts } from "./rerank/rerank-concepts";
import { retrieveSchemaInput } from "./schema/input";
import { retrieveSchema } from "./schema/retrieve-schema";

/**
 * The request of `POST /tools/knowledge_retrieve` exactly as the spec lists it
 * (data-retrieval-tools §7.1), plus `background` and `session_type` from the
 * tool's Data Agent configuration. Other keys are refused, so a misspelt
 * parameter is an error rather than silently ignored.
 */
const knowledgeRetrieveBody = z
  .object({
    query: z.string().default(""),
    top_k: z.number().optional(),
    kn_ids: z.array(z.object({ knowledge_network_id: z.string() }).strict()).default([]),
    additional_context: z.string().optional(),
    background: z.string().optional(),
    session_id: z.string().optional(),
    skip_llm: z.boolean().optional(),
    compact_format: z.boolean().optional(),
    return_union: z.boolean().optional(),
    enable_keyword_context: z.boolean().default(false),
    object_type_id: z.string().optional(),
    session_type: z.string().optional(),
  })
  .strict();

/**
 * The knowledge tools' JSON routes, as agent configurations already call them.
 *
 * `POST /tools/knowledge_retrieve`: `enable_keyword_context` chooses schema recall or keyword context, the
 * answers take the spec's JSON shapes, and errors `{error, status_code,
 * detail: {message, suggestion}}`. In keyword mode the schema-only parameters
 * (top_k, skip_llm, return_union, additional_context) are ignored, since agent
 * configurations often fix them for every call.
 *
 * `POST /tools/knowledge_rerank` and `POST /kn/kn_search`: the specs' bodies
 * and answers; kn_search errors in the platform's `{code, description,
 * details, solution, link}`, the others in the knowledge tools' shape.
 */
export function knowledgeRoutes(
  deps: KnowledgeDeps,
  route: Pick<JsonRouteOptions, "log" | "maxBytes" | "stopping" | "defaultLanguage">,
): HttpRoute[] {
  return [
    jsonRoute({
      ...route,
      path: "/tools/knowledge_retrieve",
      async handle(raw, ctx) {
        const body = parseOrThrow(knowledgeRetrieveBody, raw ?? {});
        const { enable_keyword_context, background, ...rest } = body;
        if (enable_keyword_context) {
          const input = parseOrThrow(keywordContextInput, {
            query: rest.query,
            kn_ids: rest.kn_ids,
            session_id: rest.session_id,
            object_type_id: rest.object_type_id,
            compact_format: rest.compact_format,
            session_type: rest.session_type,
          });
          const result = await retrieveKeywordContext(deps, ctx, input);
          const json = toJson(RetrieveKeywordContextResponseSchema, keywordContextResponse(result), {
            useProtoFieldName: true,
            alwaysEmitImplicit: true,
          }) as Record<string, unknown>;
          // keyword_context is an object either way: the §5 structure, or (compact) the spec §7.1 form {context, matched_properties}.
          return {
            keyword_context:
              result.compact !== undefined
                ? { context: result.compact, matched_properties: result.statistics.matched_fields }
                : json["keyword_context"],
            session_id: result.session_id,
            ...(result.warnings.length > 0 ? { warnings: json["warnings"] } : {}),
          };
        }
        const { object_type_id, ...schemaFields } = rest;
        if (object_type_id !== undefined && object_type_id !== "") {
          throw invalidArgument(
            [
              {
                field: "object_type_id",
                description: text(
                  "only used with enable_keyword_context=true",
                  "只在 enable_keyword_context=true 时使用",
                ),
              },
            ],
            {
              message: text(
                "For keyword context set enable_keyword_context=true; for schema recall leave object_type_id out.",
                "要召回关键词上下文，请设置 enable_keyword_context=true；要召回 schema，请不要传 object_type_id。",
              ),
            },
          );
        }
        const additional = [rest.additional_context, background].filter((s) => s !== undefined && s !== "").join("\n");
        const input = parseOrThrow(retrieveSchemaInput, { ...schemaFields, additional_context: additional });
        const result = await retrieveSchema(deps, ctx, input);
        const json = toJson(RetrieveSchemaResponseSchema, schemaResponse(result), {
          useProtoFieldName: true,
          alwaysEmitImplicit: true,
        }) as Record<string, unknown>;
        // The spec's two shapes: compact {objects, relations}, full {object_types, relation_types, action_types}.
        const shape = result.compact ? ["objects", "relations"] : ["object_types", "relation_types", "action_types"];
        const picked = Object.fromEntries(shape.map((k) => [k, json[k]]));
        return {
          ...picked,
          session_id: result.session_id,
          round: result.round,
          ranking_method: result.ranking_method,
          ...(result.warnings.length > 0 ? { warnings: json["warnings"] } : {}),
        };
      },
      renderError: knowledgeError,
    }),
    // data-retrieval-tools §7.2: the spec's body and answer {reranked_concepts, filtered_count}.
    jsonRoute({
      ...route,
      path: "/tools/knowledge_rerank",
      handle: async (raw, ctx) => rerankConcepts(deps, ctx, parseOrThrow(rerankConceptsInput, raw ?? {})),
      renderError: knowledgeError,
    }),
    // The spec's route (kn-search-proxy.zh.md): its JSON body and answer shapes.
    jsonRoute({
      ...route,
      path: "/kn/kn_search",
      async handle(raw, ctx) {
        return renderAnswer(await knSearch(deps, ctx, parseOrThrow(knSearchInput, raw ?? {})));
      },
      renderError: platformError,
    }),
  ];
}

/** The spec's error body for knowledge_retrieve and knowledge_rerank (keyword-context-recall §7.3, §7.4), in the caller's language. */
function knowledgeError(err: ToolError, traceId: string, language: Language) {
  const said = renderIn(err, language);
  const { message, suggestion, ...extra } = said.detail;
  return {
    error: said.message,
    status_code: httpStatusFor(err),
    detail: {
      message: message ?? said.message,
      ...((suggestion ?? said.hint?.message) ? { suggestion: suggestion ?? said.hint!.message } : {}),
      ...extra,
      reason: err.reason,
      ...(said.violations.length > 0 ? { field_violations: said.violations } : {}),
      ...(err.hint?.validValues?.length ? { valid_values: err.hint.validValues } : {}),
      trace_id: traceId,
    },
  };
}
