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
export function platformFailure(err: unknown, what: string): unknown {
  if (!(err instanceof ToolError) || err.metadata["upstream"] === undefined) return err;
  const upstream = err.metadata["upstream"];
  const code = err.metadata["error_code"];
  const fields = err.violations.map((v) => v.field).join(", ");
  const said = [code ? ` (${code})` : "", fields ? `: check ${fields}` : ""].join("");
  const message = (() => {
    switch (err.code) {
      case "invalid_argument":
        return `the platform (${upstream}) rejected ${what}${said}`;
      case "not_found":
        return `the platform (${upstream}) has no such thing for ${what}${said}`;
      case "failed_precondition":
        return `the platform (${upstream}) cannot do ${what} now${said}`;
      case "unauthenticated":
      case "permission_denied":
        return `the platform (${upstream}) refused the caller for ${what}${said}`;
      case "deadline_exceeded":
        return `the platform (${upstream}) did not answer ${what} in time; retrying in a moment may help`;
      default:
        return err.reason === "UPSTREAM_BAD_RESPONSE"
          ? `the platform (${upstream}) gave an answer to ${what} this service cannot read; retrying may help if it was restarting`
          : `the platform (${upstream}) is unavailable for ${what}${said}; retrying in a moment may help`;
    }
  })();
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
