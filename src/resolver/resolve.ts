import type { CallContext } from "../core/call-context";
import { settleWithLimit } from "../core/concurrency";
import type { Json } from "../core/json";
import { llmNotConfigured } from "../errors/common";
import { type Language, text } from "../errors/text";
import { type MissingPropertyParams, ToolError } from "../errors/tool-error";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import { knIdOf } from "../kn/kn-id";
import type { InstanceIdentity, LogicProperty, OperatorDetail } from "../kn/types";
import type { LlmClient } from "../upstream/llm-client";
import { type Generated, generate, type PropertyDebug } from "./generate";
import { type ObjectTypeCache, objectType } from "./object-types";
import { metricFacts, undetermined } from "./property-facts";
import { checkRequest } from "./request-check";
import type { ResolveInput } from "./resolver-input";
import { extractTimeFacts, type TimeFacts } from "./time-facts";

// The composition root builds the cache with the rest of ResolverDeps.

export interface ResolverDeps {
  backend: KnowledgeNetworkBackend;
  llm: LlmClient | undefined;
  /** The time zone when neither the request nor additional_context names one. */
  defaultTimeZone: string;
  /** Object type definitions by "kn/ot", when the TTL cache is on. */
  objectTypeCache: ObjectTypeCache | undefined;
}

export interface ResolveDebug {
  now_ms: number;
  timezone: string;
  dynamic_params: Record<string, Record<string, Json>>;
  properties: PropertyDebug[];
  warnings: string[];
  trace_id: string;
}

export interface ResolveResult {
  /** One row per requested identity, in request order. */
  datas: Record<string, Json>[];
  unmatched_identities: InstanceIdentity[];
  debug: ResolveDebug | undefined;
  trace_id: string;
}

/**
 * The logic property resolver (spec logic-property-resolver): reads the object
 * type definition, has the LLM generate each requested property's
 * dynamic_params — one call per property, `max_concurrency` at once, each
 * with only what it needs and the hard constraints of its type, time facts
 * computed beforehand winning over the LLM — checks and repairs the answers,
 * and when every property is complete queries the values once. Any property
 * missing parameters fails the whole call with MISSING_INPUT_PARAMS.
 */
export async function resolveLogicProperties(
  deps: ResolverDeps,
  ctx: CallContext,
  input: ResolveInput,
): Promise<ResolveResult> {
  const knId = knIdOf(input.kn_id, ctx);
  const ot = await objectType(deps, ctx, knId, input.ot_id);
  const facts = extractTimeFacts({
    query: input.query,
    additionalContext: input.additional_context,
    requestNowMs: input.now_ms,
    serverNowMs: Date.now(),
    requestTimeZone: input.timezone || undefined,
    defaultTimeZone: deps.defaultTimeZone,
  });
  // Bad explicit input is the caller's to fix whatever is configured: checked before asking whether an LLM is needed.
  const wanted = checkRequest(ot, input, facts);
  const warnings: string[] = [];

  const needsLlm = wanted.filter((lp) => undetermined(lp, metricFacts(lp, facts)).length > 0);
  if (needsLlm.length > 0 && !deps.llm) {
    const names = needsLlm.map((p) => p.name).join(", ");
    throw llmNotConfigured({
      needs: text(
        `resolving ${names} needs an LLM to generate dynamic_params`,
        `解析 ${names} 需要 LLM 生成 dynamic_params`,
      ),
      instead: text(
        "Give every parameter explicitly in additional_context (e.g. instant=true, start/end in ms), or ask the operators to configure LLM_BASE_URL.",
        "在 additional_context 中明确给出全部参数（如 instant=true，以毫秒给出 start/end），或请运维人员配置 LLM_BASE_URL。",
      ),
    });
  }

  const operators = await readOperators(deps.backend, ctx, wanted, warnings);
  const results = await settleWithLimit(wanted, input.options.max_concurrency, ctx.signal, (lp) =>
    generate(ctx, lp, { llm: deps.llm, input, facts, operator: operators.get(lp.name) }),
  );
  const failure = results.find((r) => r.status === "rejected");
  if (failure) throw (failure as PromiseRejectedResult).reason;
  const generated = results.map((r) => (r as PromiseFulfilledResult<Generated>).value);

  if (generated.some((g) => g.problems.length > 0)) {
    // return_debug holds on failure too: what the LLM answered is what the agent needs to see.
    throw missingInputParams(
      generated,
      input.options.return_debug ? debugOf(facts, {}, generated, warnings, ctx.traceId) : undefined,
      ctx.language,
    );
  }

  const dynamicParams: Record<string, Record<string, Json>> = {};
  for (const g of generated) if (Object.keys(g.params).length > 0) dynamicParams[g.debug.property] = g.params;
  const values = await deps.backend.queryProperties(ctx, knId, input.ot_id, {
    identities: input.identities,
    properties: input.properties,
    dynamic_params: dynamicParams,
  });
  const datas = values.rows.map((row, i) => row ?? unmatchedRow(input.identities[i]!, input.properties));
  ctx.log.info(
    {
      kn_id: knId,
      ot_id: input.ot_id,
      properties: input.properties,
      identities: input.identities.length,
      unmatched: values.unmatched.length,
    },
    "logic properties resolved",
  );
  return {
    datas,
    unmatched_identities: values.unmatched,
    debug: input.options.return_debug ? debugOf(facts, dynamicParams, generated, warnings, ctx.traceId) : undefined,
    trace_id: ctx.traceId,
  };
}

