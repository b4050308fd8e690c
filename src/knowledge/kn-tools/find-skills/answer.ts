import type { Json } from "../../../core/json";
import { compact, table } from "../../../core/tables";
import type { FindSkillsResult } from "./find-skills";

/** The platform tool's find_skills answer: `entries`, and `message` only when there is none. */
export function findSkillsJson(r: FindSkillsResult): Record<string, Json> {
  return {
    entries: r.entries.map((s) => ({ ...s })),
    ...(r.message !== "" ? { message: r.message } : {}),
  };
}

/** The compact answer: the skills as one table, where they were looked for, and the message. */
export function findSkillsAnswer(r: FindSkillsResult): Json {
  return compact({
    scope: r.scope,
    skills: table(r.entries.map((s) => ({ ...s }))),
    message: r.message,
  });
}
