import type { CallContext } from "../../core/call-context";
import { type ErrorCode, type FieldViolation, ToolError } from "../../errors/tool-error";
import { DATA_RETRIEVAL, type DataRetrievalClient, readFailure } from "../../upstream/data-retrieval";
import type { KnSearchAnswer } from "./answer";
import { requestBody, upstreamAnswerSchema } from "./data-retrieval-wire";
import type { KnSearchInput } from "./input";

/**
 * kn_search forwarded to data-retrieval's `POST /tools/kn_search` with the
 * caller's identity, deadline and abort signal; its answer is checked and
 * read into the typed answer. Its failures are told to the agent in terms of
 * kn_search: what went wrong, which parameter, what to try — with
 * data-retrieval's status and error code in ErrorInfo metadata. Its error
 * text is not passed on (the log has it, under the call's trace id): only the
 * identifiers the spec's LLM-readable rewriting needs, the code and the
 * fields named, reach the agent.
 */
export async function knSearchProxy(
  client: DataRetrievalClient,
  ctx: CallContext,
  input: KnSearchInput,
  sessionId: string,
): Promise<KnSearchAnswer> {
  try {
    return await client.callTool(
      ctx,
      "kn_search",
      requestBody(input, sessionId),
      upstreamAnswerSchema(input, sessionId),
    );
  } catch (err) {
    throw err instanceof ToolError && err.metadata["upstream"] === DATA_RETRIEVAL ? explain(err, input) : err;
  }
}

const RETRY = "Retry in a moment; if it keeps failing, data-retrieval needs attention from the operators.";

/** The agent's version of a data-retrieval failure. */
function explain(err: ToolError, input: KnSearchInput): ToolError {
  const failure = readFailure(err);
  const cause = failure.code === "" ? "" : ` (error code ${failure.code})`;
  const kns = input.kn_ids.map((k) => k.knowledge_network_id).join(", ");
  const metadata = err.metadata;
  const make = (code: ErrorCode, reason: string, message: string, hint: string, violations: FieldViolation[] = []) =>
    new ToolError({
      code,
      reason,
      message,
      hint: { message: hint },
      metadata,
      violations,
      ...(err.privateDetail ? { privateDetail: err.privateDetail } : {}),
      cause: err,
    });

  if (err.reason === "UPSTREAM_UNREACHABLE") {
    return make(
      err.code,
      err.reason,
      `kn_search could not reach data-retrieval (DATA_RETRIEVAL_URL): ${err.message}`,
      RETRY,
    );
  }
  if (err.reason === "UPSTREAM_TIMEOUT") {
    return make(
      err.code,
      err.reason,
      `kn_search timed out: ${err.message}`,
      "Retry with a longer deadline, or ask for less: a lower retrieval_config.concept_retrieval.top_k, a lower semantic_instance_retrieval.initial_candidate_count, or only_schema=true.",
    );
  }
  if (err.reason === "UPSTREAM_BAD_RESPONSE") {
    return make(
      err.code,
      err.reason,
      `data-retrieval answered kn_search with something that is not a kn_search answer: ${err.message}`,
      RETRY,
    );
  }
  // data-retrieval requires the caller's account; FastAPI names the missing header.
  const identity = failure.fields.find((f) => /account/i.test(f.field));
  if (identity) {
    return make(
      "invalid_argument",
      "ACCOUNT_REQUIRED",
      `data-retrieval needs to know who is calling kn_search: the ${identity.field} header is missing or invalid`,
      "Call again with the x-account-id header (the user's account) and x-account-type user, app or anonymous.",
      [
        {
          field: identity.field.startsWith("x-") ? identity.field : "x-account-id",
          description: "missing or invalid, data-retrieval says",
        },
      ],
    );
  }
  if (failure.status === 400 || failure.status === 422) {
    const fields = failure.fields.map((f) => f.field).join(", ");
    return make(
      "invalid_argument",
      "KN_SEARCH_PARAMETERS_REJECTED",
      `data-retrieval rejected the kn_search parameters${cause}${fields === "" ? "" : `: ${fields}`}`,
      "Correct the parameters named; leaving retrieval_config out uses the defaults.",
      failure.fields,
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    return make(
      err.code,
      err.reason,
      `data-retrieval refused this account kn_search on ${kns}${cause}`,
      "Search knowledge networks this account may read, or call as an account that may read these.",
    );
  }
  if (failure.status === 404 && /KnowledgeNetwork/i.test(failure.code)) {
    // data-retrieval's own 404 about a network: one it does not know, which native mode calls NOT_FOUND too.
    return make(
      "not_found",
      "KNOWLEDGE_NETWORK_NOT_FOUND",
      `data-retrieval found no knowledge network ${kns}${cause}`,
      "Check kn_ids: list the networks this account can read, then call again with one of them.",
      input.kn_ids.map((_, i) => ({
        field: `kn_ids[${i}].knowledge_network_id`,
        description: "not a knowledge network data-retrieval knows",
      })),
    );
  }
  if (failure.status === 404) {
    // Any other 404 (FastAPI's bare {"detail": "Not Found"}, another service's): the route itself is missing.
    return make(
      "failed_precondition",
      "DATA_RETRIEVAL_MISCONFIGURED",
      `the service at DATA_RETRIEVAL_URL has no POST /tools/kn_search (the setting names another service or version)${cause}`,
      "Calling again will not help; the operators must correct DATA_RETRIEVAL_URL.",
    );
  }
  if (failure.status === 429)
    return make(
      err.code,
      err.reason,
      `data-retrieval is rate limiting kn_search calls${cause}`,
      "Wait a little, then retry.",
    );
  return make(
    err.code,
    err.reason,
    `data-retrieval failed to run kn_search (HTTP ${failure.status})${cause}`,
    `If data-retrieval's cause names a parameter, correct it; if it names a knowledge network, kn_ids (${kns}) must name networks this account can read; otherwise retry in a moment.`,
  );
}
