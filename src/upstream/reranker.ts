import { z } from "zod";
import { ToolError } from "../errors/tool-error";
import type { CallContext } from "../core/call-context";

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
export function httpReranker(opts: { url: string; model: string; apiKey: string | undefined; timeoutMs: number }): Reranker {
  return {
    name: opts.model,
    async rerank(ctx, query, documents) {
      if (documents.length === 0) return [];
      const timeout = AbortSignal.timeout(Math.max(1, Math.min(opts.timeoutMs, ctx.remainingMs() ?? Infinity)));
      let res: Response;
      try {
        res = await fetch(opts.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
          body: JSON.stringify({ query, documents, model: opts.model }),
          signal: AbortSignal.any([ctx.signal, timeout]),
        });
      } catch (err) {
        ctx.signal.throwIfAborted();
        throw rerankError(timeout.aborted ? "deadline_exceeded" : "unavailable", timeout.aborted ? "the reranker timed out" : `the reranker cannot be reached: ${(err as Error).message}`);
      }
      const text = await res.text();
      if (!res.ok) throw rerankError("unavailable", `the reranker answered HTTP ${res.status}: ${text.slice(0, 200)}`);
      let parsed: z.output<typeof rerankSchema>;
      try {
        parsed = rerankSchema.parse(JSON.parse(text));
      } catch (err) {
        throw rerankError("unavailable", `the reranker answered with an unexpected body: ${(err as Error).message}`);
      }
      const scores = documents.map(() => 0);
      for (const r of parsed.results) if (r.index < scores.length) scores[r.index] = r.relevance_score;
      return scores;
    },
  };
}

function rerankError(code: ToolError["code"], message: string): ToolError {
  return new ToolError({ code, reason: code === "deadline_exceeded" ? "RERANKER_TIMEOUT" : "RERANKER_UNAVAILABLE", message, metadata: { upstream: "reranker" } });
}
