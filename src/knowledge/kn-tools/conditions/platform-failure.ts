import { ToolError } from "../../../errors/tool-error";

/**
 * A backend failure as the agent reads it. The platform's own verdicts keep
 * their code (a 400 stays INVALID_ARGUMENT, 404 NOT_FOUND, 409
 * FAILED_PRECONDITION: the caller can fix the call, it is no dependency
 * failure), its reason (the platform's description and error_code), its field
 * violations and next step; the message is rewritten without the internal
 * addresses the HTTP client names in its logs. Anything else passes through.
 */
export function platformFailure(err: unknown, what: string): unknown {
  if (!(err instanceof ToolError) || err.metadata["upstream"] === undefined) return err;
  const upstream = err.metadata["upstream"];
  const description = scrub(err.metadata["description"] ?? "");
  const code = err.metadata["error_code"];
  const said = description !== "" ? `: ${description}${code ? ` (${code})` : ""}` : code ? ` (${code})` : "";
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
    violations: err.violations.map((v) => ({ field: v.field, description: scrub(v.description) })),
    metadata: Object.fromEntries(Object.entries(err.metadata).map(([k, v]) => [k, scrub(v)])),
    ...(err.hint ? { hint: { ...err.hint, message: scrub(err.hint.message) } } : {}),
    cause: err,
  });
}

/** A platform text without addresses: URLs and API paths are this deployment's internals, not the agent's business. */
function scrub(text: string): string {
  return text.replace(/https?:\/\/\S+/g, "(internal address)").replace(/\/api\/[^\s,;)]+/g, "(internal path)");
}
