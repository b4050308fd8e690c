import { ToolError, type MissingPropertyParams } from "../errors/tool-error";
import { newSpanId } from "../core/ids";
import type { CallContext } from "../core/call-context";
import { settleWithLimit } from "../core/concurrency";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import type { InstanceIdentity, LogicProperty, ObjectType, OperatorDetail } from "../kn/types";
import type { Json } from "../core/json";
import type { ChatMessage, LlmClient } from "../upstream/llm-client";
import { readJsonObject } from "../upstream/llm-json";
import { checkOperatorParameters, checkParameters, inputParameters, METRIC_SYSTEM_PARAMS, type ParamProblem } from "./parameters";
import { buildPrompt } from "./prompts";
import type { ResolveInput } from "./resolver-input";
import { extractTimeFacts, type TimeFacts } from "./time-facts";
import { llmNotConfigured } from "../errors/common";

export interface ResolverDeps {
  backend: KnowledgeNetworkBackend;
  llm: LlmClient | undefined;
  /** The time zone when neither the request nor additional_context names one. */
  defaultTimeZone: string;
  /** Object type definitions by "kn/ot", when the TTL cache is on. */
  objectTypeCache: ObjectTypeCache | undefined;
}

export interface PropertyDebug {
  property: string;
  type: string;
  span_id: string;
  prompt_chars: number;
  raw_answers: string[];
  repairs: number;
  latency_ms: number;
  dynamic_params: Record<string, Json>;
  notes: string[];
}

