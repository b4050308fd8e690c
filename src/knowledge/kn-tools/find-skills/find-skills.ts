import type { CallContext } from "../../../core/call-context";
import type { Json } from "../../../core/json";
import { text } from "../../../errors/text";
import { ToolError } from "../../../errors/tool-error";
import { knIdOf } from "../../../kn/kn-id";
import type { Condition, ObjectType, RelationType, Row } from "../../../kn/types";
import type { KnowledgeDeps } from "../../deps";
import { objectTypeOf, SEARCH_SCHEMA_RPC } from "../conditions/schema-lookup";
import { RELEVANCE_FLOOR } from "../search-schema/relevance-floor";
import type { FindSkillsInput } from "./input";
import { emptyMessage } from "./messages";
import { type Ranked, rankSkills, skillRelevance } from "./ranking";
import { checkSkillsContract, instanceFilter, SKILLS_TYPE_ID, skillQueryCondition } from "./skills-contract";
import type { Skill, SkillScope } from "./types";

export type FindSkillsDeps = Pick<KnowledgeDeps, "backend">;

/** The whole call's budget (the platform tool's total_timeout_ms). */
export const FIND_SKILLS_TIMEOUT_MS = 10_000;
/** Skills examined at most for one call. */
const CANDIDATE_LIMIT = 1000;
/** Skills checked for a binding per subgraph request. */
const CHECK_CHUNK = 50;
/** Relation types between an object type and skills read at most. */
const RELATION_LIMIT = 100;

export interface FindSkillsResult {
  entries: Skill[];
  /** Why there is no skill and what to do next (Chinese, for the agent); "" when there are skills. */
  message: string;
  /** Where the skills were looked for. */
  scope: SkillScope;
}

/**
 * find_skills: the skills an agent can use for an object type ("skills": every
 * skill of the network), optionally only those bound to some of its
 * instances, filtered and ranked by skill_query. The network must hold a
 * `skills` object type with skill_id and name (checked first, with errors
 * naming what is missing). A skill is an object type's (or an instance's)
 * when an instance of that type (that instance) is linked to it by a relation
 * type between the two, either way round. Candidates are ranked by
 * skill_query (vector and full-text relevance, then skill_id), those that do
 * not fit it dropped (relevance below RELEVANCE_FLOOR: the vector search's
 * nearest neighbours may be far), each checked for a binding until top_k are
 * found, all within 10 s. No skill is an empty list with a message saying
 * why and what to do. An unknown network is NOT_FOUND
 * KNOWLEDGE_NETWORK_NOT_FOUND, as for the other tools.
 */
export async function findSkills(
  deps: FindSkillsDeps,
  caller: CallContext,
  input: FindSkillsInput,
): Promise<FindSkillsResult> {
  const knId = knIdOf(input.kn_id, caller);
  return withDeadline(caller, FIND_SKILLS_TIMEOUT_MS, async (ctx) => {
    const isNetwork = input.object_type_id === SKILLS_TYPE_ID;
    const [skills, target] = await Promise.all([
      checkSkillsContract(deps.backend, ctx, knId),
      isNetwork ? Promise.resolve(undefined) : objectType(deps, ctx, knId, input.object_type_id),
    ]);
    const scope: SkillScope = isNetwork ? "network" : input.instance_identities.length > 0 ? "instance" : "object_type";
    const instances = instanceFilter(target ?? skills, input.instance_identities);
    const query: SkillQuery | undefined =
      input.skill_query === ""
        ? undefined
        : { text: input.skill_query, condition: skillQueryCondition(skills, input.skill_query, input.top_k) };
    const found = isNetwork
      ? await networkSkills(deps, ctx, knId, skills, instances, query, input.top_k)
      : await boundSkills(deps, ctx, knId, skills, target!, instances, query, input.top_k);
    const entries = rankSkills(found.ranked, input.top_k);
    if (entries.length > 0) return { entries, message: "", scope };
    // Empty: was it the query that filtered everything out?
    const withoutQuery =
      query === undefined || found.noBinding
        ? 0
        : isNetwork
          ? (await networkSkills(deps, ctx, knId, skills, instances, undefined, 1)).ranked.length
          : (await boundSkills(deps, ctx, knId, skills, target!, instances, undefined, 1)).ranked.length;
    return {
      entries: [],
      message: emptyMessage({
        scope,
        knId,
        objectType: target,
        skillQuery: input.skill_query,
        instancesGiven: input.instance_identities.length > 0,
        noBinding: found.noBinding,
        queryFilteredAll: withoutQuery > 0,
      })[ctx.language],
      scope,
    };
  });
}

