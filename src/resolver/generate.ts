import type { CallContext } from "../core/call-context";
import { newSpanId } from "../core/ids";
import type { Json } from "../core/json";
import { text, verbatim } from "../errors/text";
import type { LogicProperty, OperatorDetail } from "../kn/types";
import type { LlmClient } from "../upstream/llm-client";
import { askJson, type Reading, readJsonObject } from "../upstream/llm-json";
import { checkOperatorParameters, checkParameters, inputParameters, type ParamProblem } from "./parameters";
import { buildPrompt } from "./prompts";
import { metricFacts, undetermined, withFacts } from "./property-facts";
import type { ResolveInput } from "./resolver-input";
import type { TimeFacts } from "./time-facts";

/** How one property's dynamic_params came about, for `return_debug`. */
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

/** One property's dynamic_params and what is still wrong with them (none: ready to query). */
export interface Generated {
  params: Record<string, Json>;
  problems: ParamProblem[];
  /** The LLM's own `_error` text, prefixed with the property, when it said it could not determine a parameter. */
  llmError: string | undefined;
  debug: PropertyDebug;
}

/** What generating a property needs besides the property itself. */
export interface GenerateEnv {
  /** Only called when the facts leave an input parameter open; the caller makes sure there is one then. */
  llm: LlmClient | undefined;
  input: ResolveInput;
  facts: TimeFacts;
  /** The operator's schema from the operator market, for an operator property whose schema could be read. */
  operator: OperatorDetail | undefined;
}

/** The problem name of an answer that could not be read as parameters at all (no JSON, no key). */
const UNREADABLE = "(answer)";

/**
 * One property's dynamic_params: from the time facts alone when they settle
 * every input parameter, else from the LLM with up to `max_repair_rounds`
 * repair rounds. An answer whose parameters still have problems is kept with
 * them (they become MISSING_INPUT_PARAMS); an `_error` answer ends the rounds.
 */
export async function generate(ctx: CallContext, lp: LogicProperty, env: GenerateEnv): Promise<Generated> {
  const started = performance.now();
  const spanId = newSpanId();
  // The property's fields go on its own log line (ctx.log is already the call's child logger; a child
  // of it per property is what pino makes slowly). Only an LLM call, whose client logs through the
  // context it is given, gets a logger carrying them (below).
  const fields = { span_id: spanId, property: lp.name };
  const facts = metricFacts(lp, env.facts);
  const debug: PropertyDebug = {
    property: lp.name,
    type: lp.type,
    span_id: spanId,
    prompt_chars: 0,
    raw_answers: [],
    repairs: 0,
    latency_ms: 0,
    dynamic_params: {},
    notes: [],
  };
  for (const f of env.facts.facts) {
    if (f.param in facts) debug.notes.push(`fact ${f.param}=${String(f.value)} from "${f.source}" (${f.rule})`);
  }
  const finish = ({ params, problems, llmError }: Answer): Generated => {
    debug.latency_ms = Math.round(performance.now() - started);
    debug.dynamic_params = params;
    ctx.log.info(
      { ...fields, ms: debug.latency_ms, repairs: debug.repairs, problems: problems.map((p) => p.name) },
      "dynamic_params generated",
    );
    return { params, problems, llmError, debug };
  };
  if (inputParameters(lp).length === 0) return finish({ params: {}, problems: [] });
  if (undetermined(lp, facts).length === 0) {
    debug.notes.push("every input parameter was determined from the time facts: no LLM call");
    const params = withFacts(lp, {}, facts, debug.notes);
    return finish({ params, problems: checkParameters(lp, params) });
  }

  const { input, operator } = env;
  const messages = buildPrompt({
    query: input.query,
    identities: input.identities,
    additionalContext: input.additional_context,
    nowMs: env.facts.now_ms,
    timeZone: env.facts.time_zone,
    property: lp,
    facts,
    operator,
  });
  const about: AnswerContext = { lp, facts, operator, notes: debug.notes };
  const asked = await askJson(
    env.llm!,
    { ...ctx, log: ctx.log.child(fields) },
    messages,
    (answer) => readAnswer(answer, about),
    {
      repairs: input.options.max_repair_rounds,
      repairMessage: ({ problems }) =>
        `上面的输出未通过校验：${problems.map((p) => `${p.name}: ${p.problem}`).join("；")}。` +
        `请修正后重新输出完整的 JSON 对象 {"${lp.name}": {...}}，只输出 JSON。`,
    },
  );
  debug.prompt_chars = asked.promptChars;
  debug.raw_answers = asked.answers;
  debug.repairs = asked.repairs;
  const last = asked.ok ? asked.value : asked.problem;
  if (last.problems.some((p) => p.name === UNREADABLE)) {
    // No usable answer at all: the agent is told what the facts leave open, or to retry when they leave nothing.
    const open = checkParameters(lp, withFacts(lp, {}, facts, []));
    const retry = last.problems.map((p) => ({
      ...p,
      name: lp.name,
      hint: text(
        "Retry; if it fails again, give every parameter directly in additional_context",
        "重试；若仍失败，在 additional_context 中直接给出全部参数",
      ),
    }));
    return finish({ params: {}, problems: open.length > 0 ? open : retry });
  }
  return finish(last);
}

/** One answer read: the parameters it gave (facts written over them) and their problems. */
interface Answer {
  params: Record<string, Json>;
  problems: ParamProblem[];
  llmError?: string;
}

interface AnswerContext {
  lp: LogicProperty;
  /** The property's time facts. */
  facts: Record<string, Json>;
  operator: OperatorDetail | undefined;
  /** Debug notes, appended to as the answer is read. */
  notes: string[];
}

/**
 * Usable: parameters without problems, or the LLM's `_error` saying a required
 * parameter cannot be determined (that goes back to the agent, not to a
 * repair). Anything else is a problem for the repair round.
 */
function readAnswer(text: string, { lp, facts, operator, notes }: AnswerContext): Reading<Answer, Answer> {
  const read = readJsonObject(text);
  if (!read.ok) return unreadable(read.problem);
  const said = read.value["_error"];
  if (typeof said === "string" && said.trim() !== "" && !(lp.name in read.value)) {
    const open = undetermined(lp, facts);
    const known = withFacts(lp, {}, facts, []);
    const reported = checkParameters(lp, known).filter((p) => open.includes(p.name));
    return { ok: true, value: { params: known, problems: reported, llmError: `${lp.name}: ${said.trim()}` } };
  }
  const answer = answerFor(lp, read.value as Record<string, Json>, notes);
  if (!answer) return unreadable(`the answer has no "${lp.name}" key`);
  const params = withFacts(lp, keepInputs(lp, answer, notes), facts, notes);
  const problems = [...checkParameters(lp, params), ...checkOperatorParameters(lp, operator, params)];
  return problems.length === 0
    ? { ok: true, value: { params, problems } }
    : { ok: false, problem: { params, problems } };
}

function unreadable(problem: string): Reading<Answer, Answer> {
  return {
    ok: false,
    problem: { params: {}, problems: [{ name: UNREADABLE, type: "JSON", problem, hint: verbatim("") }] },
  };
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