export interface ResolveResult {
  /** One row per requested identity, in request order. */
  datas: Record<string, Json>[];
  unmatched_identities: InstanceIdentity[];
  debug:
    | { now_ms: number; timezone: string; dynamic_params: Record<string, Record<string, Json>>; properties: PropertyDebug[]; warnings: string[]; trace_id: string }
    | undefined;
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
export async function resolveLogicProperties(deps: ResolverDeps, ctx: CallContext, input: ResolveInput): Promise<ResolveResult> {
  const ot = await objectType(deps, ctx, input.kn_id, input.ot_id);
  const wanted = checkRequest(ot, input);
  const facts = extractTimeFacts({
    query: input.query,
    additionalContext: input.additional_context,
    requestNowMs: input.now_ms,
    serverNowMs: Date.now(),
    requestTimeZone: input.timezone || undefined,
    defaultTimeZone: deps.defaultTimeZone,
  });
  const warnings: string[] = [];

  const needsLlm = wanted.filter((lp) => undetermined(lp, metricFacts(lp, facts)).length > 0);
  if (needsLlm.length > 0 && !deps.llm) {
    throw llmNotConfigured({
      needs: `resolving ${needsLlm.map((p) => p.name).join(", ")} needs an LLM to generate dynamic_params`,
      instead: "Give every parameter explicitly in additional_context (e.g. instant=true, start/end in ms), or ask the operators to configure LLM_BASE_URL.",
    });
  }

  const operators = new Map<string, OperatorDetail>();
  await Promise.all(
    wanted
      .filter((lp) => lp.type === "operator")
      .map(async (lp) => {
        try {
          operators.set(lp.name, await deps.backend.getOperator(ctx, lp.data_source.id));
        } catch (err) {
          if (!(err instanceof ToolError)) throw err;
          warnings.push(`operator ${lp.data_source.id} of ${lp.name}: its parameter schema could not be read (${err.message}); generated from the property's parameters only`);
        }
      }),
  );

  const results = await settleWithLimit(wanted, input.options.max_concurrency, ctx.signal, (lp) =>
    generate(deps, ctx, input, lp, { facts, operator: operators.get(lp.name) }),
  );
  const failure = results.find((r) => r.status === "rejected");
  if (failure) throw (failure as PromiseRejectedResult).reason;
  const generated = results.map((r) => (r as PromiseFulfilledResult<Generated>).value);

  const missing: MissingPropertyParams[] = generated
    .filter((g) => g.problems.length > 0)
    .map((g) => ({ property: g.debug.property, params: g.problems.map((p) => ({ name: p.name, type: p.type, hint: p.hint })) }));
  if (missing.length > 0) {
    const llmErrors = generated.flatMap((g) => g.llmError ?? []).join("; ");
    throw new ToolError({
      code: "failed_precondition",
      reason: "MISSING_INPUT_PARAMS",
      message: "dynamic_params 缺少必需的 input 参数",
      missing,
      metadata: {
        properties: missing.map((m) => m.property).join(","),
        ...(llmErrors ? { llm_errors: llmErrors } : {}),
        // return_debug holds on failure too: what the LLM answered is what the agent needs to see.
        ...(input.options.return_debug ? { debug: JSON.stringify(debugOf(facts, {}, generated, warnings, ctx.traceId)) } : {}),
      },
      hint: { message: "按 missing 中每个参数的 hint 补充 additional_context（或在 query 中写明），然后重试。" },
    });
  }

  const dynamicParams: Record<string, Record<string, Json>> = {};
  for (const g of generated) if (Object.keys(g.params).length > 0) dynamicParams[g.debug.property] = g.params;
  const values = await deps.backend.queryProperties(ctx, input.kn_id, input.ot_id, {
    identities: input.identities,
    properties: input.properties,
    dynamic_params: dynamicParams,
  });
  const datas = values.rows.map((row, i) => row ?? unmatchedRow(input.identities[i]!, input.properties));
  ctx.log.info(
    { kn_id: input.kn_id, ot_id: input.ot_id, properties: input.properties, identities: input.identities.length, unmatched: values.unmatched.length },
    "logic properties resolved",
  );
  return {
    datas,
    unmatched_identities: values.unmatched,
    debug: input.options.return_debug ? debugOf(facts, dynamicParams, generated, warnings, ctx.traceId) : undefined,
    trace_id: ctx.traceId,
  };
}

function debugOf(facts: TimeFacts, dynamicParams: Record<string, Record<string, Json>>, generated: Generated[], warnings: string[], traceId: string) {
  return { now_ms: facts.now_ms, timezone: facts.time_zone, dynamic_params: dynamicParams, properties: generated.map((g) => g.debug), warnings, trace_id: traceId };
}

interface Generated {
  params: Record<string, Json>;
  problems: ParamProblem[];
  llmError: string | undefined;
  debug: PropertyDebug;
}

/** One property's dynamic_params: from facts alone when they cover it, else from the LLM with repair rounds. */
async function generate(
  deps: ResolverDeps,
  ctx: CallContext,
  input: ResolveInput,
  lp: LogicProperty,
  env: { facts: TimeFacts; operator: OperatorDetail | undefined },
): Promise<Generated> {
  const started = performance.now();
  const spanId = newSpanId();
  const log = ctx.log.child({ span_id: spanId, property: lp.name });
  const facts = metricFacts(lp, env.facts);
  const debug: PropertyDebug = { property: lp.name, type: lp.type, span_id: spanId, prompt_chars: 0, raw_answers: [], repairs: 0, latency_ms: 0, dynamic_params: {}, notes: [] };
  for (const f of env.facts.facts) if (f.param in facts) debug.notes.push(`fact ${f.param}=${String(f.value)} from "${f.source}" (${f.rule})`);
  const inputs = inputParameters(lp);
  const finish = (params: Record<string, Json>, problems: ParamProblem[], llmError?: string): Generated => {
    debug.latency_ms = Math.round(performance.now() - started);
    debug.dynamic_params = params;
    log.info({ ms: debug.latency_ms, repairs: debug.repairs, problems: problems.map((p) => p.name) }, "dynamic_params generated");
    return { params, problems, llmError, debug };
  };
  if (inputs.length === 0) return finish({}, []);
  if (undetermined(lp, facts).length === 0) {
    debug.notes.push("every input parameter was determined from the time facts: no LLM call");
    const params = withFacts(lp, {}, facts, debug.notes);
    return finish(params, checkParameters(lp, params));
  }

  const messages: ChatMessage[] = buildPrompt({
    query: input.query,
    identities: input.identities,
    additionalContext: input.additional_context,
    nowMs: env.facts.now_ms,
    timeZone: env.facts.time_zone,
    property: lp,
    facts,
    operator: env.operator,
  });
  const check = (params: Record<string, Json>) => [...checkParameters(lp, params), ...checkOperatorParameters(lp, env.operator, params)];
  let problems: ParamProblem[] = [];
  let params: Record<string, Json> = {};
  for (let attempt = 0; ; attempt++) {
    debug.prompt_chars += messages.reduce((n, m) => n + m.content.length, 0);
    const completion = await deps.llm!.complete({ ...ctx, log }, messages, { json: true });
    debug.raw_answers.push(completion.content);
    const read = readJsonObject(completion.content);
    const said = read.ok ? read.value["_error"] : undefined;
    if (read.ok && typeof said === "string" && said.trim() !== "" && !(lp.name in read.value)) {
      // The LLM says a required parameter cannot be determined: that goes back to the agent, not to a repair.
      const open = undetermined(lp, facts);
      const known = withFacts(lp, {}, facts, []);
      const reported = checkParameters(lp, known).filter((p) => open.includes(p.name));
      return finish(known, reported, `${lp.name}: ${said.trim()}`);
    }
    if (!read.ok) {
      problems = [{ name: "(answer)", type: "JSON", problem: read.problem, hint: "" }];
    } else {
      const answer = answerFor(lp, read.value as Record<string, Json>, debug.notes);
      if (!answer) {
        problems = [{ name: "(answer)", type: "JSON", problem: `the answer has no "${lp.name}" key`, hint: "" }];
      } else {
        params = withFacts(lp, keepInputs(lp, answer, debug.notes), facts, debug.notes);
        problems = check(params);
      }
    }
    if (problems.length === 0 || attempt >= input.options.max_repair_rounds) break;
    debug.repairs++;
    messages.push(
      { role: "assistant", content: completion.content },
      {
        role: "user",
        content: `上面的输出未通过校验：${problems.map((p) => `${p.name}: ${p.problem}`).join("；")}。请修正后重新输出完整的 JSON 对象 {"${lp.name}": {...}}，只输出 JSON。`,
      },
    );
  }
  if (problems.some((p) => p.name === "(answer)")) {
    const undetermined = checkParameters(lp, withFacts(lp, {}, facts, []));
    return finish({}, undetermined.length > 0 ? undetermined : problems.map((p) => ({ ...p, name: lp.name, hint: "重试；若仍失败，在 additional_context 中直接给出全部参数" })));
  }
  return finish(params, problems);
}

/** The input parameters the facts leave open (a step is not needed once instant=true is a fact). */
function undetermined(lp: LogicProperty, facts: Record<string, Json>): string[] {
  return inputParameters(lp)
    .map((p) => p.name)
    .filter((name) => !(name in facts) && !(lp.type === "metric" && name === "step" && facts["instant"] === true));
}

/** The time facts that apply to this property: a metric's system parameters. */
function metricFacts(lp: LogicProperty, facts: TimeFacts): Record<string, Json> {
  if (lp.type !== "metric") return {};
  const out: Record<string, Json> = {};
  for (const name of METRIC_SYSTEM_PARAMS) {
    const v = facts[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The LLM's parameters with the facts written over them (a fact wins, and debug says so). */
function withFacts(lp: LogicProperty, answer: Record<string, Json>, facts: Record<string, Json>, notes: string[]): Record<string, Json> {
  const out = { ...answer };
  for (const [k, v] of Object.entries(facts)) {
    if (out[k] !== undefined && out[k] !== v) notes.push(`the LLM gave ${k}=${JSON.stringify(out[k])}; the time fact ${JSON.stringify(v)} wins`);
    out[k] = v;
  }
  if (lp.type === "metric" && out["instant"] === true && out["step"] !== undefined && facts["step"] === undefined) {
    // An instant query takes no step (spec §7.3); a stray one is dropped rather than spent on a repair round.
    notes.push(`instant=true, so step=${JSON.stringify(out["step"])} was dropped`);
    delete out["step"];
  }
  return out;
}

/**
 * The parameters in an answer: the object under the property's name as asked,
 * or, when the model left the wrapper out, the top level itself if it names at
 * least one input parameter. Anything else is no answer (and gets a repair).
 */
function answerFor(lp: LogicProperty, value: Record<string, Json>, notes: string[]): Record<string, Json> | undefined {
  const keyed = value[lp.name];
  if (keyed !== null && typeof keyed === "object" && !Array.isArray(keyed)) return keyed;
  if (keyed !== undefined) return undefined;
  if (!inputParameters(lp).some((p) => p.name in value)) return undefined;
  notes.push(`the answer was not keyed by "${lp.name}"; its top level was taken as the parameters`);
  return value;
}

/** Only the property's input parameters go upstream; anything else the LLM added is dropped (and noted). */
function keepInputs(lp: LogicProperty, answer: Record<string, Json>, notes: string[]): Record<string, Json> {
  const names = new Set(inputParameters(lp).map((p) => p.name));
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(answer)) {
    if (names.has(k)) out[k] = v;
    else notes.push(`dropped ${k}: not an input parameter of ${lp.name}`);
  }
  return out;
}

/** Requested properties checked against the definition: logic properties only, identities with every primary key. */
function checkRequest(ot: ObjectType, input: ResolveInput): LogicProperty[] {
  const violations: { field: string; description: string }[] = [];
  const logic = new Map(ot.logic_properties.map((lp) => [lp.name, lp]));
  const data = new Set(ot.data_properties.map((p) => p.name));
  input.properties.forEach((p, i) => {
    if (logic.has(p)) return;
    violations.push({
      field: `properties[${i}]`,
      description: data.has(p)
        ? `${p} is a data property of ${ot.id}, not a logic property: read it with an instance query`
        : `${p} is not a logic property of ${ot.id}; its logic properties: ${[...logic.keys()].join(", ") || "none"}`,
    });
  });
  const pks = new Set(ot.primary_keys);
  input.identities.forEach((identity, i) => {
    const missing = ot.primary_keys.filter((k) => identity[k] === undefined);
    if (missing.length > 0) violations.push({ field: `unique_identities[${i}]`, description: `missing primary key ${missing.join(", ")} of ${ot.id}` });
    for (const k of Object.keys(identity)) {
      if (!pks.has(k)) violations.push({ field: `unique_identities[${i}].${k}`, description: `${k} is not a primary key of ${ot.id} (primary keys: ${ot.primary_keys.join(", ")})` });
    }
  });
  if (violations.length > 0) {
    throw new ToolError({
      code: "invalid_argument",
      reason: "INVALID_ARGUMENT",
      message: `invalid request: ${violations.map((v) => `${v.field}: ${v.description}`).join("; ")}`,
      violations,
      hint: { message: "Ask only for logic properties of the object type, with identities made of its primary keys.", validValues: [...logic.keys()] },
    });
  }
  return input.properties.map((p) => logic.get(p)!);
}

function unmatchedRow(identity: InstanceIdentity, properties: string[]): Record<string, Json> {
  const row: Record<string, Json> = { ...identity };
  for (const p of properties) row[p] = null;
  return row;
}

/** A time-limited cache of object type definitions (off unless configured: spec §6.1 fetches every call). */
export class ObjectTypeCache {
  private readonly entries = new Map<string, { value: ObjectType; expiresAt: number }>();
  constructor(private readonly ttlMs: number) {}
  get(key: string): ObjectType | undefined {
    const e = this.entries.get(key);
    if (!e || e.expiresAt <= Date.now()) return undefined;
    return e.value;
  }
  set(key: string, value: ObjectType): void {
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }
}

async function objectType(deps: ResolverDeps, ctx: CallContext, knId: string, otId: string): Promise<ObjectType> {
  const key = `${knId}/${otId}`;
  const cached = deps.objectTypeCache?.get(key);
  if (cached) return cached;
  const [ot] = await deps.backend.getObjectTypes(ctx, knId, [otId]);
  if (!ot) throw new ToolError({ code: "not_found", reason: "OBJECT_TYPE_NOT_FOUND", message: `object type ${otId} does not exist in knowledge network ${knId}` });
  deps.objectTypeCache?.set(key, ot);
  return ot;
}
