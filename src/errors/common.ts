import type { Text } from "./text";
import { type FieldViolation, ToolError } from "./tool-error";

/**
 * FAILED_PRECONDITION LLM_NOT_CONFIGURED: a call asked for something only an
 * LLM can do, and LLM_BASE_URL is not set. `needs` says what asked for it
 * ("skip_llm=false needs an LLM"), `instead` what the agent can do without one.
 */
export function llmNotConfigured(opts: {
  needs: Text;
  instead: Text;
  field?: FieldViolation;
  validValues?: string[];
}): ToolError {
  return new ToolError({
    code: "failed_precondition",
    reason: "LLM_NOT_CONFIGURED",
    message: {
      en: `${opts.needs.en}, and this service has none (LLM_BASE_URL is not set)`,
      zh: `${opts.needs.zh}，而本服务没有配置 LLM（未设置 LLM_BASE_URL）`,
    },
    ...(opts.field ? { violations: [opts.field] } : {}),
    hint: { message: opts.instead, ...(opts.validValues ? { validValues: opts.validValues } : {}) },
  });
}
