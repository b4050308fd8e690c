import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import type { Json } from "../../core/json";
import { round3 } from "../../core/scores";
import { llmNotConfigured } from "../../errors/common";
import { text } from "../../errors/text";
import type { RerankDeps } from "../deps";
import { rankWithLlm, rankWithoutLlm } from "../relevance/rank";
import type { RerankConceptsInput } from "./input";

/** Batches asked of the LLM at once. */
const LLM_CONCURRENCY = 4;
/** Data properties per concept shown to the LLM or embedded: enough to tell concepts apart, short enough for big batches. */
const PROPERTIES_SHOWN = 12;
/** Vector mode keeps concepts at least this share of the best one's score, and above the minimum. */
const VECTOR_RELATIVE_CUT = 0.5;
const VECTOR_MIN_SCORE = 0.1;

type InputConcept = RerankConceptsInput["concepts"][number];

export interface RankedConcept extends InputConcept {
  /** 0..1, higher is more relevant. */
  score: number;
  /** From 1. */
  rank: number;
}

export interface RerankResult {
  reranked_concepts: RankedConcept[];
  filtered_count: number;
}

/**
 * knowledge_rerank (data-retrieval-tools §7.2): orders the concepts by
 * relevance to the question and drops the unrelated ones.
 *
 * - `llm`: the concepts go to the LLM in batches of `batch_size` (in parallel,
 *   4 at a time), each as a numbered list; the LLM names the relevant numbers,
 *   most relevant first, and an unusable answer gets one repair round. Within a
 *   batch of n chosen, the k-th (from 0) scores (n − k) / n: the spec's example
 *   gives 1.0 and 0.5 for two.
 * - `vector`: no LLM — the concepts ranked as schema recall ranks without one:
 *   embeddings cosine of the question (with the intents) and of each concept's
 *   name, comment and properties, combined with the question's words found in
 *   the concept and its name said verbatim. A concept is kept when it scores
 *   at least 0.1 and at least half the best.
 */
export async function rerankConcepts(
  deps: RerankDeps,
  ctx: CallContext,
  input: RerankConceptsInput,
): Promise<RerankResult> {
  const started = performance.now();
  const scored = input.action === "llm" ? await byLlm(deps, ctx, input) : await byVector(deps, ctx, input);
  const kept = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .map((s, i): RankedConcept => ({ ...input.concepts[s.index]!, score: s.score, rank: i + 1 }));
  ctx.log.info(
    {
      action: input.action,
      concepts: input.concepts.length,
      kept: kept.length,
      session_id: input.session_id || undefined,
      ms: Math.round(performance.now() - started),
    },
    "concepts reranked",
  );
  return { reranked_concepts: kept, filtered_count: kept.length };
}

interface Scored {
  index: number;
  score: number;
}

function questionOf(input: RerankConceptsInput): { question: string; context: string } {
  const q = input.query_understanding;
  const intents = q.intent
    .map((it) => {
      const related = it.related_concepts
        .map((c) => (typeof c["concept_name"] === "string" ? c["concept_name"] : ""))
        .filter((n) => n !== "");
      return [it.query_segment, it.reasoning, related.length > 0 ? `相关概念: ${related.join(", ")}` : ""]
        .filter((s) => s !== "")
        .join("；");
    })
    .filter((s) => s !== "");
  const question =
    q.processed_query === q.origin_query ? q.origin_query : `${q.processed_query}（原问题：${q.origin_query}）`;
  return { question, context: intents.length > 0 ? `意图：\n${intents.map((s) => `- ${s}`).join("\n")}` : "" };
}

/** The comment and the first property names of a concept's detail. */
function detailWords(c: InputConcept): string[] {
  const detail = c.concept_detail;
  const comment = typeof detail["comment"] === "string" ? detail["comment"] : "";
  return [comment, ...propertyNames(c)].filter((w) => w !== "");
}

function propertyNames(c: InputConcept): string[] {
  const props = Array.isArray(c.concept_detail["data_properties"])
    ? (c.concept_detail["data_properties"] as Json[])
    : [];
  return props
    .slice(0, PROPERTIES_SHOWN)
    .map((p) =>
      p !== null && typeof p === "object" && !Array.isArray(p)
        ? [p["display_name"], p["name"], p["comment"]].find((v) => typeof v === "string" && v !== "")
        : undefined,
    )
    .filter((n): n is string => typeof n === "string");
}

/** One line per concept for the LLM: type, name, id, ends of a relation, comment and the first properties. */
function describe(c: InputConcept): string {
  const detail = c.concept_detail;
  const comment = typeof detail["comment"] === "string" && detail["comment"] !== "" ? ` — ${detail["comment"]}` : "";
  const names = propertyNames(c);
  const ends =
    c.concept_type === "relation_type" && typeof detail["source_object_type_id"] === "string"
      ? ` (${String(detail["source_object_type_id"])} → ${String(detail["target_object_type_id"] ?? "?")})`
      : "";
  return `[${c.concept_type}] ${c.concept_name} (${c.concept_id})${ends}${comment}${names.length > 0 ? `; 属性: ${names.join(", ")}` : ""}`;
}

async function byLlm(deps: RerankDeps, ctx: CallContext, input: RerankConceptsInput): Promise<Scored[]> {
  if (!deps.llm) {
    throw llmNotConfigured({
      needs: text("action=llm needs an LLM", "action=llm 需要 LLM"),
      instead: text(
        'Call again with action="vector" to rerank by embeddings, or ask the operators to configure LLM_BASE_URL.',
        '用 action="vector" 再调用以按向量重排，或请运维人员配置 LLM_BASE_URL。',
      ),
      validValues: ["vector"],
    });
  }
  const llm = deps.llm;
  const { question, context } = questionOf(input);
  const batches: number[][] = [];
  for (let start = 0; start < input.concepts.length; start += input.batch_size) {
    batches.push(input.concepts.slice(start, start + input.batch_size).map((_, k) => start + k));
  }
  const results = await settleWithLimit(batches, LLM_CONCURRENCY, ctx.signal, async (batch) => {
    const ranking = await rankWithLlm(
      ctx,
      llm,
      {
        question,
        additionalContext: context,
        history: [],
        topK: batch.length,
        what: text("concepts", "概念"),
        otherwise: text('call with action="vector" to rerank by embeddings', '用 action="vector" 调用以按向量重排'),
      },
      batch.map((i) => ({ label: describe(input.concepts[i]!) })),
    );
    const chosen = (ranking.order ?? []).map((k) => batch[k]!);
    return chosen.map((index, k): Scored => ({ index, score: round3((chosen.length - k) / chosen.length) }));
  });
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.flatMap((r) => (r as PromiseFulfilledResult<Scored[]>).value);
}

async function byVector(deps: RerankDeps, ctx: CallContext, input: RerankConceptsInput): Promise<Scored[]> {
  const { question, context } = questionOf(input);
  // The concept's own words only: a "[object_type] … (id)" label would put the same words in every text.
  const ranking = await rankWithoutLlm(
    ctx,
    `${question}\n${context}`,
    input.concepts.map((c) => ({ text: [c.concept_name, ...detailWords(c)].join(" "), names: [c.concept_name] })),
    { reranker: undefined, descriptions: deps.descriptions },
  );
  const best = Math.max(...ranking.scores);
  return ranking.scores.map((score, index) => ({
    index,
    score: score >= VECTOR_MIN_SCORE && score >= best * VECTOR_RELATIVE_CUT ? score : 0,
  }));
}
