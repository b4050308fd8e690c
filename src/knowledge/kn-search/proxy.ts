import type { CallContext } from "../../core/call-context";
import { type Text, text, verbatim } from "../../errors/text";
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

const RETRY = text(
  "Retry in a moment; if it keeps failing, data-retrieval needs attention from the operators.",
  "稍后重试；如果一直失败，需要运维人员检查 data-retrieval。",
);

/** The agent's version of a data-retrieval failure. */
function explain(err: ToolError, input: KnSearchInput): ToolError {
  const failure = readFailure(err);
  const cause =
    failure.code === "" ? verbatim("") : text(` (error code ${failure.code})`, `（错误码 ${failure.code}）`);
  const kns = input.kn_ids.map((k) => k.knowledge_network_id).join(", ");
  const metadata = err.metadata;
  const make = (code: ErrorCode, reason: string, message: Text, hint: Text, violations: FieldViolation[] = []) =>
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
      text(
        `kn_search could not reach data-retrieval (DATA_RETRIEVAL_URL): ${err.text.en}`,
        `kn_search 无法连接 data-retrieval（DATA_RETRIEVAL_URL）：${err.text.zh}`,
      ),
      RETRY,
    );
  }
  if (err.reason === "UPSTREAM_TIMEOUT") {
    return make(
      err.code,
      err.reason,
      text(`kn_search timed out: ${err.text.en}`, `kn_search 超时：${err.text.zh}`),
      text(
        "Retry with a longer deadline, or ask for less: a lower retrieval_config.concept_retrieval.top_k, a lower retrieval_config.semantic_instance_retrieval.initial_candidate_count, or only_schema=true.",
        "用更长的截止时间重试，或少要一些：调低 retrieval_config.concept_retrieval.top_k 或 retrieval_config.semantic_instance_retrieval.initial_candidate_count，或设 only_schema=true。",
      ),
    );
  }
  if (err.reason === "UPSTREAM_BAD_RESPONSE") {
    return make(
      err.code,
      err.reason,
      text(
        `data-retrieval answered kn_search with something that is not a kn_search answer: ${err.text.en}`,
        `data-retrieval 对 kn_search 的回答不是 kn_search 的应答：${err.text.zh}`,
      ),
      RETRY,
    );
  }
  // data-retrieval requires the caller's account; FastAPI names the missing header.
  const identity = failure.fields.find((f) => /account/i.test(f.field));
  if (identity) {
    return make(
      "invalid_argument",
      "ACCOUNT_REQUIRED",
      text(
        `data-retrieval needs to know who is calling kn_search: the ${identity.field} header is missing or invalid`,
        `data-retrieval 需要知道是谁在调用 kn_search：请求头 ${identity.field} 缺失或无效`,
      ),
      text(
        "Call again with the x-account-id header (the user's account) and x-account-type user, app or anonymous.",
        "带上 x-account-id 请求头（用户的账号）和 x-account-type（user、app 或 anonymous）再调用。",
      ),
      [
        {
          field: identity.field.startsWith("x-") ? identity.field : "x-account-id",
          description: text("missing or invalid, data-retrieval says", "data-retrieval 说它缺失或无效"),
        },
      ],
    );
  }
  if (failure.status === 400 || failure.status === 422) {
    const fields = failure.fields.map((f) => f.field).join(", ");
    return make(
      "invalid_argument",
      "KN_SEARCH_PARAMETERS_REJECTED",
      text(
        `data-retrieval rejected the kn_search parameters${cause.en}${fields === "" ? "" : `: ${fields}`}`,
        `data-retrieval 拒绝了 kn_search 的参数${cause.zh}${fields === "" ? "" : `：${fields}`}`,
      ),
      text(
        "Correct the parameters named; leaving retrieval_config out uses the defaults.",
        "改正列出的参数；不传 retrieval_config 则使用默认值。",
      ),
      failure.fields,
    );
  }
  if (failure.status === 401 || failure.status === 403) {
    return make(
      err.code,
      err.reason,
      text(
        `data-retrieval refused this account kn_search on ${kns}${cause.en}`,
        `data-retrieval 拒绝这个账号在 ${kns} 上执行 kn_search${cause.zh}`,
      ),
      text(
        "Search knowledge networks this account may read, or call as an account that may read these.",
        "搜索这个账号可以读取的知识网络，或换一个可以读取这些网络的账号调用。",
      ),
    );
  }
  if (failure.status === 404 && /KnowledgeNetwork/i.test(failure.code)) {
    // data-retrieval's own 404 about a network: one it does not know, which native mode calls NOT_FOUND too.
    return make(
      "not_found",
      "KNOWLEDGE_NETWORK_NOT_FOUND",
      text(
        `data-retrieval found no knowledge network ${kns}${cause.en}`,
        `data-retrieval 找不到知识网络 ${kns}${cause.zh}`,
      ),
      text(
        "Check kn_ids: list the networks this account can read, then call again with one of them.",
        "检查 kn_ids：找出这个账号可以读取的知识网络，再用其中之一调用。",
      ),
      input.kn_ids.map((_, i) => ({
        field: `kn_ids[${i}].knowledge_network_id`,
        description: text("not a knowledge network data-retrieval knows", "不是 data-retrieval 知道的知识网络"),
      })),
    );
  }
  if (failure.status === 404) {
    // Any other 404 (FastAPI's bare {"detail": "Not Found"}, another service's): the route itself is missing.
    return make(
      "failed_precondition",
      "DATA_RETRIEVAL_MISCONFIGURED",
      text(
        `the service at DATA_RETRIEVAL_URL has no POST /tools/kn_search (the setting names another service or version)${cause.en}`,
        `DATA_RETRIEVAL_URL 指向的服务没有 POST /tools/kn_search（这个设置指向了别的服务或版本）${cause.zh}`,
      ),
      text(
        "Calling again will not help; the operators must correct DATA_RETRIEVAL_URL.",
        "再次调用没有用；需要运维人员改正 DATA_RETRIEVAL_URL。",
      ),
    );
  }
  if (failure.status === 429)
    return make(
      err.code,
      err.reason,
      text(
        `data-retrieval is rate limiting kn_search calls${cause.en}`,
        `data-retrieval 正在限制 kn_search 调用的频率${cause.zh}`,
      ),
      text("Wait a little, then retry.", "稍等片刻再重试。"),
    );
  return make(
    err.code,
    err.reason,
    text(
      `data-retrieval failed to run kn_search (HTTP ${failure.status})${cause.en}`,
      `data-retrieval 执行 kn_search 失败（HTTP ${failure.status}）${cause.zh}`,
    ),
    text(
      `If data-retrieval's cause names a parameter, correct it; if it names a knowledge network, kn_ids (${kns}) must name networks this account can read; otherwise retry in a moment.`,
      `如果 data-retrieval 给出的原因指向某个参数，就改正它；如果指向某个知识网络，kn_ids（${kns}）必须是这个账号可以读取的网络；否则稍后重试。`,
    ),
  );
}
