import { createHash } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The grid every stand-in measurement runs (tests and `npm run bench -- standin`):
 * noise levels, most first (two texts of one memory at cosines of about 0.06,
 * 0.2 and 0.5 before the range), and the cosine of unrelated texts as
 * text-embedding-3-small (0.15) and the e5 family (0.7) put it.
 */
export const STANDIN_GRID = { noise: [4, 2, 1], bases: [0.15, 0.7], dim: 256, seed: 34 } as const;

/** The part of a labelled memory-search set (bench/memrecall-*.json) the stand-in reads. */
export interface LabelledSet {
  memories: readonly { memory_key: string; summary: string; content: string }[];
  queries: readonly { query: string; relevant: readonly string[] }[];
}

export interface StandinOptions {
  /** The labelled set whose memories give the meanings. */
  set: LabelledSet;
  /**
   * Noise beside each text's meaning, as a ratio of lengths: 0 puts every text
   * of a memory on its meaning; σ puts two texts of one memory at a cosine of
   * about 1/(1+σ²) before the range is applied, so queries start to lean to a
   * wrong memory where that falls to the chance cosines of unrelated ones
   * (about 2.5/√dim for the best of a hundred).
   */
  noise: number;
  /** The cosine of two unrelated texts (0.15 as text-embedding-3-small, 0.7 as the e5 family); 0 ≤ base < 1. */
  base: number;
  /** Vector size, default 256. */
  dim?: number;
  /** Seeds the meanings, the common direction and the noise; default 1. */
  seed?: number;
  /** The model name answers carry, default "standin". */
  model?: string;
  /**
   * Meanings for texts the set does not hold (a probe set's paraphrase pairs,
   * a conversation's turns): the names of the meanings a text is about, or
   * undefined for none. A name the set does not hold gets its own random
   * direction, the same for every text naming it; a set's memory_key names
   * that memory's meaning. Asked only after the set's own labels.
   */
  meaningOf?: (text: string) => readonly string[] | undefined;
}

/** Which memory's meaning a text was given, or undefined for a text the set does not hold. */
export type Label =
  | { kind: "memory"; key: string }
  | { kind: "query"; keys: readonly string[] }
  | { kind: "given"; keys: readonly string[] }
  | undefined;

/**
 * A stand-in embeddings model: an OpenAI-compatible `/v1/embeddings` server
 * on loopback whose vectors come from a labelled set instead of a model of
 * meaning, so that tests and benches can measure how the service *uses* a
 * model with known quality and a known cosine range.
 *
 * Each memory of the set gets a random unit direction, its "meaning". A
 * text's vector is the meaning of the memory it is labelled with — a memory's
 * stored text (`summary\ncontent`, as StoreMemory embeds it, or a cut of it)
 * its own, a query's the mean of its relevant memories' — plus Gaussian noise
 * of level `noise` drawn from the text itself (the same text always gets the
 * same vector). A text the set does not hold (an unrelated query, anything
 * else) gets a direction from its hash. That `specific` direction, kept
 * orthogonal to one `common` direction shared by all texts, is mapped into
 * the cosine range: v = √base·common + √(1−base)·specific, so that
 * cos(v₁, v₂) = base + (1 − base)·cos(specific₁, specific₂) exactly: unrelated
 * texts sit near `base`, and two `base` values with one seed give the same
 * ranking.
 */
