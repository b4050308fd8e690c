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

// Components are checked by `vectorsOf`, not here: it can say which vector is wrong and how (a
// string, null, `1e999` that JSON reads as Infinity), where a failed schema only says "cannot read".
const embeddingsSchema = z.object({
  data: z.array(z.object({ index: z.number().int(), embedding: z.array(z.unknown()) })),
});

/** Inputs per request to the endpoint. */
const BATCH = 64;

/**
 * A client of any OpenAI-compatible `/embeddings` endpoint. Texts go in
 * batches; vectors come back normalised, in input order. Failures are
 * UNAVAILABLE (or DEADLINE_EXCEEDED), never empty vectors. An answer that
 * cannot be used as it is — a vector missing, doubled or out of place, of
 * another size than the model's others (in this answer or any earlier one),
 * holding anything but finite numbers, or of length zero — is UNAVAILABLE
 * EMBEDDINGS_UNAVAILABLE saying which: a vector repaired or skipped here would
 * silently rank memories wrong.
 */
export function openAiEmbedder(opts: {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
}): Embedder {
  // The size of this model's vectors, from its first usable answer.
  let dimensions: number | undefined;
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
        const vectors = vectorsOf(posted.value.data, batch.length, opts.model, dimensions);
        if (!Array.isArray(vectors)) {
          ctx.log.warn({ model: opts.model, problem: vectors.en }, "embeddings answer refused");
          throw toolError("unavailable", vectors);
        }
        dimensions ??= vectors[0]?.length;
        out.push(...vectors);
      }
      return out;
    },
  };
}

const ENDPOINT = text("the embeddings endpoint", "向量化（embeddings）端点");

/**
 * The answer's vectors in input order, normalised; or what is wrong with it.
 * `dimensions` is the size the model's vectors had in earlier answers, when
 * there were any: one model's vectors are one size, or cosines mean nothing.
 */
function vectorsOf(
  data: { index: number; embedding: unknown[] }[],
  inputs: number,
  model: string,
  dimensions: number | undefined,
): Float32Array[] | Text {
  if (data.length !== inputs) {
    return text(
      `${ENDPOINT.en} returned ${data.length} vectors for ${inputs} inputs`,
      `${ENDPOINT.zh}为 ${inputs} 条输入返回了 ${data.length} 个向量`,
    );
  }
  const byIndex: (unknown[] | undefined)[] = new Array(inputs).fill(undefined);
  for (const { index, embedding } of data) {
    if (index < 0 || index >= inputs) {
      return text(
        `${ENDPOINT.en} returned a vector with index ${index} for ${inputs} inputs (indexes 0 to ${inputs - 1})`,
        `${ENDPOINT.zh}为 ${inputs} 条输入返回了序号为 ${index} 的向量（序号应为 0 到 ${inputs - 1}）`,
      );
    }
    if (byIndex[index] !== undefined) {
      return text(
        `${ENDPOINT.en} returned two vectors with index ${index}, so another input has none`,
        `${ENDPOINT.zh}返回了两个序号为 ${index} 的向量，另有一条输入没有向量`,
      );
    }
    byIndex[index] = embedding;
  }
  const expected = dimensions ?? byIndex[0]!.length;
  const out: Float32Array[] = [];
  for (const [index, embedding] of (byIndex as unknown[][]).entries()) {
    if (embedding.length !== expected) {
      const before = dimensions !== undefined;
      return text(
        `${ENDPOINT.en} returned a vector of ${embedding.length} dimensions for input ${index} where ` +
          (before ? `it returned ${expected} before for model ${model}` : `the answer's first vector has ${expected}`),
        `${ENDPOINT.zh}为第 ${index} 条输入返回了 ${embedding.length} 维向量，而` +
          (before ? `此前模型 ${model} 的向量为 ${expected} 维` : `同一返回中第一个向量为 ${expected} 维`),
      );
    }
    const bad = embedding.findIndex((x) => typeof x !== "number" || !Number.isFinite(x));
    if (bad >= 0) {
      const value = embedding[bad];
      const what = typeof value === "number" ? String(value) : value === null ? "null" : `a ${typeof value}`;
      return text(
        `${ENDPOINT.en} returned a vector for input ${index} whose component ${bad} is ${what}, not a finite number`,
        `${ENDPOINT.zh}为第 ${index} 条输入返回的向量中，第 ${bad} 个分量是 ${what}，不是有限数值`,
      );
    }
    const vector = normalise(embedding as number[]);
    if (vector === undefined) {
      return text(
        embedding.length === 0
          ? `${ENDPOINT.en} returned an empty vector for input ${index}`
          : `${ENDPOINT.en} returned a zero vector for input ${index}, which has no direction to compare`,
        embedding.length === 0
          ? `${ENDPOINT.zh}为第 ${index} 条输入返回了空向量`
          : `${ENDPOINT.zh}为第 ${index} 条输入返回了零向量，无法比较方向`,
      );
    }
    out.push(vector);
  }
  return out;
}

/**
 * The vector scaled to length 1, or undefined for a zero (or empty) vector.
 * Scaled by its largest component first: a finite double too large for a
 * float (1e300) or too small to square (1e-200) still gives its direction.
 */
function normalise(v: number[]): Float32Array | undefined {
  let largest = 0;
  for (const x of v) largest = Math.max(largest, Math.abs(x));
  if (largest === 0) return undefined;
  return normalizeInPlace(Float32Array.from(v, (x) => x / largest));
}

/** DEADLINE_EXCEEDED EMBEDDINGS_TIMEOUT or UNAVAILABLE EMBEDDINGS_UNAVAILABLE. */
function embeddingsError(failure: PostFailure): ToolError {
  return toolError(failure.kind === "timeout" ? "deadline_exceeded" : "unavailable", failureMessage(ENDPOINT, failure));
}

function toolError(code: ToolError["code"], message: Text): ToolError {
  const reason = code === "deadline_exceeded" ? "EMBEDDINGS_TIMEOUT" : "EMBEDDINGS_UNAVAILABLE";
  return new ToolError({ code, reason, message, metadata: { upstream: "embeddings" } });
}
