import { z } from "zod";
import type { CallContext } from "../../core/call-context";
import { clamp01, round3, weightedCoverage } from "../../core/scores";
import { normalizeText } from "../../core/text";
import { type Language, type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { ChatMessage, LlmClient } from "../../upstream/llm-client";
import { askJson, type Reading, readJsonObject } from "../../upstream/llm-json";
import { cosine } from "../../upstream/local-embedder";
import type { Reranker } from "../../upstream/reranker";
import type { DescriptionCache } from "./descriptions";

/** Something to rank: the text that describes it, and the names a question may mention verbatim. */
export interface Candidate {
  text: string;
  names: string[];
}

export type RankingMethod = "reranker" | "embedding_lexical" | "llm";

export interface Ranking {
  /** One score per candidate, 0..1. */
  scores: number[];
  /** The LLM's choices (candidate indices), in its order: the LLM ranking only. */
  order?: number[];
  method: RankingMethod;
  warnings: { target: string; reason: string; message: string }[];
}

/**
 * Ranks candidates against a question without an LLM: by the reranker service
 * when one is configured, else by embeddings cosine combined with a lexical
 * score (the question's tokens found in the candidate, weighted by rarity) and
 * a bonus for names the question contains verbatim. A failing reranker is
 * reported in `warnings` and the other method used, never silently. The
 * candidates' embeddings and tokens come from `descriptions` (computed once
 * per text); only the question's are computed per call.
 */
export async function rankWithoutLlm(
  ctx: CallContext,
  question: string,
  candidates: readonly Candidate[],
  deps: { reranker: Reranker | undefined; descriptions: DescriptionCache },
): Promise<Ranking> {
  if (candidates.length === 0)
    return { scores: [], method: deps.reranker ? "reranker" : "embedding_lexical", warnings: [] };
  const warnings: Ranking["warnings"] = [];
  if (deps.reranker) {
    try {
      const raw = await deps.reranker.rerank(
        ctx,
        question,
        candidates.map((c) => c.text),
      );
      // Rerankers may answer probabilities or raw logits: a logistic keeps the order and maps either into 0..1.
      const scores = raw.every((s) => s >= 0 && s <= 1) ? raw : raw.map((s) => 1 / (1 + Math.exp(-s)));
      return withSignalCheck({ scores: scores.map(round3), method: "reranker", warnings }, ctx.language);
    } catch (err) {
      if (!(err instanceof ToolError)) throw err;
      warnings.push({
        target: "reranker",
        reason: err.reason,
        message: text(
          `the reranker failed (${err.text.en}); ranked by embeddings and tokens instead`,
          `重排模型调用失败（${err.text.zh}）；改为按向量与词匹配排序`,
        )[ctx.language],
      });
    }
  }
  const [q, ...docs] = await deps.descriptions.embeddings(ctx, [question, ...candidates.map((c) => c.text)]);
  const lexical = lexicalScores(question, candidates, deps.descriptions);
  const normalizedQuestion = normalizeText(question);
  const scores = candidates.map((c, i) => {
    const semantic = clamp01(cosine(q!, docs[i]!));
    const named = c.names.some((n) => n.length >= 2 && normalizedQuestion.includes(normalizeText(n))) ? 1 : 0;
    return round3(0.5 * lexical[i]! + 0.3 * semantic + 0.2 * named);
  });
  return withSignalCheck({ scores, method: "embedding_lexical", warnings }, ctx.language);
}

/**
 * When every candidate scores the same, the ranking says nothing and the order
 * kept is the network's: say so rather than pass it off as relevance.
 */
function withSignalCheck(r: Ranking, language: Language): Ranking {
  if (r.scores.length > 1 && r.scores.every((s) => s === r.scores[0])) {
    r.warnings.push({
      target: "ranking",
      reason: "NO_RELEVANCE_SIGNAL",
      message: text(
        `every candidate scored ${r.scores[0]} (${r.method}): nothing in the question told them apart, so they are in network order; rephrase the question with the entities or relations it is about`,
        `每个候选的得分都是 ${r.scores[0]}（${r.method}）：问题中没有能区分它们的内容，所以它们按知识网络中的顺序排列；请用问题所涉及的实体或关系重新表述问题`,
      )[language],
    });
  }
  return r;
}

/** Share of the question's token weight (rarer tokens weigh more) found in each candidate. */
function lexicalScores(question: string, candidates: readonly Candidate[], descriptions: DescriptionCache): number[] {
  const q = [...descriptions.words(question).tokens];
  const docs = candidates.map((c) => descriptions.words(c.text));
  const idf = (t: string) => {
    const df = docs.filter((d) => d.tokens.has(t)).length;
    return Math.log(1 + (candidates.length + 1) / (df + 1));
  };
  const weights = new Map(q.map((t) => [t, idf(t)]));
  return docs.map((doc) =>
    weightedCoverage(
      q,
      (t) => doc.tokens.has(t) || doc.normalized.includes(t),
      (t) => weights.get(t)!,
    ),
  );
}

const llmChoiceSchema = z.object({
  selected: z.array(z.number().int()),
  reason: z.string().optional(),
});

/** Candidates shown to the LLM at most: larger networks are narrowed by the lexical ranking first. */
export const MAX_LLM_CANDIDATES = 150;

/**
 * Lets the LLM choose the relevant candidates from a numbered list, with the
 * session's earlier questions as history. Its answer must be JSON listing
 * numbers that exist, without repeats; one repair round, then an error.
 * Scores follow the LLM's order (first = 1).
 */
export async function rankWithLlm(
  ctx: CallContext,
  llm: LlmClient,
  input: {
    question: string;
    additionalContext: string;
    history: string[];
    topK: number;
    /** What is chosen ("relation types"): the prompt says it in English, an error in the caller's language. */
    what: Text;
    /** What the agent can do instead when the LLM's answers stay unusable. */
    otherwise: Text;
  },
  candidates: readonly { label: string }[],
): Promise<Ranking> {
  const list = candidates.map((c, i) => `${i + 1}. ${c.label}`).join("\n");
  const messages: ChatMessage[] = [
    {
      role: "system",
      content:
        `You select the ${input.what.en} of a business knowledge network that a user's question needs. ` +
        `Answer with one JSON object: {"selected": [numbers from the list, most relevant first], "reason": "one sentence"}. ` +
        `Select at most ${input.topK}. Select nothing only if nothing in the list is relevant.`,
    },
    {
      role: "user",
      content: [
        `Question: ${input.question}`,
        input.additionalContext ? `Additional context: ${input.additionalContext}` : "",
        input.history.length > 0
          ? `Earlier rounds of this session (question → what was selected):\n${input.history.map((h) => `- ${h}`).join("\n")}`
          : "",
        `${input.what.en}:\n${list}`,
      ]
        .filter((s) => s !== "")
        .join("\n\n"),
    },
  ];
  const asked = await askJson(llm, ctx, messages, (answer) => readChoice(answer, candidates.length), {
    repairs: 1,
    repairMessage: (problem) => `That answer cannot be used: ${problem}. Answer again with the JSON object only.`,
  });
  if (!asked.ok) {
    throw new ToolError({
      code: "unavailable",
      reason: "LLM_BAD_ANSWER",
      message: text(
        `the LLM did not choose ${input.what.en} in a usable form`,
        `LLM 没有以可用的形式选出${input.what.zh}`,
      ),
      hint: { message: text(`Retry, or ${input.otherwise.en}.`, `请重试，或${input.otherwise.zh}。`) },
      // What was wrong is the LLM's to hear (it was told in the repair round) and the operators' to read.
      privateDetail: `the LLM's last answer: ${asked.problem}`,
    });
  }
  const chosen = [...new Set(asked.value)].slice(0, input.topK);
  const scores = candidates.map(() => 0);
  chosen.forEach((n, rank) => {
    scores[n - 1] = round3(1 - rank / Math.max(chosen.length, 1) / 2);
  });
  return { scores, order: chosen.map((n) => n - 1), method: "llm", warnings: [] };
}

/** The numbers the LLM selected, each in 1..count. */
function readChoice(text: string, count: number): Reading<number[]> {
  const read = readJsonObject(text);
  if (!read.ok) return read;
  const parsed = llmChoiceSchema.safeParse(read.value);
  if (!parsed.success) return { ok: false, problem: `"selected" must be a list of whole numbers` };
  const bad = parsed.data.selected.filter((n) => n < 1 || n > count);
  if (bad.length > 0) return { ok: false, problem: `numbers ${bad.join(", ")} are not in the list (1..${count})` };
  return { ok: true, value: parsed.data.selected };
}
