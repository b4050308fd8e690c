import { z } from "zod";
import { ToolError } from "../errors/tool-error";
import type { CallContext } from "../core/call-context";
import { LOCAL_EMBEDDER_NAME, embedLocally, normalizeInPlace } from "./local-embedder";

/** Turns texts into L2-normalised vectors; cosine similarity is then a dot product. */
export interface Embedder {
  /** "local-lexical", or the model of the configured endpoint. */
  readonly name: string;
  embed(ctx: CallContext, texts: string[]): Promise<Float32Array[]>;
}

/** The local lexical embedder (hashed character n-grams and jieba tokens), used when no endpoint is configured. */
export const localEmbedder: Embedder = {
  name: LOCAL_EMBEDDER_NAME,
  async embed(ctx, texts) {
    ctx.signal.throwIfAborted();
    return texts.map(embedLocally);
  },
};

const embeddingsSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.number()) })),
});

/** Inputs per request to the endpoint. */
const BATCH = 64;

/**
 * A client of any OpenAI-compatible `/embeddings` endpoint. Texts go in
 * batches; vectors come back normalised, in input order. Failures are
 * UNAVAILABLE (or DEADLINE_EXCEEDED), never empty vectors.
 */
export function openAiEmbedder(opts: { baseUrl: string; apiKey: string | undefined; model: string; timeoutMs: number }): Embedder {
  return {
    name: opts.model,
    async embed(ctx, texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        const batch = texts.slice(i, i + BATCH);
        const timeout = AbortSignal.timeout(Math.max(1, Math.min(opts.timeoutMs, ctx.remainingMs() ?? Infinity)));
        let res: Response;
        try {
          res = await fetch(`${opts.baseUrl}/embeddings`, {
            method: "POST",
            headers: { "content-type": "application/json", ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
            body: JSON.stringify({ model: opts.model, input: batch }),
            signal: AbortSignal.any([ctx.signal, timeout]),
          });
        } catch (err) {
          ctx.signal.throwIfAborted();
          throw embeddingsError(timeout.aborted ? "deadline_exceeded" : "unavailable", timeout.aborted ? "the embeddings endpoint timed out" : `the embeddings endpoint cannot be reached: ${(err as Error).message}`);
        }
        const text = await res.text();
        if (!res.ok) throw embeddingsError("unavailable", `the embeddings endpoint answered HTTP ${res.status}: ${text.slice(0, 200)}`);
        let parsed: z.output<typeof embeddingsSchema>;
        try {
          parsed = embeddingsSchema.parse(JSON.parse(text));
        } catch (err) {
          throw embeddingsError("unavailable", `the embeddings endpoint answered with an unexpected body: ${(err as Error).message}`);
        }
        if (parsed.data.length !== batch.length) {
          throw embeddingsError("unavailable", `the embeddings endpoint returned ${parsed.data.length} vectors for ${batch.length} inputs`);
        }
        for (const item of [...parsed.data].sort((a, b) => a.index - b.index)) out.push(normalise(item.embedding));
      }
      return out;
    },
  };
}

function normalise(v: number[]): Float32Array {
  return normalizeInPlace(Float32Array.from(v));
}

function embeddingsError(code: ToolError["code"], message: string): ToolError {
  return new ToolError({ code, reason: code === "deadline_exceeded" ? "EMBEDDINGS_TIMEOUT" : "EMBEDDINGS_UNAVAILABLE", message, metadata: { upstream: "embeddings" } });
}
