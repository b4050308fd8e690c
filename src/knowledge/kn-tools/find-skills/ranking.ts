import type { CallContext } from "../../../core/call-context";
import type { Row } from "../../../kn/types";
import { relevanceScores } from "../search-schema/relevance-floor";
import type { Skill } from "./types";

/** A skill found, with the relevance its search gave it (0 without skill_query). */
export interface Ranked {
  skill: Skill;
  score: number;
}

/**
 * The answer's skills: one per skill_id (the higher score kept), by score
 * descending then skill_id, at most top_k. (The platform tool also ranks by
 * where a skill was found — instances, object type, network — but a call
 * looks in one place only, so that rank is the same for every skill.)
 */
export function rankSkills(found: Ranked[], topK: number): Skill[] {
  const best = new Map<string, Ranked>();
  for (const r of found) {
    const known = best.get(r.skill.skill_id);
    if (!known || r.score > known.score) best.set(r.skill.skill_id, r);
  }
  return [...best.values()]
    .sort(
      (a, b) =>
        b.score - a.score || (a.skill.skill_id < b.skill.skill_id ? -1 : a.skill.skill_id > b.skill.skill_id ? 1 : 0),
    )
    .slice(0, topK)
    .map((r) => r.skill);
}

/**
 * How well each skill row fits skill_query (relevance-floor.ts' scale), by
 * its name and description: what decides whether a skill the platform's
 * vector and full-text search recalled is relevant at all.
 */
export function skillRelevance(ctx: CallContext, skillQuery: string, rows: readonly Row[]): Promise<number[]> {
  return relevanceScores(
    ctx,
    skillQuery,
    rows.map((row) => {
      const name = String(row["name"] ?? "");
      const description = typeof row["description"] === "string" ? row["description"] : "";
      return { text: `${name} ${description}`.trim(), names: [name] };
    }),
  );
}
