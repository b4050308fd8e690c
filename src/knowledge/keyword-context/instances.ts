import type { CallContext } from "../../core/call-context";
import type { Lexicon } from "../../core/lexicon";
import type { Row } from "../../kn/types";
import { LOCAL_EMBEDDER_NAME } from "../../upstream/local-embedder";
import type { KeywordContextDeps } from "../deps";
import { matchInstances } from "../matching/matcher";
import { mentionOf } from "../matching/mention";
import { searchFieldsOf } from "../matching/queries";
import { type MatchType, MENTION_THRESHOLD } from "../matching/score";
import { withTranslations } from "../matching/translations";
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
  const outcome = await matchInstances(
    deps.backend,
    ctx,
    { kn_id: ot.kn_id, object_type_id: ot.id, alias_links: ot.alias_links ?? [] },
    [withTranslations(deps.vocabulary.expand(ot.kn_id, ot.id, mentionOf(keyword)), await lexiconOf(deps, ctx))],
    {
      fields: searchFieldsOf(ot.data_properties, ot.display_key),
      candidateLimit,
      exactLimit: MAX_INSTANCES,
      words: "and",
      conclusive: CONCLUSIVE,
      ...(deps.embedder.name !== LOCAL_EMBEDDER_NAME ? { embedder: deps.embedder } : {}),
    },
  );
  for (const f of outcome.failures) {
    warnings.push({
      target: `instances:${f.lookup}`,
      reason: f.error.reason,
      message: `the ${f.lookup} lookup of ${ot.id} failed: ${f.error.message}`,
    });
  }
  const named = outcome.candidates
    .flatMap((c): ChosenInstance[] => {
      const m = c.mentions[0];
      return m && m.confidence >= MENTION_THRESHOLD
        ? [
            {
              row: c.row,
              match_type: m.type,
              score: m.confidence,
              matched_fields: m.fields,
              meaning: c.meaning?.[0] ?? 0,
            },
          ]
        : [];
    })
    .sort(byScore);
  const exact = named.filter((c) => c.match_type === "exact");
  const chosen = exact.length > 0 ? exact : named;
  if (outcome.cut) {
    warnings.push({
      target: "instances",
      reason: "TOO_MANY_CANDIDATES",
      message: `more instances of ${ot.id} share words or characters with '${keyword}' than the ${candidateLimit} looked at (KEYWORD_CANDIDATE_LIMIT); the best of those are returned. Use a more specific keyword to be sure of the best matches.`,
    });
  }
  if (chosen.length === 0) {
    warnings.push({
      target: "instances",
      reason: "NO_MATCHING_INSTANCE",
      message: `no ${ot.name || ot.id} (${ot.id}) is named '${keyword}', nor anything close to it (the closest candidates scored below ${MENTION_THRESHOLD}). Try the name as the network spells it, a shorter part of it, or another object type of the session's schema.`,
    });
  }
  return {
    chosen: chosen.slice(0, MAX_INSTANCES),
    total: outcome.cut ? Math.max(outcome.total, chosen.length) : chosen.length,
  };
}

/** The dictionaries, once loaded; a load that failed leaves the mention untranslated (the start-up log said why). */
async function lexiconOf(deps: KeywordContextDeps, ctx: CallContext): Promise<Lexicon | undefined> {
  if (!deps.lexicon) return undefined;
  try {
    return await deps.lexicon();
  } catch (err) {
    ctx.log.warn({ err }, "lexicon not loaded: mentions are not translated");
    return undefined;
  }
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
