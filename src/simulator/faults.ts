import { z } from "zod";
import { regex } from "../config-fields";
import type { SimulatorFaults } from "./config";
import type { Reply } from "./exchange";
import { errorBody, serviceOf } from "./platform-errors";

const NO_FAULTS: SimulatorFaults = {
  latencyMs: 0,
  jitterMs: 0,
  errorRate: 0,
  timeoutRate: 0,
  malformedRate: 0,
  match: undefined,
};

/** Any subset of the faults, as `setFaults` and `POST /__sim/faults` take them; a null match clears it. */
export const faultsSchema = z
  .object({
    latencyMs: z.number().int().min(0),
    jitterMs: z.number().int().min(0),
    errorRate: z.number().min(0).max(1),
    timeoutRate: z.number().min(0).max(1),
    malformedRate: z.number().min(0).max(1),
    match: regex("match")
      .nullish()
      .transform((m) => m ?? undefined),
  })
  .partial()
  .strict();

/**
 * What a call gets besides its delay: its normal answer ("none"), no answer at
 * all ("hold": the client's timeout must fire), a 503 with the platform's error
 * body ("unavailable"), or a 200 whose body is not JSON ("malformed").
 */
type FaultOutcome = "none" | "hold" | "unavailable" | "malformed";

/** The faults in force, changeable while the simulator runs, and the draw of each call's fault. */
export class FaultInjector {
  private faults: SimulatorFaults;

  /** Throws a ZodError when `initial` is not a valid subset of the faults. */
  constructor(initial: Partial<SimulatorFaults>) {
    this.faults = { ...NO_FAULTS, ...faultsSchema.parse(initial) };
  }

  current(): SimulatorFaults {
    return this.faults;
  }

  /** Changes the given faults and keeps the others; throws a ZodError on a bad value. */
  set(faults: Partial<SimulatorFaults>): void {
    this.faults = { ...this.faults, ...faultsSchema.parse(faults) };
  }

  /**
   * Draws one call's fault. Faults apply to every call, or with `match` only to
   * the calls whose `call` text ("METHOD path body") it matches; the others get
   * neither delay nor fault. The outcomes are drawn in turn: hold, then
   * unavailable, then malformed.
   */
  draw(call: string): { delayMs: number; outcome: FaultOutcome } {
    const f = this.faults.match === undefined || new RegExp(this.faults.match).test(call) ? this.faults : NO_FAULTS;
    const delayMs = f.latencyMs + Math.random() * f.jitterMs;
    if (Math.random() < f.timeoutRate) return { delayMs, outcome: "hold" };
    if (Math.random() < f.errorRate) return { delayMs, outcome: "unavailable" };
    if (Math.random() < f.malformedRate) return { delayMs, outcome: "malformed" };
    return { delayMs, outcome: "none" };
  }
}

/** The answer of an "unavailable" or "malformed" fault to a request for `pathname`. */
export function faultReply(outcome: "unavailable" | "malformed", pathname: string): Reply {
  if (outcome === "malformed") return { status: 200, body: '{"datas":[{"truncated' };
  return {
    status: 503,
    body: errorBody(
      `${serviceOf(pathname)}.ServiceUnavailable`,
      "simulated fault: the service is temporarily unavailable",
      "Retry later.",
    ),
  };
}
