import { z } from "zod";

/** Iterations a recall may take when the caller does not say (spec: max_iterations). */
export const DEFAULT_MAX_ITERATIONS = 3;
const MAX_ITERATIONS_LIMIT = 10;

/**
 * Input of expand_context_window: the spec's model, plus the iteration state
 * (current_iteration, max_iterations) that the spec passes as function
 * arguments. `maxWindow` is the largest window the service grants.
 */
export function expandContextWindowInput(maxWindow: number) {
  return z
    .object({
      reason: z
        .string()
        .trim()
        .min(1, "reason is required: say why more history is needed")
        .max(2000, "reason must be at most 2000 characters")
        .describe("需要拓展的原因，例如：'搜索结果不理想，需要查看更早的对话'"),
      current_size: z
        .number()
        .int()
        .min(0, "current_size must be at least 0")
        .max(maxWindow, `current_size must be at most ${maxWindow}`)
        .describe("当前使用的消息数"),
      requested_size: z
        .number()
        .int()
        .max(maxWindow, `requested_size must be at most ${maxWindow}, the largest window this service grants`)
        .describe("请求拓展到的消息数（必须大于 current_size）"),
      current_iteration: z
        .number()
        .int()
        .min(1, "current_iteration counts from 1")
        .default(1)
        .describe("当前迭代轮数（从1开始），默认 1"),
      max_iterations: z
        .number()
        .int()
        .min(1, "max_iterations must be at least 1")
        .max(MAX_ITERATIONS_LIMIT, `max_iterations must be at most ${MAX_ITERATIONS_LIMIT}`)
        .default(DEFAULT_MAX_ITERATIONS)
        .describe(`最大允许迭代次数，默认 ${DEFAULT_MAX_ITERATIONS}`),
    })
    .superRefine((v, ctx) => {
      if (v.requested_size <= v.current_size) {
        ctx.addIssue({
          code: "custom",
          path: ["requested_size"],
          message: `requested_size (${v.requested_size}) must be greater than current_size (${v.current_size})`,
        });
      }
    });
}

export type ExpandContextWindowInput = z.output<ReturnType<typeof expandContextWindowInput>>;

export interface ExpandContextWindowResult {
  approved: boolean;
  new_size: number;
  iteration: number;
  max_iterations: number;
  message: string;
}

/**
 * expand_context_window (spec §2.4): grants the larger window and moves to the
 * next iteration, unless the last iteration has been reached.
 */
export function expandContextWindow(input: ExpandContextWindowInput): ExpandContextWindowResult {
  const { current_iteration: current, max_iterations: max } = input;
  if (current >= max) {
    return {
      approved: false,
      new_size: input.current_size,
      iteration: current,
      max_iterations: max,
      message: `已达到最大迭代次数 (${max})，无法继续拓展`,
    };
  }
  const next = current + 1;
  return {
    approved: true,
    new_size: input.requested_size,
    iteration: next,
    max_iterations: max,
    message: `批准拓展到 ${input.requested_size} 条消息，进入第 ${next} 轮迭代`,
  };
}
