import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  LogicPropertyResolverService,
  ResolveLogicPropertiesRequestSchema,
  type ResolveLogicPropertiesResponse,
  ResolveLogicPropertiesResponseSchema,
} from "../../gen/contextloader/resolver/v1/resolver_pb";
import { render } from "../core/output-format";
import { validateFormattedRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import { resolveAnswer } from "./answer";
import { type ResolveResult, type ResolverDeps, resolveLogicProperties } from "./resolve";
import { resolveInput } from "./resolver-input";

/** Registers LogicPropertyResolverService: decode and validate, resolve, encode. */
export function registerResolver(router: ConnectRouter, deps: ResolverDeps): void {
  router.service(LogicPropertyResolverService, {
    async resolveLogicProperties(req, ctx) {
      const { input, format } = validateFormattedRequest(ResolveLogicPropertiesRequestSchema, req, resolveInput);
      const result = await resolveLogicProperties(deps, callContext(ctx), input);
      if (format === undefined) return resolveResponse(result);
      // With output_format: the compact answer as text, the trace id beside it.
      return create(ResolveLogicPropertiesResponseSchema, {
        traceId: result.trace_id,
        text: render(resolveAnswer(result), format),
      });
    },
  });
}

export function resolveResponse(r: ResolveResult): ResolveLogicPropertiesResponse {
  return create(ResolveLogicPropertiesResponseSchema, {
    datas: r.datas,
    unmatchedIdentities: r.unmatched_identities,
    traceId: r.trace_id,
    ...(r.debug
      ? {
          debug: {
            nowMs: BigInt(r.debug.now_ms),
            timezone: r.debug.timezone,
            dynamicParams: r.debug.dynamic_params,
            warnings: r.debug.warnings,
            traceId: r.debug.trace_id,
            properties: r.debug.properties.map((p) => ({
              property: p.property,
              type: p.type,
              spanId: p.span_id,
              promptChars: p.prompt_chars,
              rawAnswers: p.raw_answers,
              repairs: p.repairs,
              latencyMs: BigInt(p.latency_ms),
              dynamicParams: p.dynamic_params,
              notes: p.notes,
            })),
          },
        }
      : {}),
  });
}
