import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { type Text, text } from "../errors/text";
import { ToolError } from "../errors/tool-error";
import { embedLocally, LOCAL_EMBEDDER_NAME, normalizeInPlace } from "./local-embedder";
import { failureMessage, type PostFailure, postJson } from "./post-json";

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
export function openAiEmbedder(opts: {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}): Embedder {
  return {
    name: opts.model,
    async embed(ctx, texts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += BATCH) {
        const batch = texts.slice(i, i + BATCH);
        const request = {
          service: "embeddings",
          url: `${opts.baseUrl}/embeddings`,
          apiKey: opts.apiKey,
          timeoutMs: opts.timeoutMs,
        };
        const posted = await postJson(ctx, { ...request, body: { model: opts.model, input: batch } }, embeddingsSchema);
        if (!posted.ok) throw embeddingsError(posted.failure);
        if (posted.value.data.length !== batch.length) {
          throw toolError(
            "unavailable",
            text(
              `the embeddings endpoint returned ${posted.value.data.length} vectors for ${batch.length} inputs`,
              `向量化（embeddings）端点为 ${batch.length} 条输入返回了 ${posted.value.data.length} 个向量`,
            ),
          );
        }
        for (const item of [...posted.value.data].sort((a, b) => a.index - b.index))
          out.push(normalise(item.embedding));
      }
      return out;
    },
  };
}

function normalise(v: number[]): Float32Array {
  return normalizeInPlace(Float32Array.from(v));
}

/** DEADLINE_EXCEEDED EMBEDDINGS_TIMEOUT or UNAVAILABLE EMBEDDINGS_UNAVAILABLE. */
function embeddingsError(failure: PostFailure): ToolError {
  return toolError(
    failure.kind === "timeout" ? "deadline_exceeded" : "unavailable",
    failureMessage(text("the embeddings endpoint", "向量化（embeddings）端点"), failure),
  );
}

function toolError(code: ToolError["code"], message: Text): ToolError {
  const reason = code === "deadline_exceeded" ? "EMBEDDINGS_TIMEOUT" : "EMBEDDINGS_UNAVAILABLE";
  return new ToolError({ code, reason, message, metadata: { upstream: "embeddings" } });
}
