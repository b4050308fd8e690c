import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import type { Json } from "../../core/json";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import type { KnowledgeNetwork, ObjectType } from "../../kn/types";
import type { SchemaDeps } from "../deps";
import { semanticRelevance } from "../relevance/semantic";
import { recordSchemaRound } from "../schema/retrieve-schema";
import {
  newSince,
  type RecalledActionType,
  type RecalledObjectType,
  type RecalledRelationType,
  unionOf,
} from "../session";
import type { KnActionType, KnObjectType, KnProperty, KnRelationType, KnWarning } from "./answer";
import { coarseNetwork, NarrowedBackend } from "./coarse-recall";
import type { ConceptRetrievalConfig, KnSearchInput } from "./input";

/** Sample instances fetched at once. */
const SAMPLE_CONCURRENCY = 8;
/** Property descriptions embedded per request for the property brief. */
const PROPERTY_BATCH = 128;

/** What concept recall found in this round, and what the answer shows of the session. */
export interface RecalledConcepts {
  /** This round's object types, every one (instance recall searches them). */
  round: RecalledObjectType[];
  /** The session's types as the answer shows them: this round's new ones, or with return_union every round's. */
  shown: {
    object_types: RecalledObjectType[];
    relation_types: RecalledRelationType[];
    action_types: RecalledActionType[];
  };
  /** The full definitions fetched in this call, by network id. */
  networks: ReadonlyMap<string, KnowledgeNetwork>;
  warnings: KnWarning[];
}

/**
 * Concept recall is schema recall (RetrieveSchema: the top_k relation types
 * for the question, ranked by the reranker, embeddings and tokens, or the LLM
 * with skip_llm=false; the object types at their ends; their action types;
 * the round recorded in the session) over networks narrowed by coarse recall
 * first. The session's rounds then say which types are new this round.
 */
export async function recallConcepts(
  deps: SchemaDeps,
  ctx: CallContext,
  input: KnSearchInput,
  sessionId: string,
): Promise<RecalledConcepts> {
  const cfg = input.retrieval_config.concept_retrieval;
  const question = questionOf(input);
  const backend = new NarrowedBackend(deps.backend, (kn, c) => {
    const narrowed = coarseNetwork(kn, question, cfg, deps.descriptions);
    if (narrowed !== kn) {
      c.log.info(
        {
          kn_id: kn.id,
          relation_types: [kn.relation_types.length, narrowed.relation_types.length],
          object_types: [kn.object_types.length, narrowed.object_types.length],
        },
        "coarse recall narrowed the network",
      );
    }
    return narrowed;
  });
  // Asked for the union so that an empty answer can only mean "nothing recalled this round".
  const {
    result: union,
    priorUnion,
    recorded,
  } = await recordSchemaRound({ ...deps, backend }, ctx, {
    query: input.query,
    kn_ids: input.kn_ids,
    session_id: sessionId,
    additional_context: input.additional_context,
    top_k: cfg.top_k,
    skip_llm: cfg.skip_llm,
    compact_format: false,
    return_union: true,
    session_type: "",
  });
  const warnings: KnWarning[] = union.warnings;
  if (!recorded) {
    return {
      round: [],
      shown: { object_types: [], relation_types: [], action_types: [] },
      networks: backend.fetched,
      warnings,
    };
  }
  if (cfg.return_union) return { round: recorded.object_types, shown: union, networks: backend.fetched, warnings };
  // The rounds before this one: those read before it was recorded, unless a concurrent call of the
  // session recorded one in between (the append numbers the rounds), which only a second read shows.
  const earlier =
    recorded.round === priorUnion.rounds + 1
      ? priorUnion
      : unionOf(
          (await deps.sessions.rounds(deps.sessions.pick(""), ctx.caller, sessionId)).filter(
            (r) => r.round < recorded.round,
          ),
        );
  return {
    round: recorded.object_types,
    shown: newSince(earlier, recorded),
    networks: backend.fetched,
    warnings,
  };
}

/** The text concepts and properties are ranked against: the query, and the additional context when given. */
export function questionOf(input: KnSearchInput): string {
  return input.additional_context ? `${input.query}\n${input.additional_context}` : input.query;
}