interface Found {
  ranked: Ranked[];
  /** No relation type links the object type and skills. */
  noBinding: boolean;
}

/** skill_query, and the platform's condition for it. */
interface SkillQuery {
  text: string;
  condition: Condition;
}

/**
 * Every skill of the network (object_type_id "skills"), the instance filter
 * on the skills themselves; with skill_query, only those that fit it.
 */
async function networkSkills(
  deps: FindSkillsDeps,
  ctx: CallContext,
  knId: string,
  skills: ObjectType,
  instances: Condition | undefined,
  query: SkillQuery | undefined,
  topK: number,
): Promise<Found> {
  // With skill_query, more than top_k are read: those that do not fit leave room for the next.
  const rows = await candidates(deps, ctx, knId, skills, query, instances, query ? CANDIDATE_LIMIT : topK);
  return { ranked: rows.map(ranked), noBinding: false };
}

/**
 * The skills bound to an object type (or to the instances the filter keeps):
 * the relation types between it and skills, the candidate skills best first,
 * and for each a one-hop walk from the skill to the object type (limit 1) to
 * see whether any instance is linked, CHECK_CHUNK skills per request, until
 * top_k are found.
 */
async function boundSkills(
  deps: FindSkillsDeps,
  ctx: CallContext,
  knId: string,
  skills: ObjectType,
  target: ObjectType,
  instances: Condition | undefined,
  query: SkillQuery | undefined,
  topK: number,
): Promise<Found> {
  const relations = await bindings(deps, ctx, knId, target.id);
  if (relations.length === 0) return { ranked: [], noBinding: true };
  const rows = await candidates(deps, ctx, knId, skills, query, undefined, CANDIDATE_LIMIT);
  const bound: Ranked[] = [];
  for (let from = 0; from < rows.length && bound.length < topK; from += CHECK_CHUNK) {
    const chunk = rows.slice(from, from + CHECK_CHUNK);
    const result = await deps.backend.querySubgraph(ctx, knId, {
      relation_type_paths: chunk.flatMap((row) =>
        relations.map((rel) => ({
          object_types: [
            { id: SKILLS_TYPE_ID, condition: eq("skill_id", row["skill_id"] ?? null), limit: 1 },
            { id: target.id, ...(instances ? { condition: instances } : {}), limit: 1 },
          ],
          relation_types: [
            { relation_type_id: rel.id, source_object_type_id: SKILLS_TYPE_ID, target_object_type_id: target.id },
          ],
          limit: 1,
        })),
      ),
    });
    chunk.forEach((row, k) => {
      const linked = relations.some(
        (_, j) => (result.entries[k * relations.length + j]?.relation_paths.length ?? 0) > 0,
      );
      if (linked) bound.push(ranked(row));
    });
  }
  return { ranked: bound, noBinding: false };
}

/** The relation types linking the object type and skills, either way round. */
async function bindings(deps: FindSkillsDeps, ctx: CallContext, knId: string, otId: string): Promise<RelationType[]> {
  const between = (source: string, target: string): Condition => ({
    operation: "and",
    sub_conditions: [eq("source_object_type_id", source), eq("target_object_type_id", target)],
  });
  const hits = await deps.backend.searchConcepts(ctx, knId, "relation_types", {
    condition: { operation: "or", sub_conditions: [between(otId, SKILLS_TYPE_ID), between(SKILLS_TYPE_ID, otId)] },
    limit: RELATION_LIMIT,
  });
  return hits;
}

/**
 * Skills matching skill_query's condition and the instance filter, best
 * first (by `_score`, then skill_id), with the contract's properties; with
 * skill_query, only those that fit it (relevance at least RELEVANCE_FLOOR):
 * vector search returns its nearest neighbours even when nothing is near.
 */
