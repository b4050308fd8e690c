import { createHash } from "node:crypto";
import type { CallContext } from "../../core/call-context";
import { lexiconOrNone } from "../../core/lexicon";
import { type Language, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { Row } from "../../kn/types";
import type { LlmClient } from "../../upstream/llm-client";
import { LOCAL_EMBEDDER_NAME } from "../../upstream/local-embedder";
import type { KeywordContextDeps } from "../deps";
import type { CandidateMatch } from "../matching/candidates";
import { PROPOSAL_TIMEOUT_MS, proposeNames } from "../matching/llm-names";
import { lookupFailed, type MatchOutcome, matchInstances } from "../matching/matcher";
import { type Mention, mentionOf } from "../matching/mention";
import { searchFieldsOf } from "../matching/queries";
import { type MatchType, MENTION_THRESHOLD } from "../matching/score";
import { TRANSLATION_WEIGHT, translationsOf } from "../matching/translations";
import type { RecalledObjectType } from "../session";
import type { KeywordContextWarning } from "./result";

/** Spec §4.2 step 5: at most 10 instances. */
export const MAX_INSTANCES = 10;
/** Stage one settles a keyword when its best match is at least this sure; else its pieces are looked up too. */
const CONCLUSIVE = 0.8;

/** An instance the keyword names, with how it matched. */
export interface ChosenInstance {
  row: Row;
  match_type: MatchType;
  score: number;
  matched_fields: string[];
  /** With an embeddings endpoint, how close in meaning (cosine): orders matches that score alike. */
  meaning: number;
}

/**
 * The instances of `ot` the keyword names (matching/matcher.ts): the exact,
 * direct and alias lookups in one round trip, the relaxed one in a second
 * only when the first found nothing convincing. Exact matches win: when
 * there are any, only they are returned (spec §1.3). Below the matcher's
 * threshold nothing is returned — a keyword that names nothing gets a
 * warning saying so, never the least bad candidate. Best first, at most 10.
 */
export async function findInstances(
  deps: KeywordContextDeps,
  ctx: CallContext,
  ot: RecalledObjectType,
  keyword: string,
  warnings: KeywordContextWarning[],
): Promise<{ chosen: ChosenInstance[]; total: number }> {
  const { candidateLimit } = deps.keywordContext;
  const mention = deps.vocabulary.expand(ot.kn_id, ot.id, mentionOf(keyword));
  const outcome = await lookUp(deps, ctx, ot, [mention]);
  failuresAsWarnings(outcome.failures, ot, warnings, ctx.language);
  let chosen = chosenOf(outcome.candidates, 1);
  // Not found for sure as written: its translations in the other language are looked up too (one more round trip).
  if ((chosen[0]?.score ?? 0) < CONCLUSIVE) {
    const lexicon = await lexiconOrNone(deps.lexicon, ctx.log, "mentions are not translated");
    const translated = translationsOf(mention, lexicon);
    if (translated.length > 0) {
      const more = await lookUp(deps, ctx, ot, translated);
      failuresAsWarnings(more.failures, ot, warnings, ctx.language);
      chosen = merged(chosen, chosenOf(more.candidates, TRANSLATION_WEIGHT));
    }
  }
  if (outcome.cut) {
    warnings.push({
      target: "instances",
      reason: "TOO_MANY_CANDIDATES",
      message: text(
        `more instances of ${ot.id} share words or characters with '${keyword}' than the ${candidateLimit} looked at (KEYWORD_CANDIDATE_LIMIT); the best of those are returned. Use a more specific keyword to be sure of the best matches.`,
        `${ot.id} 中与 '${keyword}' 有相同词语或字符的实例多于查看的 ${candidateLimit} 个（KEYWORD_CANDIDATE_LIMIT）；返回的是其中最好的。要确保得到最佳匹配，请使用更具体的关键词。`,
      )[ctx.language],
    });
  }
  if (chosen.length === 0 && deps.llm) chosen = await byProposedNames(deps, deps.llm, ctx, ot, keyword, warnings);
  if (chosen.length === 0) {
    warnings.push({
      target: "instances",
      reason: "NO_MATCHING_INSTANCE",
      message: text(
        `no ${ot.name || ot.id} (${ot.id}) is named '${keyword}', nor anything close to it (the closest candidates scored below ${MENTION_THRESHOLD}). Try the name as the network spells it, a shorter part of it, or another object type of the session's schema.`,
        `没有名为 '${keyword}' 的${ot.name || ot.id}（${ot.id}），也没有与之接近的（最接近的候选得分低于 ${MENTION_THRESHOLD}）。请尝试知识网络中的写法、名称中较短的一部分，或本会话schema中的其他对象类型。`,
      )[ctx.language],
    });
  }
  return {
    chosen: chosen.slice(0, MAX_INSTANCES),
    total: outcome.cut ? Math.max(outcome.total, chosen.length) : chosen.length,
  };
}

/** The matcher's lookups of the mentions in `ot`, within keyword context's settings. */
function lookUp(deps: KeywordContextDeps, ctx: CallContext, ot: RecalledObjectType, mentions: Mention[]) {
  return matchInstances(
    deps.backend,
    ctx,
    { kn_id: ot.kn_id, object_type_id: ot.id, alias_links: ot.alias_links ?? [] },
    mentions,
    {
      fields: searchFieldsOf(ot.data_properties, ot.display_key),
      candidateLimit: deps.keywordContext.candidateLimit,
      exactLimit: MAX_INSTANCES,
      words: "and",
      conclusive: CONCLUSIVE,
      ...(deps.embedder.name !== LOCAL_EMBEDDER_NAME ? { embedder: deps.embedder } : {}),
      // The service's one load of the dictionaries, logged once, for telling near names from typos.
      ...(deps.lexicon ? { lexicon: deps.lexicon } : {}),
    },
  );
}

function failuresAsWarnings(
  failures: MatchOutcome["failures"],
  ot: RecalledObjectType,
  warnings: KeywordContextWarning[],
  language: Language,
): void {
  for (const f of failures) {
    warnings.push({
      target: `instances:${f.lookup}`,
      reason: f.error.reason,
      message: lookupFailed(f, ot.id, language),
    });
  }
}

/**
 * The candidates that some mention names at MENTION_THRESHOLD or more, its
 * confidence times `weight`, best first; exact matches alone when there are any.
 */
function chosenOf(candidates: readonly CandidateMatch[], weight: number): ChosenInstance[] {
  const named = candidates
    .flatMap((c): (ChosenInstance & { exact: boolean })[] => {
      let best: { m: NonNullable<CandidateMatch["mentions"][number]>; k: number } | undefined;
      c.mentions.forEach((m, k) => {
        if (m && (!best || m.confidence > best.m.confidence)) best = { m, k };
      });
      if (!best) return [];
      const score = Math.round(best.m.confidence * weight * 1000) / 1000;
      return score >= MENTION_THRESHOLD
        ? [
            {
              row: c.row,
              // Through a name that is not the keyword, every match is an alias match.
              match_type: weight < 1 ? "alias" : best.m.type,
              score,
              matched_fields: best.m.fields,
              meaning: c.meaning?.[best.k] ?? 0,
              exact: best.m.type === "exact",
            },
          ]
        : [];
    })
    .sort(byScore);
  const exact = named.filter((c) => c.exact);
  return (exact.length > 0 ? exact : named).map(({ exact: _, ...c }) => c);
}

/** Both lists' instances, each with its better match, best first. */
function merged(a: readonly ChosenInstance[], b: readonly ChosenInstance[]): ChosenInstance[] {
  const byId = new Map<string, ChosenInstance>();
  for (const c of [...a, ...b]) {
    const known = byId.get(c.row._instance_id);
    if (!known || c.score > known.score) byId.set(c.row._instance_id, c);
  }
  return [...byId.values()].sort(byScore);
}

/** A match through a name the LLM proposed counts less than one through a name the network or the vocabulary gives. */
const PROPOSED_WEIGHT = 0.9;
/** How long a proposal is kept: the same keyword in the same object type gets the same names. */
const PROPOSAL_TTL_MS = 10 * 60_000;

/**
 * With an LLM, a keyword that matched nothing gets canonical names proposed
 * (llm-names.ts), cached 10 minutes, which are then looked up and scored
 * like any mention, weighed 0.9, and returned as alias matches with a
 * warning naming them: never trusted, a proposed name no instance has finds
 * nothing. An LLM that fails or answers nonsense leaves a warning and no
 * match.
 */
async function byProposedNames(
  deps: KeywordContextDeps,
  llm: LlmClient,
  ctx: CallContext,
  ot: RecalledObjectType,
  keyword: string,
  warnings: KeywordContextWarning[],
): Promise<ChosenInstance[]> {
  const cache = deps.sessions.pick("");
  const key = `cl:kc:proposed:${createHash("sha256")
    .update(JSON.stringify([ot.kn_id, ot.id, keyword]))
    .digest("hex")}`;
  let names = await cache.getJson<string[]>(key).catch(() => undefined);
  if (!names) {
    const proposal = await proposeNames(llm, ctx, keyword, {
      objectTypeId: ot.id,
      objectTypeName: ot.name,
      comment: ot.comment ?? "",
    });
    if (!proposal.ok) {
      ctx.log.warn({ err: proposal.error }, "keyword context: the LLM proposed no names");
      const why = proposal.timedOut
        ? text(`it did not answer within ${PROPOSAL_TIMEOUT_MS} ms`, `它没有在 ${PROPOSAL_TIMEOUT_MS} 毫秒内回答`)
        : proposal.error instanceof ToolError
          ? proposal.error.text
          : text("its answer was not the JSON asked for", "它的回答不是所要求的 JSON");
      warnings.push({
        target: "instances:llm",
        reason: proposal.error instanceof ToolError ? proposal.error.reason : "LLM_BAD_ANSWER",
        message: text(
          `the LLM was asked for the names '${keyword}' may stand for, but ${why.en}; only the keyword itself was looked up`,
          `已请 LLM 给出 '${keyword}' 可能指的名称，但${why.zh}；只查找了关键词本身`,
        )[ctx.language],
      });
      return [];
    }
    names = proposal.names;
    cache.setJson(key, names, PROPOSAL_TTL_MS).catch((err: unknown) => ctx.log.warn({ err }, "cache write failed"));
  }
  if (names.length === 0) return [];
  const outcome = await lookUp(
    deps,
    ctx,
    ot,
    names.map((n) => deps.vocabulary.expand(ot.kn_id, ot.id, mentionOf(n))),
  );
  failuresAsWarnings(outcome.failures, ot, warnings, ctx.language);
  const chosen = chosenOf(outcome.candidates, PROPOSED_WEIGHT);
  if (chosen.length > 0) {
    warnings.push({
      target: "instances",
      reason: "MATCHED_THROUGH_PROPOSED_NAMES",
      message: text(
        `nothing is named '${keyword}' as written; the instances returned match names the LLM proposed for it (${names.join(", ")}), looked up in ${ot.id} like any name and weighed ${PROPOSED_WEIGHT}`,
        `没有按原写法名为 '${keyword}' 的实例；返回的实例匹配的是 LLM 为它给出的名称（${names.join(", ")}），这些名称像其他名称一样在 ${ot.id} 中查找，权重为 ${PROPOSED_WEIGHT}`,
      )[ctx.language],
    });
  }
  return chosen;
}

/** Best first (scores within a hundredth ordered by meaning, when known); then the shorter name (the keyword covers more of it), then the id. */
function byScore(a: ChosenInstance, b: ChosenInstance): number {
  return (
    Math.round(b.score * 100) - Math.round(a.score * 100) ||
    b.meaning - a.meaning ||
    b.score - a.score ||
    String(a.row._display ?? "").length - String(b.row._display ?? "").length ||
    (a.row._instance_id < b.row._instance_id ? -1 : a.row._instance_id > b.row._instance_id ? 1 : 0)
  );
}
