import { inBoth, type Text, text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";

/**
 * A backend failure as the agent reads it. The platform's own verdicts keep
 * their code (a 400 stays INVALID_ARGUMENT, 404 NOT_FOUND, 409
 * FAILED_PRECONDITION: the caller can fix the call, it is no dependency
 * failure), its reason, the platform's error_code, the fields it named and
 * the next step; the message is rewritten in terms of the tool. The
 * platform's free text (description, solution) never reaches the agent: the
 * HTTP client logged it with the trace id. Anything else passes through.
 */
export function platformFailure(err: unknown, what: Text): unknown {
  if (!(err instanceof ToolError) || err.metadata["upstream"] === undefined) return err;
  const upstream = err.metadata["upstream"];
  const code = err.metadata["error_code"];
  const fields = err.violations.map((v) => v.field).join(", ");
  const said = text(
    [code ? ` (${code})` : "", fields ? `: check ${fields}` : ""].join(""),
    [code ? `（${code}）` : "", fields ? `：请检查 ${fields}` : ""].join(""),
  );
  const message = inBoth((l) => {
    const platform = l === "en" ? `the platform (${upstream})` : `平台（${upstream}）`;
    switch (err.code) {
      case "invalid_argument":
        return l === "en" ? `${platform} rejected ${what.en}${said.en}` : `${platform}拒绝了${what.zh}${said.zh}`;
      case "not_found":
        return l === "en"
          ? `${platform} has no such thing for ${what.en}${said.en}`
          : `${platform}找不到${what.zh}所要的对象${said.zh}`;
      case "failed_precondition":
        return l === "en"
          ? `${platform} cannot do ${what.en} now${said.en}`
          : `${platform}现在无法执行${what.zh}${said.zh}`;
      case "unauthenticated":
      case "permission_denied":
        return l === "en"
          ? `${platform} refused the caller for ${what.en}${said.en}`
          : `${platform}拒绝了调用方的${what.zh}${said.zh}`;
      case "deadline_exceeded":
        return l === "en"
          ? `${platform} did not answer ${what.en} in time; retrying in a moment may help`
          : `${platform}没有及时回答${what.zh}；稍后重试可能会成功`;
      default:
        if (err.reason === "UPSTREAM_BAD_RESPONSE")
          return l === "en"
            ? `${platform} gave an answer to ${what.en} this service cannot read; retrying may help if it was restarting`
            : `${platform}对${what.zh}的回答本服务无法读取；如果它当时正在重启，重试可能会成功`;
        return l === "en"
          ? `${platform} is unavailable for ${what.en}${said.en}; retrying in a moment may help`
          : `${platform}无法执行${what.zh}${said.zh}；稍后重试可能会成功`;
    }
  });
  return new ToolError({
    code: err.code,
    reason: err.reason,
    message,
    violations: err.violations,
    metadata: err.metadata,
    ...(err.hint ? { hint: err.hint } : {}),
    ...(err.privateDetail ? { privateDetail: err.privateDetail } : {}),
    cause: err,
  });
}