async function candidates(
  deps: FindSkillsDeps,
  ctx: CallContext,
  knId: string,
  skills: ObjectType,
  query: SkillQuery | undefined,
  instances: Condition | undefined,
  limit: number,
): Promise<Row[]> {
  const describes = skills.data_properties.some((p) => p.name === "description");
  const condition = and(query?.condition, instances);
  const answer = await deps.backend.queryObjects(ctx, knId, SKILLS_TYPE_ID, {
    ...(condition ? { condition } : {}),
    properties: ["skill_id", "name", ...(describes ? ["description"] : [])],
    limit,
  });
  if (!query) return answer.datas;
  const relevance = await skillRelevance(ctx, query.text, answer.datas);
  return answer.datas.filter((_, i) => relevance[i]! >= RELEVANCE_FLOOR);
}

/**
 * The object type find_skills looks from; an unknown one points the agent at
 * search_schema, an unknown network is the other tools' NOT_FOUND.
 */
async function objectType(deps: FindSkillsDeps, ctx: CallContext, knId: string, otId: string): Promise<ObjectType> {
  try {
    return await objectTypeOf(deps.backend, ctx, knId, otId);
  } catch (err) {
    if (!(err instanceof ToolError) || err.reason !== "OBJECT_TYPE_NOT_FOUND") throw err;
    throw new ToolError({
      code: "not_found",
      reason: "OBJECT_TYPE_NOT_FOUND",
      message: err.text,
      violations: [
        {
          field: "object_type_id",
          description: text(`${otId} is not an object type of ${knId}`, `${otId} 不是 ${knId} 的对象类型`),
        },
      ],
      metadata: err.metadata,
      hint: {
        message: text(
          'Use an object type id from SearchSchema\'s object_types, or "skills" to search every skill.',
          '使用 SearchSchema 返回的 object_types 中的对象类型id，或用 "skills" 搜索全部技能。',
        ),
        nextRpc: SEARCH_SCHEMA_RPC,
        ...(err.hint?.validValues ? { validValues: err.hint.validValues } : {}),
      },
      cause: err,
    });
  }
}

function ranked(row: Row): Ranked {
  return {
    skill: {
      skill_id: String(row["skill_id"] ?? ""),
      name: String(row["name"] ?? ""),
      description: typeof row["description"] === "string" ? row["description"] : "",
    },
    score: typeof row["_score"] === "number" ? row["_score"] : 0,
  };
}

function eq(field: string, value: Json): Condition {
  return { field, operation: "==", value, value_from: "const" };
}

function and(a: Condition | undefined, b: Condition | undefined): Condition | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { operation: "and", sub_conditions: [a, b] };
}

/**
 * Runs `run` with the caller's context bounded by `ms` more: past it, every
 * call in flight is abandoned and the call fails DEADLINE_EXCEEDED saying
 * how to narrow it.
 */
async function withDeadline<T>(ctx: CallContext, ms: number, run: (ctx: CallContext) => Promise<T>): Promise<T> {
  const timer = new AbortController();
  const end = Date.now() + ms;
  const timeout = setTimeout(
    () =>
      timer.abort(
        new ToolError({
          code: "deadline_exceeded",
          reason: "FIND_SKILLS_TIMEOUT",
          message: text(`find_skills did not finish within ${ms} ms`, `find_skills 没有在 ${ms} 毫秒内完成`),
          hint: {
            message: text(
              "Narrow the search and call again: give instance_identities, a skill_query, or a smaller top_k.",
              "缩小搜索范围后再调用：给出 instance_identities、skill_query，或调小 top_k。",
            ),
          },
        }),
      ),
    ms,
  );
  try {
    return await run({
      ...ctx,
      signal: AbortSignal.any([ctx.signal, timer.signal]),
      remainingMs: () => {
        const left = end - Date.now();
        const callers = ctx.remainingMs();
        return callers === undefined ? left : Math.min(callers, left);
      },
    });
  } catch (err) {
    // An engine may notice the abort by its own means; the reason is what the agent must read.
    if (timer.signal.aborted && !ctx.signal.aborted) throw timer.signal.reason;
    throw err;
  } finally {
    clearTimeout(timeout);
  }
}
