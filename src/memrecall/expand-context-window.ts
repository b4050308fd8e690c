import type { Language } from "../errors/text";
import type { ExpandContextWindowInput } from "./inputs";

export interface ExpandContextWindowResult {
  approved: boolean;
  new_size: number;
  iteration: number;
  max_iterations: number;
  message: string;
}

/**
 * expand_context_window (spec §2.4): grants the larger window and moves to the
 * next iteration, unless the last iteration has been reached; the message in
 * the caller's language (the spec's Chinese, or its English).
 */
export function expandContextWindow(input: ExpandContextWindowInput, language: Language): ExpandContextWindowResult {
  const en = language === "en";
  const { current_iteration: current, max_iterations: max } = input;
  if (current >= max) {
    return {
      approved: false,
      new_size: input.current_size,
      iteration: current,
      max_iterations: max,
      message: en
        ? `the maximum number of iterations (${max}) is reached: the window cannot grow`
        : `已达到最大迭代次数 (${max})，无法继续拓展`,
    };
  }
  const next = current + 1;
  return {
    approved: true,
    new_size: input.requested_size,
    iteration: next,
    max_iterations: max,
    message: en
      ? `expansion to ${input.requested_size} messages approved: iteration ${next} begins`
      : `批准拓展到 ${input.requested_size} 条消息，进入第 ${next} 轮迭代`,
  };
}
