import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { z } from "zod";
import type { CallContext } from "../core/call-context";
import { newTraceId } from "../core/ids";
import type { Embedder } from "../upstream/embeddings";
import type { Glossary } from "./glossary";
import { type SemanticScale, scaleFromSlope } from "./relevance";
import { keywordQueryOf, keywordShare, searchTextOf } from "./search-text";

/** The log line of a start-up whose embedder has a learned scale. */
const CALIBRATED = "memory search calibrated for the model";
/** Pairs of each kind below which the figures would not be stable. */
const MIN_PAIRS = 20;

const probeFile = z.object({
  about: z.string(),
  version: z.number().int().positive(),
  pairs: z
    .array(
      z.object({
        language: z.enum(["en", "zh", "cross"]),
        kind: z.enum(["paraphrase", "unrelated"]),
        /** As StoreMemory embeds a memory: its summary, a newline, its content. */
        memory: z.string().includes("\n"),
        query: z.string().min(1),
      }),
    )
    .refine(
      (pairs) => ["paraphrase", "unrelated"].every((k) => pairs.filter((p) => p.kind === k).length >= MIN_PAIRS),
      `the probe needs at least ${MIN_PAIRS} pairs of each kind`,
    ),
});

export type ProbePair = z.output<typeof probeFile>["pairs"][number];

/** The calibration probe (data/memrecall/probe.json), and the digest that names its content. */
export interface ProbeSet {
  version: number;
  /** SHA-256 of the file, first 12 hex digits: a calibration is of a model and of this content. */
  digest: string;
  pairs: ProbePair[];
}

export function loadProbe(path: string): ProbeSet {
  const raw = readFileSync(path);
  const parsed = probeFile.parse(JSON.parse(raw.toString("utf8")));
  return {
    version: parsed.version,
    digest: createHash("sha256").update(raw).digest("hex").slice(0, 12),
    pairs: parsed.pairs,
  };
}

/** One probe pair as a model saw it: its cosine, and the share of the query's word weight the memory holds. */
export interface ProbeMeasure {
  kind: ProbePair["kind"];
  cosine: number;
  share: number;
}

/** What the probe measured of a model, and the scale it sets. */
export interface Learned {
  scale: SemanticScale;
  /** Medians and the 95th percentile of unrelated pairs' cosines, for the log line. */
  paraphraseMedian: number;
  unrelatedMedian: number;
  unrelatedP95: number;
  /** How far apart the two kinds' cosines are, in their standard deviation (d′). */
  separation: number;
}

/**
 * A model's semantic scale from the probe's cosines, by linear discriminant
 * analysis: the two kinds' cosines as normal distributions of one variance, so
 * the log of their likelihood ratio is linear in the cosine, b·(c − floor),
 * with b = (mean of paraphrases − mean of unrelated) / variance and the floor
 * half way between the means. A noisy model's kinds overlap, b is small and
 * its cosines move relevance little; a sharp model's are far apart and they
 * decide. Only the cosines' order and spacing matter: a model whose unrelated
 * texts sit at 0.7 (e5) gets the same scale, shifted, as one whose sit at 0.15.
 *
 * The weight is how much of that evidence the words do not already give:
 * within each kind, what the keyword share predicts of the cosine (its
 * regression on the share) is taken out, the slope is measured again on what
 * is left, and the weight is that slope over the first one, at most 1 (the
 * local lexical embedder's cosine is mostly the words again: 0.26, and its
 * fusion uses a weight fitted on rankings instead, LEXICAL_FUSION_WEIGHT; the
 * stand-in model's, whose noise has nothing to do with words, 0.95 to 0.99).
 * Hybrid search adds the weighted evidence to the keyword evidence, so the
 * same words are not counted twice.
 */
export function learnScale(measures: readonly ProbeMeasure[]): Learned {
  const of = (kind: ProbePair["kind"]) => measures.filter((m) => m.kind === kind);
  const paraphrase = of("paraphrase");
  const unrelated = of("unrelated");
  const cosines = (ms: readonly ProbeMeasure[]) => ms.map((m) => m.cosine);
  const slope = discriminant(cosines(paraphrase), cosines(unrelated));
  // The cosine without what the keyword share predicts of it, within each kind.
  const beta =
    (covariance(paraphrase) + covariance(unrelated)) /
    (variance(paraphrase.map((m) => m.share)) + variance(unrelated.map((m) => m.share)));
  const residual = (ms: readonly ProbeMeasure[]) => ms.map((m) => m.cosine - beta * m.share);
  const beyondWords = discriminant(residual(paraphrase), residual(unrelated));
  const weight = slope.b > 0 ? Math.min(1, Math.max(0, beyondWords.b / slope.b)) : 0;
  return {
    scale: scaleFromSlope(slope.mid, slope.b, weight),
    paraphraseMedian: quantile(cosines(paraphrase), 0.5),
    unrelatedMedian: quantile(cosines(unrelated), 0.5),
    unrelatedP95: quantile(cosines(unrelated), 0.95),
    separation: slope.separation,
  };
}

/** Linear discriminant of two samples: the slope of the log likelihood ratio, the midpoint of the means, and d′. */
function discriminant(positive: number[], negative: number[]): { b: number; mid: number; separation: number } {
  const pooled = (variance(positive) + variance(negative)) / 2;
  const gap = mean(positive) - mean(negative);
  return { b: gap / pooled, mid: (mean(positive) + mean(negative)) / 2, separation: gap / Math.sqrt(pooled) };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((s, x) => s + x, 0) / xs.length;
}

