import { randomUUID } from "node:crypto";
import type { CallContext } from "../../core/call-context";
import { topIndexes } from "../../core/scores";
import { llmNotConfigured } from "../../errors/common";
import { type Text, text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { KnowledgeNetwork, ObjectType, RelationType } from "../../kn/types";
import type { SchemaDeps } from "../deps";
import { aliasLinksOf } from "../matching/aliases";
import { type Candidate, MAX_LLM_CANDIDATES, type Ranking, rankWithLlm, rankWithoutLlm } from "../relevance/rank";
import {
  merge,
  newSince,
  type RecalledActionType,
  type RecalledObjectType,
  type RecalledRelationType,
  type SchemaRound,
  type SessionSchema,
  unionOf,
} from "../session";
import { compactObjects, compactRelations } from "./compact";
import type { RetrieveSchemaInput } from "./input";

export interface SchemaResult {
  session_id: string;
  round: number;
  ranking_method: string;
  object_types: RecalledObjectType[];
  relation_types: RecalledRelationType[];
  action_types: RecalledActionType[];
  /** The YAML texts, when compact_format. */
  compact: { objects: string; relations: string } | undefined;
  warnings: { target: string; reason: string; message: string }[];
}

/**
 * Step one of the two-step retrieval: the relation types relevant to the full
 * question (top_k of them, ranked by the reranker, embeddings + tokens, or the
 * LLM) and the object types at their ends, saved in the session for keyword
 * context. Networks without relation types contribute their best 2·top_k
 * object types instead. The scores used are returned with the method.
 */
export async function retrieveSchema(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
): Promise<SchemaResult> {
  return (await recordSchemaRound(deps, ctx, input)).result;
}

/** A schema recall as retrieveSchema answers it, with the session's schema before it and the round it recorded. */
export interface RecordedSchemaRound {
  result: SchemaResult;
  /** The union of the session's rounds read before this one was recorded. */
  priorUnion: SessionSchema;
  /** The round recorded; undefined when nothing was recalled (and nothing recorded). */
  recorded: SchemaRound | undefined;
}

/**
 * retrieveSchema, also handing back what it read and recorded, so that
 * kn_search's concept recall does not read the session's rounds again.
 */
export async function recordSchemaRound(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
): Promise<RecordedSchemaRound> {
  const store = deps.sessions.pick(input.session_type);
  if (!input.skip_llm && !deps.llm) {
    throw llmNotConfigured({
      needs: text("skip_llm=false needs an LLM", "skip_llm=false 需要 LLM"),
      field: {
        field: "skip_llm",
        description: text("no LLM is configured; use skip_llm=true", "没有配置 LLM；请用 skip_llm=true"),
      },
      instead: text(
        "Call again with skip_llm=true: relation types are then ranked by the reranker or by embeddings and tokens.",
        "用 skip_llm=true 再调用：这时关系类型由重排模型，或由向量与词匹配排序。",
      ),
    });
  }
  const sessionId = input.session_id || randomUUID();
  const warnings: SchemaResult["warnings"] = [];
  // 1. The networks (one that cannot be read is a warning while another can).
  const networks = await fetchNetworks(deps, ctx, input, warnings);
  // 2. The ranking, with the session's earlier rounds as the LLM's history.
  const prior = await deps.sessions.rounds(store, ctx.caller, sessionId);
  const recalled = await recall(deps, ctx, input, networks, prior, warnings);
  const answer = (
    round: number,
    shown: Pick<SessionSchema, "object_types" | "relation_types" | "action_types">,
  ): SchemaResult => {
    const multiNetwork =
      new Set([...shown.object_types.map((o) => o.kn_id), ...shown.relation_types.map((r) => r.kn_id)]).size > 1;
    return {
      session_id: sessionId,
      round,
      ranking_method: recalled.ranking_method,
      object_types: shown.object_types,
      relation_types: shown.relation_types,
      action_types: shown.action_types,
      compact: input.compact_format
        ? {
            objects: compactObjects(shown.object_types, multiNetwork),
            relations: compactRelations(shown.relation_types, multiNetwork),
          }
        : undefined,
      warnings,
    };
  };
  if (recalled.object_types.length === 0 && recalled.relation_types.length === 0) {
    // Nothing recalled (the LLM chose nothing): the session keeps what it had, and the agent is told.
    warnings.push({
      target: "schema",
      reason: recalled.ranking_method === "llm" ? "LLM_SELECTED_NOTHING" : "NOTHING_RECALLED",
      message: text(
        "no relation or object type was judged relevant to the question; the session's schema is unchanged. Rephrase the question, or call with skip_llm=true for the best-ranked types.",
        "没有关系类型或对象类型被判定与问题相关；本会话的schema保持不变。请换个说法提问，或用 skip_llm=true 调用以获得排名最前的类型。",
      )[ctx.language],
    });
    return {
      result: answer(prior.length, { object_types: [], relation_types: [], action_types: [] }),
      priorUnion: unionOf(prior),
      recorded: undefined,
    };
  }
  // 3. The round recorded; the answer is what it added to the session, or with return_union the whole session.
  const round = await deps.sessions.addRound(store, ctx.caller, sessionId, recalled);
  ctx.log.info(
    {
      session_id: sessionId,
      round,
      method: recalled.ranking_method,
      relation_types: recalled.relation_types.length,
      object_types: recalled.object_types.length,
      warnings: warnings.length,
    },
    "schema recalled",
  );
  const recorded = { ...recalled, round };
  const priorUnion = unionOf(prior);
  return {
    result: answer(round, input.return_union ? merge(priorUnion, [recorded]) : newSince(priorUnion, recalled)),
    priorUnion,
    recorded,
  };
}

/** The networks asked for; one that cannot be read is a warning, all of them failing the first one's error. */
async function fetchNetworks(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
  warnings: SchemaResult["warnings"],
): Promise<KnowledgeNetwork[]> {
  const knIds = [...new Set(input.kn_ids.map((k) => k.knowledge_network_id))];
  const fetched = await Promise.allSettled(knIds.map((id) => deps.backend.getKnowledgeNetwork(ctx, id)));
  const networks: KnowledgeNetwork[] = [];
  fetched.forEach((f, i) => {
    if (f.status === "fulfilled") networks.push(f.value);
    else if (f.reason instanceof ToolError)
      warnings.push({ target: `kn:${knIds[i]}`, reason: f.reason.reason, message: f.reason.text[ctx.language] });
    else throw f.reason;
  });
  if (networks.length === 0) throw (fetched[0] as PromiseRejectedResult).reason;
  return networks;
}

/**
 * This round: the top_k relation types and the object types at their ends
 * (an end's score is the best of its relations'), the best 2·top_k object
 * types of networks without relation types, and the action types of every
 * object type recalled.
 */
async function recall(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
  networks: readonly KnowledgeNetwork[],
  prior: readonly SchemaRound[],
  warnings: SchemaResult["warnings"],
): Promise<Omit<SchemaRound, "round">> {
  const question = input.additional_context ? `${input.query}\n${input.additional_context}` : input.query;
  const withNetwork = networks.length > 1;
  const relations = networks.flatMap((kn) => kn.relation_types.map((r) => ({ kn, r })));
  const loneTypes = networks
    .filter((kn) => kn.relation_types.length === 0)
    .flatMap((kn) => kn.object_types.map((o) => ({ kn, o })));
  const relationRanking = await rank(
    deps,
    ctx,
    input,
    question,
    prior,
    relations.map(({ kn, r }) => relationCandidate(kn, r)),
    text("relation types", "关系类型"),
    relations.map(({ kn, r }) => relationLabel(kn, r, withNetwork)),
  );
  const typeRanking = await rank(
    deps,
    ctx,
    input,
    question,
    prior,
    loneTypes.map(({ o }) => objectCandidate(o)),
    text("object types", "对象类型"),
    loneTypes.map(({ kn, o }) => `${withNetwork ? `[${kn.id}] ` : ""}${o.id} ${o.name}: ${o.comment}`),
  );
  warnings.push(...relationRanking.warnings, ...typeRanking.warnings);

  const keptRelations = top(relationRanking.scores, input.top_k, input.skip_llm).map((i) => ({
    ...relations[i]!,
    score: relationRanking.scores[i]!,
  }));
  const keptTypes = top(typeRanking.scores, 2 * input.top_k, input.skip_llm).map((i) => ({
    ...loneTypes[i]!,
    score: typeRanking.scores[i]!,
  }));
  const objectTypes = new Map<string, RecalledObjectType>();
  const addType = (kn: KnowledgeNetwork, id: string, score: number) => {
    const key = `${kn.id}/${id}`;
    const known = objectTypes.get(key);
    if (known) known.score = Math.max(known.score, score);
    else {
      const o = kn.object_types.find((t) => t.id === id);
      if (o) objectTypes.set(key, recalledObjectType(kn, o, score, deps.aliasRelations));
    }
  };
  for (const { kn, r, score } of keptRelations) {
    addType(kn, r.source_object_type_id, score);
    addType(kn, r.target_object_type_id, score);
  }
  for (const { kn, o, score } of keptTypes) addType(kn, o.id, score);
  return {
    query: input.query,
    kn_ids: networks.map((kn) => kn.id),
    ranking_method: relations.length > 0 ? relationRanking.method : typeRanking.method,
    object_types: [...objectTypes.values()],
    relation_types: keptRelations.map(({ kn, r, score }) => ({
      kn_id: kn.id,
      id: r.id,
      name: r.name,
      comment: r.comment,
      source_object_type_id: r.source_object_type_id,
      target_object_type_id: r.target_object_type_id,
      score,
    })),
    action_types: networks.flatMap((kn) =>
      kn.action_types
        .filter((a) => objectTypes.has(`${kn.id}/${a.object_type_id}`))
        .map((a) => ({ ...a, kn_id: kn.id, object_type_name: objectTypes.get(`${kn.id}/${a.object_type_id}`)!.name })),
    ),
  };
}

async function rank(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
  question: string,
  prior: readonly SchemaRound[],
  candidates: Candidate[],
  what: Text,
  labels: string[],
): Promise<Ranking> {
  const lexical = await rankWithoutLlm(ctx, question, candidates, deps);
  if (input.skip_llm || candidates.length === 0) return lexical;
  // The LLM sees a numbered list; a large network is narrowed by the ranking above first.
  const shortlist = top(lexical.scores, MAX_LLM_CANDIDATES, true);
  const chosen = await rankWithLlm(
    ctx,
    deps.llm!,
    {
      question: input.query,
      additionalContext: input.additional_context,
      history: prior
        .slice(-5)
        .map(
          (r) =>
            `${r.query} → ${r.relation_types.map((rel) => rel.id).join(", ") || r.object_types.map((o) => o.id).join(", ") || "nothing"}`,
        ),
      topK: input.top_k,
      what,
      otherwise: text("call with skip_llm=true to rank without the LLM", "用 skip_llm=true 调用，不经 LLM 排序"),
    },
    shortlist.map((i) => ({ label: labels[i]! })),
  );
  const scores = candidates.map(() => 0);
  shortlist.forEach((i, k) => {
    scores[i] = chosen.scores[k]!;
  });
  return { scores, method: "llm", warnings: [...lexical.warnings, ...chosen.warnings] };
}

/** Indexes of the `k` best scores, best first (ties keep network order). The LLM's unchosen (0) are never kept. */
function top(scores: readonly number[], k: number, keepZeros: boolean): number[] {
  const best = topIndexes(scores, keepZeros ? k : scores.length);
  return keepZeros ? best : best.filter((i) => scores[i]! > 0).slice(0, k);
}

/** A relation type as ranking sees it: its ends' names, comments and properties around its name (SearchSchema ranks the same way). */
export function relationCandidate(kn: KnowledgeNetwork, r: RelationType): Candidate {
  const source = kn.object_types.find((o) => o.id === r.source_object_type_id);
  const target = kn.object_types.find((o) => o.id === r.target_object_type_id);
  const props = (o: ObjectType | undefined) =>
    (o?.data_properties ?? [])
      .slice(0, 20)
      .map((p) => p.display_name || p.name)
      .join(" ");
  return {
    text: `${source?.name ?? r.source_object_type_id} ${r.name} ${target?.name ?? r.target_object_type_id}. ${r.comment} ${source?.comment ?? ""} ${target?.comment ?? ""}. ${props(source)} ${props(target)}`,
    names: [r.name, r.id, source?.name ?? "", target?.name ?? "", r.source_object_type_id, r.target_object_type_id],
  };
}

function relationLabel(kn: KnowledgeNetwork, r: RelationType, withNetwork: boolean): string {
  const name = (id: string) => kn.object_types.find((o) => o.id === id)?.name ?? id;
  return `${withNetwork ? `[${kn.id}] ` : ""}${r.id} ${r.name}: ${name(r.source_object_type_id)}(${r.source_object_type_id}) → ${name(r.target_object_type_id)}(${r.target_object_type_id})${r.comment ? ` — ${r.comment}` : ""}`;
}

/** An object type as ranking sees it: its name, comment and property names. */
export function objectCandidate(o: ObjectType): Candidate {
  return {
    text: `${o.name} ${o.comment} ${o.data_properties.map((p) => p.display_name || p.name).join(" ")}`,
    names: [o.name, o.id],
  };
}

function recalledObjectType(
  kn: KnowledgeNetwork,
  o: ObjectType,
  score: number,
  aliasRelations: readonly string[],
): RecalledObjectType {
  return {
    kn_id: kn.id,
    id: o.id,
    name: o.name,
    comment: o.comment,
    primary_keys: o.primary_keys,
    display_key: o.display_key,
    data_properties: o.data_properties,
    logic_properties: o.logic_properties.map((lp) => ({
      name: lp.name,
      display_name: lp.display_name,
      type: lp.type,
      comment: lp.comment,
    })),
    score,
    alias_links: aliasLinksOf(kn, o, aliasRelations),
  };
}
