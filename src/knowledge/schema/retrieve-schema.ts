import { randomUUID } from "node:crypto";
import { topIndexes } from "../../core/scores";
import { ToolError } from "../../errors/tool-error";
import type { CallContext } from "../../core/call-context";
import type { KnowledgeNetwork, ObjectType, RelationType } from "../../kn/types";
import { compactObjects, compactRelations } from "./compact";
import { MAX_LLM_CANDIDATES, rankWithLlm, rankWithoutLlm, type Candidate, type Ranking } from "../relevance/rank";
import { llmNotConfigured } from "../../errors/common";
import {
  unionOf,
  type RecalledActionType,
  type RecalledObjectType,
  type RecalledRelationType,
  type SchemaRound,
} from "../session";
import type { SchemaDeps } from "../deps";
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
export async function retrieveSchema(deps: SchemaDeps, ctx: CallContext, input: RetrieveSchemaInput): Promise<SchemaResult> {
  const store = deps.sessions.pick(input.session_type);
  if (!input.skip_llm && !deps.llm) {
    throw llmNotConfigured({
      needs: "skip_llm=false needs an LLM",
      field: { field: "skip_llm", description: "no LLM is configured; use skip_llm=true" },
      instead: "Call again with skip_llm=true: relation types are then ranked by the reranker or by embeddings and tokens.",
    });
  }
  const sessionId = input.session_id || randomUUID();
  const knIds = [...new Set(input.kn_ids.map((k) => k.knowledge_network_id))];
  const warnings: SchemaResult["warnings"] = [];
  const fetched = await Promise.allSettled(knIds.map((id) => deps.backend.getKnowledgeNetwork(ctx, id)));
  const networks: KnowledgeNetwork[] = [];
  fetched.forEach((f, i) => {
    if (f.status === "fulfilled") networks.push(f.value);
    else if (f.reason instanceof ToolError) warnings.push({ target: `kn:${knIds[i]}`, reason: f.reason.reason, message: f.reason.message });
    else throw f.reason;
  });
  if (networks.length === 0) throw (fetched[0] as PromiseRejectedResult).reason;

  const question = input.additional_context ? `${input.query}\n${input.additional_context}` : input.query;
  const relations = networks.flatMap((kn) => kn.relation_types.map((r) => ({ kn, r })));
  const loneTypes = networks.filter((kn) => kn.relation_types.length === 0).flatMap((kn) => kn.object_types.map((o) => ({ kn, o })));
  const prior = await deps.sessions.rounds(store, ctx.caller, sessionId);

  const relationRanking = await rank(deps, ctx, input, question, prior, relations.map(({ kn, r }) => relationCandidate(kn, r)), "relation types", relations.map(({ kn, r }) => relationLabel(kn, r, networks.length > 1)));
  const typeRanking = await rank(deps, ctx, input, question, prior, loneTypes.map(({ o }) => objectCandidate(o)), "object types", loneTypes.map(({ kn, o }) => `${networks.length > 1 ? `[${kn.id}] ` : ""}${o.id} ${o.name}: ${o.comment}`));
  warnings.push(...relationRanking.warnings, ...typeRanking.warnings);

  const keptRelations = top(relationRanking.scores, input.top_k, input.skip_llm).map((i) => ({ ...relations[i]!, score: relationRanking.scores[i]! }));
  const keptTypes = top(typeRanking.scores, 2 * input.top_k, input.skip_llm).map((i) => ({ ...loneTypes[i]!, score: typeRanking.scores[i]! }));

  const objectTypes = new Map<string, RecalledObjectType>();
  const addType = (kn: KnowledgeNetwork, id: string, score: number) => {
    const key = `${kn.id}/${id}`;
    const known = objectTypes.get(key);
    if (known) known.score = Math.max(known.score, score);
    else {
      const o = kn.object_types.find((t) => t.id === id);
      if (o) objectTypes.set(key, recalledObjectType(kn.id, o, score));
    }
  };
  for (const { kn, r, score } of keptRelations) {
    addType(kn, r.source_object_type_id, score);
    addType(kn, r.target_object_type_id, score);
  }
  for (const { kn, o, score } of keptTypes) addType(kn, o.id, score);
  const relationTypes: RecalledRelationType[] = keptRelations.map(({ kn, r, score }) => ({
    kn_id: kn.id,
    id: r.id,
    name: r.name,
    comment: r.comment,
    source_object_type_id: r.source_object_type_id,
    target_object_type_id: r.target_object_type_id,
    score,
  }));
  const actionTypes: RecalledActionType[] = networks.flatMap((kn) =>
    kn.action_types
      .filter((a) => objectTypes.has(`${kn.id}/${a.object_type_id}`))
      .map((a) => ({ ...a, kn_id: kn.id, object_type_name: objectTypes.get(`${kn.id}/${a.object_type_id}`)!.name })),
  );

  const method = relations.length > 0 ? relationRanking.method : typeRanking.method;
  if (objectTypes.size === 0 && relationTypes.length === 0) {
    // Nothing recalled (the LLM chose nothing): the session keeps what it had, and the agent is told.
    warnings.push({
      target: "schema",
      reason: method === "llm" ? "LLM_SELECTED_NOTHING" : "NOTHING_RECALLED",
      message: "no relation or object type was judged relevant to the question; the session's schema is unchanged. Rephrase the question, or call with skip_llm=true for the best-ranked types.",
    });
    return {
      session_id: sessionId,
      round: prior.length,
      ranking_method: method,
      object_types: [],
      relation_types: [],
      action_types: [],
      compact: input.compact_format ? { objects: compactObjects([], false), relations: compactRelations([], false) } : undefined,
      warnings,
    };
  }
  const thisRound: Omit<SchemaRound, "round"> = {
    query: input.query,
    kn_ids: networks.map((kn) => kn.id),
    ranking_method: method,
    object_types: [...objectTypes.values()],
    relation_types: relationTypes,
    action_types: actionTypes,
  };
  const round = await deps.sessions.addRound(store, ctx.caller, sessionId, thisRound);
  const before = unionOf(prior);
  const shown = input.return_union
    ? unionOf([...prior, { ...thisRound, round }])
    : {
        object_types: thisRound.object_types.filter((o) => !before.object_types.some((b) => b.kn_id === o.kn_id && b.id === o.id)),
        relation_types: thisRound.relation_types.filter((r) => !before.relation_types.some((b) => b.kn_id === r.kn_id && b.id === r.id)),
        action_types: thisRound.action_types.filter((a) => !before.action_types.some((b) => b.kn_id === a.kn_id && b.id === a.id)),
      };
  const multiNetwork = new Set([...shown.object_types.map((o) => o.kn_id), ...shown.relation_types.map((r) => r.kn_id)]).size > 1;
  ctx.log.info(
    { session_id: sessionId, round, method, relation_types: relationTypes.length, object_types: objectTypes.size, warnings: warnings.length },
    "schema recalled",
  );
  return {
    session_id: sessionId,
    round,
    ranking_method: method,
    object_types: shown.object_types,
    relation_types: shown.relation_types,
    action_types: shown.action_types,
    compact: input.compact_format
      ? { objects: compactObjects(shown.object_types, multiNetwork), relations: compactRelations(shown.relation_types, multiNetwork) }
      : undefined,
    warnings,
  };
}