export interface ShapedSchema {
  object_types: KnObjectType[];
  relation_types: KnRelationType[];
  action_types: KnActionType[];
  warnings: KnWarning[];
}

/**
 * The concepts as the answer shows them. Brief (schema_brief): object types
 * by concept_id, concept_name, comment and their properties by name and
 * display_name, trimmed by relevance with enable_property_brief
 * (per_object_property_top_k per type, global_property_top_k in all; primary
 * and display keys always stay); relation types without their comment. Full:
 * every property with its type, comment and condition operations, logic
 * properties with data source and parameters, primary_keys, display_key, tags.
 * include_sample_data adds one instance of each object type.
 */
export async function shapeSchema(
  deps: SchemaDeps,
  ctx: CallContext,
  input: KnSearchInput,
  concepts: RecalledConcepts,
): Promise<ShapedSchema> {
  const cfg = input.retrieval_config.concept_retrieval;
  const types = concepts.shown.object_types;
  const warnings: KnWarning[] = [];
  const [kept, samples] = await Promise.all([
    cfg.schema_brief && cfg.enable_property_brief
      ? briefProperties(deps, ctx, questionOf(input), types, cfg)
      : Promise.resolve(undefined),
    cfg.include_sample_data ? sampleData(deps, ctx, types, warnings) : Promise.resolve(undefined),
  ]);
  const definitions = cfg.schema_brief
    ? new Map<string, ObjectType>()
    : await fullDefinitions(deps, ctx, types, concepts.networks, warnings);
  const object_types = types.map((o, i): KnObjectType => {
    const keep = kept?.[i];
    const properties = o.data_properties.filter((p) => !keep || keep.has(p.name));
    const sample = samples ? { sample_data: samples[i] ?? null } : {};
    if (cfg.schema_brief) {
      return {
        kn_id: o.kn_id,
        concept_id: o.id,
        concept_name: o.name,
        comment: o.comment,
        data_properties: properties.map((p): KnProperty => ({ name: p.name, display_name: p.display_name })),
        logic_properties: o.logic_properties.map((lp) => ({ name: lp.name, display_name: lp.display_name })),
        ...sample,
      };
    }
    const definition = definitions.get(`${o.kn_id}/${o.id}`);
    return {
      kn_id: o.kn_id,
      concept_id: o.id,
      concept_name: o.name,
      comment: o.comment,
      data_properties: properties.map((p) => ({
        name: p.name,
        display_name: p.display_name,
        type: p.type,
        comment: p.comment,
        condition_operations: p.condition_operations,
      })),
      logic_properties: definition
        ? definition.logic_properties.map((lp) => ({
            name: lp.name,
            display_name: lp.display_name,
            type: lp.type,
            comment: lp.comment,
            data_source: plainJson(lp.data_source),
            parameters: lp.parameters.map(plainJson),
          }))
        : o.logic_properties.map((lp) => ({
            name: lp.name,
            display_name: lp.display_name,
            type: lp.type,
            comment: lp.comment,
          })),
      primary_keys: o.primary_keys,
      display_key: o.display_key,
      tags: definition?.tags ?? [],
      ...sample,
    };
  });
  return {
    object_types,
    relation_types: concepts.shown.relation_types.map((r) => ({
      kn_id: r.kn_id,
      concept_id: r.id,
      concept_name: r.name,
      source_object_type_id: r.source_object_type_id,
      target_object_type_id: r.target_object_type_id,
      ...(cfg.schema_brief ? {} : { comment: r.comment }),
    })),
    action_types: concepts.shown.action_types.map((a) => ({
      id: a.id,
      name: a.name,
      action_type: a.action_type,
      object_type_id: a.object_type_id,
      object_type_name: a.object_type_name,
      comment: a.comment,
      tags: a.tags,
      kn_id: a.kn_id,
    })),
    warnings,
  };
}

/**
 * The data properties each type keeps in the brief schema: its primary and
 * display keys, then its most relevant others up to per_object_property_top_k,
 * and over all types at most global_property_top_k (the keys alone may exceed
 * it). Relevance: the property's name, display name and comment against the
 * question (words and embeddings).
 */
