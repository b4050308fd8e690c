import type { Logger } from "pino";
import { ToolError } from "../errors/tool-error";
import { parseOrThrow } from "../errors/validation";
import type { KnowledgeNetworkBackend } from "../kn/backend";
import type { KnSearchDeps } from "../knowledge/deps";
import { knSearchInput } from "../knowledge/kn-search/input";
import { knSearch } from "../knowledge/kn-search/kn-search";
import { renderAnswer } from "../knowledge/kn-search/rest-shape";
import type { Vocabulary } from "../knowledge/matching/vocabulary";
import { DescriptionCache } from "../knowledge/relevance/descriptions";
import { KnowledgeSessions } from "../knowledge/session";
import { InProcessSessionStore } from "../store/in-process-session-store";
import { localEmbedder } from "../upstream/embeddings";
import { callContextOf, type IncomingRequest, type Reply } from "./exchange";

/** data-retrieval's route: `POST /tools/kn_search`. */
export const KN_SEARCH_PATH = "/tools/kn_search";

/**
 * data-retrieval's kn_search, answered by our native kn_search over the same
 * backend, with sessions of its own and no LLM. It answers as data-retrieval
 * does: x-account-id required (FastAPI's 422 without it), bad parameters 400
 * and failed runs 500, both with its error body
 * `{"detail": {code, description, detail: {error}, solution, link}}`.
 */
export class DataRetrievalKnSearch {
  private readonly store: InProcessSessionStore;
  private readonly deps: KnSearchDeps;

  constructor(
    backend: KnowledgeNetworkBackend,
    private readonly log: Logger,
    vocabulary: Vocabulary,
  ) {
    this.store = new InProcessSessionStore({ maxValueBytes: 1024 * 1024, maxEntries: 100_000, log });
    this.deps = {
      backend,
      sessions: new KnowledgeSessions({ memory: this.store, redis: undefined }),
      embedder: localEmbedder,
      descriptions: new DescriptionCache(localEmbedder),
      reranker: undefined,
      llm: undefined,
      dataRetrieval: undefined,
      aliasRelations: [],
      vocabulary,
    };
  }

  /** The answer to one request; undefined when the client left before it was ready. */
  async answer(request: IncomingRequest, signal: AbortSignal): Promise<Reply | undefined> {
    try {
      const ctx = callContextOf(request, this.log, signal);
      if (ctx.caller.accountId === "") {
        const missing = { type: "missing", loc: ["header", "x-account-id"], msg: "Field required", input: null };
        return { status: 422, body: { detail: [missing] } };
      }
      return {
        status: 200,
        body: renderAnswer(await knSearch(this.deps, ctx, parseOrThrow(knSearchInput, request.body))),
      };
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!(err instanceof ToolError)) this.log.error({ err }, "kn_search failed");
      return failure(err);
    }
  }

  /** Drops the sessions. */
  close(): Promise<void> {
    return this.store.close();
  }
}

function failure(err: unknown): Reply {
  const param = err instanceof ToolError && err.code === "invalid_argument";
  const missing = err instanceof ToolError && err.code === "not_found";
  return {
    status: param ? 400 : missing ? 404 : 500,
    body: {
      detail: {
        code: param
          ? "KnowledgeNetworkParamError"
          : missing
            ? "KnowledgeNetworkNotFound"
            : "KnowledgeNetworkRetrievalError",
        description: param ? "参数验证失败" : missing ? "知识网络不存在" : "知识网络检索执行失败",
        detail: { error: err instanceof ToolError ? err.message : "internal error" },
        solution: param ? "请检查输入参数是否符合API要求" : missing ? "请检查 kn_ids" : "请稍后重试或联系技术支持",
        link: "",
      },
    },
  };
}