async function rank(
  deps: SchemaDeps,
  ctx: CallContext,
  input: RetrieveSchemaInput,
  question: string,
  prior: readonly SchemaRound[],
  candidates: Candidate[],
  what: string,
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
      history: prior.slice(-5).map((r) => `${r.query} → ${r.relation_types.map((rel) => rel.id).join(", ") || r.object_types.map((o) => o.id).join(", ") || "nothing"}`),
      topK: input.top_k,
      what,
      otherwise: "call with skip_llm=true to rank without the LLM",
    },
    shortlist.map((i) => ({ label: labels[i]! })),
  );
  const scores = candidates.map(() => 0);
  shortlist.forEach((i, k) => (scores[i] = chosen.scores[k]!));
  return { scores, method: "llm", warnings: [...lexical.warnings, ...chosen.warnings] };
}

/** Indexes of the `k` best scores, best first (ties keep network order). The LLM's unchosen (0) are never kept. */
function top(scores: readonly number[], k: number, keepZeros: boolean): number[] {
  const best = topIndexes(scores, keepZeros ? k : scores.length);
  return keepZeros ? best : best.filter((i) => scores[i]! > 0).slice(0, k);
}

function relationCandidate(kn: KnowledgeNetwork, r: RelationType): Candidate {
  const source = kn.object_types.find((o) => o.id === r.source_object_type_id);
  const target = kn.object_types.find((o) => o.id === r.target_object_type_id);
  const props = (o: ObjectType | undefined) => (o?.data_properties ?? []).slice(0, 20).map((p) => p.display_name || p.name).join(" ");
  return {
    text: `${source?.name ?? r.source_object_type_id} ${r.name} ${target?.name ?? r.target_object_type_id}. ${r.comment} ${source?.comment ?? ""} ${target?.comment ?? ""}. ${props(source)} ${props(target)}`,
    names: [r.name, r.id, source?.name ?? "", target?.name ?? "", r.source_object_type_id, r.target_object_type_id],
  };
}

function relationLabel(kn: KnowledgeNetwork, r: RelationType, withNetwork: boolean): string {
  const name = (id: string) => kn.object_types.find((o) => o.id === id)?.name ?? id;
  return `${withNetwork ? `[${kn.id}] ` : ""}${r.id} ${r.name}: ${name(r.source_object_type_id)}(${r.source_object_type_id}) → ${name(r.target_object_type_id)}(${r.target_object_type_id})${r.comment ? ` — ${r.comment}` : ""}`;
}

function objectCandidate(o: ObjectType): Candidate {
  return {
    text: `${o.name} ${o.comment} ${o.data_properties.map((p) => p.display_name || p.name).join(" ")}`,
    names: [o.name, o.id],
  };
}

function recalledObjectType(knId: string, o: ObjectType, score: number): RecalledObjectType {
  return {
    kn_id: knId,
    id: o.id,
    name: o.name,
    comment: o.comment,
    primary_keys: o.primary_keys,
    display_key: o.display_key,
    data_properties: o.data_properties,
    logic_properties: o.logic_properties.map((lp) => ({ name: lp.name, display_name: lp.display_name, type: lp.type, comment: lp.comment })),
    score,
  };
}