async function briefProperties(
  deps: SchemaDeps,
  ctx: CallContext,
  question: string,
  types: readonly RecalledObjectType[],
  cfg: ConceptRetrievalConfig,
): Promise<Set<string>[]> {
  const all = types.flatMap((o, t) =>
    o.data_properties.map((p) => ({ t, p, key: o.primary_keys.includes(p.name) || p.name === o.display_key })),
  );
  const scores = await semanticRelevance(
    ctx,
    deps.descriptions,
    question,
    all.map(({ p }) => `${p.name} ${p.display_name} ${p.comment}`),
    PROPERTY_BATCH,
  );
  const kept = types.map(() => new Set<string>());
  for (const { t, p, key } of all) if (key) kept[t]!.add(p.name);
  let budget = Math.max(0, cfg.global_property_top_k - all.filter((a) => a.key).length);
  const others = all
    .map((a, i) => ({ ...a, s: scores[i]!, i }))
    .filter((a) => !a.key)
    .sort((a, b) => b.s - a.s || a.i - b.i);
  for (const { t, p } of others) {
    if (budget === 0) break;
    if (kept[t]!.size >= cfg.per_object_property_top_k) continue;
    kept[t]!.add(p.name);
    budget--;
  }
  return kept;
}

/** One instance of each type (system fields left out); null for a type without instances. A type that cannot be read is a warning. */
async function sampleData(
  deps: SchemaDeps,
  ctx: CallContext,
  types: readonly RecalledObjectType[],
  warnings: KnWarning[],
): Promise<(Record<string, Json> | null)[]> {
  const results = await settleWithLimit(types, SAMPLE_CONCURRENCY, ctx.signal, (o) =>
    deps.backend.queryObjects(ctx, o.kn_id, o.id, { limit: 1 }),
  );
  return results.map((r, i) => {
    if (r.status === "rejected") {
      if (!(r.reason instanceof ToolError)) throw r.reason;
      warnings.push({
        target: `sample_data:${types[i]!.id}`,
        reason: r.reason.reason,
        message: text(
          `no sample of ${types[i]!.id} could be read: ${r.reason.text.en}`,
          `无法读取 ${types[i]!.id} 的样例：${r.reason.text.zh}`,
        )[ctx.language],
      });
      return null;
    }
    const row = r.value.datas[0];
    return row ? Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith("_"))) : null;
  });
}

/**
 * The full definitions of the shown types (logic property data sources and
 * parameters, tags): from the networks this call fetched, and for types of
 * earlier rounds in other networks, fetched now. A network that cannot be
 * read leaves its types as the session recorded them, with a warning.
 */
async function fullDefinitions(
  deps: SchemaDeps,
  ctx: CallContext,
  types: readonly RecalledObjectType[],
  fetched: ReadonlyMap<string, KnowledgeNetwork>,
  warnings: KnWarning[],
): Promise<Map<string, ObjectType>> {
  const missing = [...new Set(types.map((o) => o.kn_id))].filter((id) => !fetched.has(id));
  const more = await Promise.allSettled(missing.map((id) => deps.backend.getKnowledgeNetwork(ctx, id)));
  const networks = [...fetched.values()];
  more.forEach((r, i) => {
    if (r.status === "fulfilled") networks.push(r.value);
    else if (r.reason instanceof ToolError)
      warnings.push({
        target: `kn:${missing[i]}`,
        reason: r.reason.reason,
        message: text(
          `the full definitions of ${missing[i]}'s types could not be read: ${r.reason.text.en}`,
          `无法读取 ${missing[i]} 中类型的完整定义：${r.reason.text.zh}`,
        )[ctx.language],
      });
    else throw r.reason;
  });
  return new Map(networks.flatMap((kn) => kn.object_types.map((o) => [`${kn.id}/${o.id}`, o] as const)));
}

/** A definition as plain JSON (optional fields that are unset left out), as Struct and JSON answers carry it. */
function plainJson(value: object): Record<string, Json> {
  return JSON.parse(JSON.stringify(value)) as Record<string, Json>;
}
