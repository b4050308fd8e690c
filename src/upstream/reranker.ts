import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { failureMessage, type PostFailure, postJson } from "./post-json";

/** Scores documents against a query with the platform's reranker service. */
export interface Reranker {
  readonly name: string;
  /** One relevance score per document, in document order. */
  rerank(ctx: CallContext, query: string, documents: string[]): Promise<number[]>;
}

const rerankSchema = z.object({
  results: z.array(z.object({ index: z.number().int().min(0), relevance_score: z.number() })),
});

/**
 * The platform's reranker: POST {query, documents, model} → {results: [{index,
 * relevance_score}]}. A document the reranker leaves out scores 0. Failures
 * are errors: the caller decides what to do, nothing falls back silently.
 */
export function httpReranker(opts: {
  url: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}): Reranker {
  return {
    name: opts.model,
    async rerank(ctx, query, documents) {
      if (documents.length === 0) return [];
      const request = {
        service: "reranker",
        url: opts.url,
        apiKey: opts.apiKey,
        timeoutMs: opts.timeoutMs,
        body: { query, documents, model: opts.model },
      };
      const posted = await postJson(ctx, request, rerankSchema);
      if (!posted.ok) throw rerankError(posted.failure);
      const scores = documents.map(() => 0);
      for (const r of posted.value.results) if (r.index < scores.length) scores[r.index] = r.relevance_score;
      return scores;
    },
  };
}

/** DEADLINE_EXCEEDED RERANKER_TIMEOUT or UNAVAILABLE RERANKER_UNAVAILABLE. */
function rerankError(failure: PostFailure): ToolError {
  return toolError(
    failure.kind === "timeout" ? "deadline_exceeded" : "unavailable",
    failureMessage(text("the reranker", "重排序（reranker）服务"), failure),
  );
}

function toolError(code: ToolError["code"], message: Text): ToolError {
  const reason = code === "deadline_exceeded" ? "RERANKER_TIMEOUT" : "RERANKER_UNAVAILABLE";
  return new ToolError({ code, reason, message, metadata: { upstream: "reranker" } });
}
