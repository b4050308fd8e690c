import type { Json } from "../core/json";
import type { LogicProperty } from "../kn/types";
import { inputParameters, METRIC_SYSTEM_PARAMS } from "./parameters";
import type { TimeFacts } from "./time-facts";

/** The time facts that apply to this property: a metric's system parameters. */
export function metricFacts(lp: LogicProperty, facts: TimeFacts): Record<string, Json> {
  if (lp.type !== "metric") return {};
  const out: Record<string, Json> = {};
  for (const name of METRIC_SYSTEM_PARAMS) {
    const v = facts[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The input parameters the facts leave open (a step is not needed once instant=true is a fact). */
export function undetermined(lp: LogicProperty, facts: Record<string, Json>): string[] {
  return inputParameters(lp)
    .map((p) => p.name)
    .filter((name) => !(name in facts) && !(lp.type === "metric" && name === "step" && facts["instant"] === true));
}

/** The LLM's parameters with the facts written over them (a fact wins, and debug says so). */
export function withFacts(
  lp: LogicProperty,
  answer: Record<string, Json>,
  facts: Record<string, Json>,
  notes: string[],
): Record<string, Json> {
  const out = { ...answer };
  for (const [k, v] of Object.entries(facts)) {
    if (out[k] !== undefined && out[k] !== v) {
      notes.push(`the LLM gave ${k}=${JSON.stringify(out[k])}; the time fact ${JSON.stringify(v)} wins`);
    }
    out[k] = v;
  }
  if (lp.type === "metric" && out["instant"] === true && out["step"] !== undefined && facts["step"] === undefined) {
    // An instant query takes no step (spec §7.3); a stray one is dropped rather than spent on a repair round.
    notes.push(`instant=true, so step=${JSON.stringify(out["step"])} was dropped`);
    delete out["step"];
  }
  return out;
}