/**
 * The operator-market schemas of the operator properties, by property name. A
 * schema that cannot be read is a warning, in the caller's language: the
 * property is then generated from its own parameters only.
 */
async function readOperators(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  wanted: LogicProperty[],
  warnings: string[],
): Promise<Map<string, OperatorDetail>> {
  const operators = new Map<string, OperatorDetail>();
  await Promise.all(
    wanted
      .filter((lp) => lp.type === "operator")
      .map(async (lp) => {
        try {
          operators.set(lp.name, await backend.getOperator(ctx, lp.data_source.id));
        } catch (err) {
          if (!(err instanceof ToolError)) throw err;
          const why = err.text[ctx.language];
          warnings.push(
            ctx.language === "en"
              ? `operator ${lp.data_source.id} of ${lp.name}: its parameter schema could not be read (${why}); generated from the property's parameters only`
              : `${lp.name} 的算子 ${lp.data_source.id}：无法读取它的参数 schema（${why}）；仅按该属性自身的参数生成`,
          );
        }
      }),
  );
  return operators;
}

/**
 * FAILED_PRECONDITION MISSING_INPUT_PARAMS (spec §9.1): every property's missing parameters, with the LLM's own
 * words; each parameter's hint in the caller's language (MissingParams carries one string per hint).
 */
function missingInputParams(generated: Generated[], debug: ResolveDebug | undefined, language: Language): ToolError {
  const missing: MissingPropertyParams[] = generated
    .filter((g) => g.problems.length > 0)
    .map((g) => ({
      property: g.debug.property,
      params: g.problems.map((p) => ({ name: p.name, type: p.type, hint: p.hint[language] })),
    }));
  const llmErrors = generated.flatMap((g) => g.llmError ?? []).join("; ");
  return new ToolError({
    code: "failed_precondition",
    reason: "MISSING_INPUT_PARAMS",
    message: text("dynamic_params lacks required input parameters", "dynamic_params 缺少必需的 input 参数"),
    missing,
    metadata: {
      properties: missing.map((m) => m.property).join(","),
      ...(llmErrors ? { llm_errors: llmErrors } : {}),
      ...(debug ? { debug: JSON.stringify(debug) } : {}),
    },
    hint: {
      message: text(
        "Add each parameter in missing to additional_context as its hint says (or state it in the query), then retry.",
        "按 missing 中每个参数的 hint 补充 additional_context（或在 query 中写明），然后重试。",
      ),
    },
  });
}

function debugOf(
  facts: TimeFacts,
  dynamicParams: Record<string, Record<string, Json>>,
  generated: Generated[],
  warnings: string[],
  traceId: string,
): ResolveDebug {
  return {
    now_ms: facts.now_ms,
    timezone: facts.time_zone,
    dynamic_params: dynamicParams,
    properties: generated.map((g) => g.debug),
    warnings,
    trace_id: traceId,
  };
}

function unmatchedRow(identity: InstanceIdentity, properties: string[]): Record<string, Json> {
  const row: Record<string, Json> = { ...identity };
  for (const p of properties) row[p] = null;
  return row;
}