export async function startStandinEmbeddings(opts: StandinOptions) {
  const model = new StandinModel(opts);
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "POST" || (path !== "/v1/embeddings" && path !== "/embeddings")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
      return;
    }
    let body: { input?: unknown; model?: unknown };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"body is not JSON"}}');
      return;
    }
    const input = typeof body.input === "string" ? [body.input] : body.input;
    if (!Array.isArray(input) || !input.every((t) => typeof t === "string")) {
      res
        .writeHead(400, { "content-type": "application/json" })
        .end('{"error":{"message":"input must be a string or an array of strings"}}');
      return;
    }
    const data = (input as string[]).map((text, index) => ({
      object: "embedding",
      index,
      embedding: Array.from(model.embed(text), (x) => Math.round(x * 1e7) / 1e7),
    }));
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ object: "list", data, model: opts.model ?? "standin", usage: { prompt_tokens: 0 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    /** For EMBEDDINGS_BASE_URL. */
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    model,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type StandinEmbeddings = Awaited<ReturnType<typeof startStandinEmbeddings>>;

/** The stand-in's vectors, without the server (for checking its geometry). */
export class StandinModel {
  readonly dim: number;
  /** Every text embedded so far, with its label (undefined: not in the set). */
  readonly seen = new Map<string, Label>();
  private readonly noise: number;
  private readonly base: number;
  private readonly seed: number;
  private readonly common: Float64Array;
  private readonly meanings = new Map<string, Float64Array>();
  private readonly memoryTexts: { key: string; text: string }[];
  private readonly queries = new Map<string, readonly string[]>();
  private readonly meaningOf: StandinOptions["meaningOf"];

  constructor(opts: StandinOptions) {
    if (!(opts.base >= 0 && opts.base < 1)) throw new Error(`base must be in [0, 1), not ${opts.base}`);
    if (!(opts.noise >= 0)) throw new Error(`noise must be ≥ 0, not ${opts.noise}`);
    this.dim = opts.dim ?? 256;
    this.noise = opts.noise;
    this.base = opts.base;
    this.seed = opts.seed ?? 1;
    this.meaningOf = opts.meaningOf;
    this.common = unit(gaussian(random(this.seed, "common"), this.dim));
    for (const m of opts.set.memories) {
      this.meanings.set(
        m.memory_key,
        this.orthogonal(gaussian(random(this.seed, `meaning:${m.memory_key}`), this.dim)),
      );
    }
    this.memoryTexts = opts.set.memories.map((m) => ({ key: m.memory_key, text: `${m.summary}\n${m.content}` }));
    for (const q of opts.set.queries) {
      const keys = q.relevant.filter((k) => this.meanings.has(k));
      if (keys.length > 0) this.queries.set(q.query.trim(), keys);
    }
  }

  /** What the stand-in takes `text` to be. */
  label(text: string): Label {
    const keys = this.queries.get(text.trim());
    if (keys) return { kind: "query", keys };
    // A memory as StoreMemory embeds it, `summary\ncontent`, whole or cut at its end.
    const memory = this.memoryTexts.find((m) => m.text === text || (text.length >= 16 && m.text.startsWith(text)));
    if (memory) return { kind: "memory", key: memory.key };
    const given = this.meaningOf?.(text);
    return given && given.length > 0 ? { kind: "given", keys: given } : undefined;
  }

  /** The unit vector of a text. */
  embed(text: string): Float64Array {
    const label = this.label(text);
    this.seen.set(text, label);
    let meaning: Float64Array;
    if (label === undefined) meaning = this.orthogonal(gaussian(random(this.seed, `text:${text}`), this.dim));
    else {
      const keys = label.kind === "memory" ? [label.key] : label.keys;
      meaning = new Float64Array(this.dim);
      for (const k of keys) add(meaning, this.meaning(k), 1);
      meaning = unit(meaning);
    }
    // Noise of length about `noise` (components N(0, 1/dim)), drawn from the text: one text, one vector.
    const noise = gaussian(random(this.seed, `noise:${text}`), this.dim);
    const specific = new Float64Array(meaning);
    add(specific, noise, this.noise / Math.sqrt(this.dim));
    const direction = this.orthogonal(specific);
    const v = new Float64Array(this.dim);
    add(v, this.common, Math.sqrt(this.base));
    add(v, direction, Math.sqrt(1 - this.base));
    return v;
  }

  /** The direction of meaning `key`: a set memory's, else one of its own, made on first use. */
  private meaning(key: string): Float64Array {
    let m = this.meanings.get(key);
    if (m === undefined) {
      m = this.orthogonal(gaussian(random(this.seed, `meaning:${key}`), this.dim));
      this.meanings.set(key, m);
    }
    return m;
  }

  /** `v` without its component along `common`, at unit length. */
  private orthogonal(v: Float64Array): Float64Array {
    add(v, this.common, -dot(v, this.common));
    return unit(v);
  }
}

/** Cosine of two vectors. */
export function cosineOf(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return ab / Math.sqrt(aa * bb);
}

/** A generator of uniform numbers in [0, 1) seeded by (seed, name): sfc32 over the name's SHA-256. */
function random(seed: number, name: string): () => number {
  const h = createHash("sha256").update(`${seed}\u0000${name}`).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  return () => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** `n` standard normal numbers (Box–Muller). */
function gaussian(next: () => number, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - next()));
    const theta = 2 * Math.PI * next();
    out[i] = r * Math.cos(theta);
    if (i + 1 < n) out[i + 1] = r * Math.sin(theta);
  }
  return out;
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** a += k·b */
function add(a: Float64Array, b: Float64Array, k: number): void {
  for (let i = 0; i < a.length; i++) a[i]! += k * b[i]!;
}

function unit(v: Float64Array): Float64Array {
  const n = Math.sqrt(dot(v, v));
  for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}