function variance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

/** Covariance of cosine and share within one kind. */
function covariance(ms: readonly ProbeMeasure[]): number {
  const c = mean(ms.map((m) => m.cosine));
  const s = mean(ms.map((m) => m.share));
  return ms.reduce((sum, m) => sum + (m.cosine - c) * (m.share - s), 0) / (ms.length - 1);
}

function quantile(xs: readonly number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/**
 * The probe as `embedder` sees it: every pair's cosine (one embeddings call
 * over the distinct texts, in the embedder's batches) and its keyword share,
 * the share computed as search computes it, from the memory's words and the
 * glossary. The call follows `ctx`'s deadline.
 */
export async function measureProbe(
  ctx: CallContext,
  embedder: Embedder,
  glossary: Glossary,
  probe: ProbeSet,
): Promise<ProbeMeasure[]> {
  const texts = [...new Set(probe.pairs.flatMap((p) => [p.memory, p.query]))];
  const vectors = await embedder.embed(ctx, texts);
  const vectorOf = new Map(texts.map((t, i) => [t, vectors[i]!]));
  return probe.pairs.map((p) => {
    const [summary, ...content] = p.memory.split("\n");
    const held = new Set(searchTextOf([summary!, content.join("\n")], glossary).split(" "));
    return {
      kind: p.kind,
      cosine: dot(vectorOf.get(p.query)!, vectorOf.get(p.memory)!),
      share: keywordShare(keywordQueryOf(p.query, "", glossary).query, (t) => held.has(t)),
    };
  });
}

/** Embedders return unit vectors: their dot product is the cosine. */
function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * Scales learned in this process, by model (its endpoint and name), glossary
 * and probe digest, with what their log line says. A model answers the same
 * texts the same way, so a service built again in one process (tests build
 * hundreds) measures it once, and each start still logs the scale it uses; a
 * failed probe is not kept, the next start tries again.
 */
const learnedInProcess = new Map<string, { scale: SemanticScale; logged: Record<string, unknown> }>();

export interface CalibrationTarget {
  embedder: Embedder;
  /** Where the embedder's vectors come from: the endpoint's URL, or "local". */
  source: string;
  glossary: Glossary;
  /** The glossary files, part of what the local embedder's vectors and the keyword shares depend on. */
  glossaryPaths: readonly string[];
  probePath: string;
  timeoutMs: number;
  /**
   * A fusion weight fitted ahead, in place of the probe's: the local
   * embedder's, fitted on the development sets' rankings (lexical-embedder.ts).
   */
  fusionWeight?: number;
}

/**
 * The embedder's semantic scale learned from the probe within `timeoutMs`
 * (once per model in the process), logged at each start; or, when the probe fails
 * (the endpoint down or refusing, an unusable answer, the time up, the probe
 * file unreadable), one warning and undefined: the caller keeps the fixed
 * range and the service stays up.
 */
export async function calibrate(log: Logger, target: CalibrationTarget): Promise<SemanticScale | undefined> {
  const started = performance.now();
  const about: Record<string, unknown> = { model: target.embedder.name };
  try {
    const probe = loadProbe(target.probePath);
    Object.assign(about, { probe_version: probe.version, probe_digest: probe.digest });
    const key = [target.source, target.embedder.name, target.glossaryPaths.join(","), probe.digest].join("\u0000");
    const known = learnedInProcess.get(key);
    if (known) {
      log.info({ ...known.logged, measured_earlier: true, ms: Math.round(performance.now() - started) }, CALIBRATED);
      return known.scale;
    }
    const learned = learnScale(
      await measureProbe(probeContext(log, target.timeoutMs), target.embedder, target.glossary, probe),
    );
    const scale = { ...learned.scale, weight: target.fusionWeight ?? learned.scale.weight };
    const round = (x: number) => Math.round(x * 1000) / 1000;
    const logged = {
      ...about,
      semantic_floor: round(learned.scale.floor),
      semantic_ceiling: round(learned.scale.ceiling),
      semantic_weight: round(scale.weight),
      ...(target.fusionWeight === undefined ? {} : { probe_weight: round(learned.scale.weight) }),
      paraphrase_median: round(learned.paraphraseMedian),
      unrelated_median: round(learned.unrelatedMedian),
      unrelated_p95: round(learned.unrelatedP95),
      separation: round(learned.separation),
    };
    learnedInProcess.set(key, { scale, logged });
    log.info({ ...logged, ms: Math.round(performance.now() - started) }, CALIBRATED);
    return scale;
  } catch (err) {
    log.warn(
      { ...about, err, ms: Math.round(performance.now() - started) },
      "memory search not calibrated: the probe failed, semantic relevance uses the fixed range",
    );
    return undefined;
  }
}

/** The probe's own calls: no caller, English words in the log, one deadline for all of them. */
function probeContext(log: Logger, timeoutMs: number): CallContext {
  const deadline = Date.now() + timeoutMs;
  return {
    caller: { accountId: "", accountType: "app" },
    traceId: newTraceId(),
    language: "en",
    log,
    signal: AbortSignal.timeout(timeoutMs),
    remainingMs: () => Math.max(0, deadline - Date.now()),
  };
}
