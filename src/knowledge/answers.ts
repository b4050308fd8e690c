import type { Json } from "../core/json";
import { cell, commonValue, compact, table } from "../core/tables";
import type { KeywordContextResult } from "./keyword-context/result";
import type { KnSearchAnswer } from "./kn-search/answer";
import type { RerankResult } from "./rerank/rerank-concepts";
import type { SchemaResult } from "./schema/retrieve-schema";

/**
 * The knowledge tools' answers in their compact shape: the same facts as the
 * RPCs' structured answers, laid out as tables of flat rows (one per object
 * type, property, relation type, instance, neighbour…) with what rows share
 * said once. This is what MCP tools and `output_format` yaml/toon return;
 * JSON, YAML and TOON are three writings of it.
 */

interface PropertyLike {
  name: string;
  display_name: string;
  type?: string;
  comment?: string;
  condition_operations?: string[];
}

/**
 * Data properties as one table (the object type in each row), a comment left
 * out when it only repeats the display name, and the condition operations
 * most properties share said once (`default_operations`; a row says "default").
 */
export function propertyTable(types: readonly { id: string; properties: readonly PropertyLike[] }[]): {
  default_operations?: Json;
  properties: Record<string, Json>[];
} {
  const rows = types.flatMap((t) =>
    t.properties.map((p) => ({
      object_type: t.id,
      name: p.name,
      display_name: p.display_name,
      ...(p.type !== undefined ? { type: p.type } : {}),
      ...(p.comment !== undefined ? { comment: sameText(p.comment, p.display_name) ? "" : p.comment } : {}),
      ...(p.condition_operations !== undefined ? { operations: cell(p.condition_operations) } : {}),
    })),
  );
  const shared = table(rows);
  const common = commonValue(shared, "operations");
  if (common === undefined || common === "") return { properties: shared };
  return {
    default_operations: common,
    properties: shared.map((r) => (r["operations"] === common ? { ...r, operations: "default" } : r)),
  };
}

/** RetrieveSchema's answer (asked with compact_format=false, so the concepts are there). */
export function schemaAnswer(r: SchemaResult): Json {
  const { knId, knOf } = networkColumn([...r.object_types, ...r.relation_types]);
  return compact({
    session_id: r.session_id,
    round: r.round,
    ranking_method: r.ranking_method,
    kn_id: knId,
    object_types: table(
      r.object_types.map((o) => ({
        ...knOf(o.kn_id),
        id: o.id,
        name: o.name,
        comment: sameText(o.comment, o.name) ? "" : o.comment,
        score: o.score,
        display_key: o.display_key,
        primary_keys: o.primary_keys,
      })),
    ),
    ...propertyTable(r.object_types.map((o) => ({ id: o.id, properties: o.data_properties }))),
    logic_properties: table(
      r.object_types.flatMap((o) =>
        o.logic_properties.map((lp) => ({
          object_type: o.id,
          name: lp.name,
          display_name: lp.display_name,
          type: lp.type,
          comment: lp.comment,
        })),
      ),
    ),
    relation_types: table(
      r.relation_types.map((x) => ({
        ...knOf(x.kn_id),
        id: x.id,
        name: x.name,
        from: x.source_object_type_id,
        to: x.target_object_type_id,
        score: x.score,
        comment: x.comment,
      })),
    ),
    action_types: actionTable(r.action_types, knOf),
    warnings: table(r.warnings.map((w) => ({ ...w }))),
  });
}

/** Properties of instances of several types: one table per type, a row per instance (its id, unless a property already is the id). */
function propertiesByType(
  rows: readonly { type: string; id: string; properties: Record<string, Json> | undefined }[],
): Record<string, Json> {
  const byType = new Map<string, { id: string; properties: Record<string, Json> }[]>();
  for (const r of rows)
    if (r.properties) byType.set(r.type, [...(byType.get(r.type) ?? []), { id: r.id, properties: r.properties }]);
  return Object.fromEntries(
    [...byType].map(([type, list]) => {
      // When a property holds the instance id in every row (its primary key), that column identifies the rows.
      const keyed = Object.keys(list[0]!.properties).some((k) => list.every((r) => r.properties[k] === r.id));
      return [type, table(list.map((r) => (keyed ? r.properties : { id: r.id, ...r.properties })))];
    }),
  );
}

/** RetrieveKeywordContext's answer: the instances, their neighbours, and the properties of those returned in full. */
export function keywordContextAnswer(r: KeywordContextResult): Json {
  return compact({
    session_id: r.session_id,
    keyword: r.keyword,
    object_type_id: r.object_type_id,
    matched_field: r.matched_field,
    instances: table(
      r.instances.map((i) => ({
        id: i.instance_id,
        name: i.instance_name,
        match_type: i.match_type,
        score: i.score,
        matched_fields: i.matched_fields,
        already_returned: i.already_returned,
      })),
    ),
    neighbors: table(
      r.instances.flatMap((i) =>
        i.neighbors.map((n) => ({
          of: i.instance_id,
          relation: n.relation_type_id,
          relation_name: n.relation_type_name,
          direction: n.relation_direction,
          type: n.object_type_id,
          id: n.instance_id,
          name: n.instance_name,
          already_returned: n.already_returned,
        })),
      ),
    ),
    properties: propertiesByType([
      ...r.instances.map((i) => ({ type: i.object_type_id, id: i.instance_id, properties: i.properties })),
      ...r.instances.flatMap((i) =>
        i.neighbors.map((n) => ({ type: n.object_type_id, id: n.instance_id, properties: n.properties })),
      ),
    ]),
    statistics: { ...r.statistics },
    warnings: table(r.warnings.map((w) => ({ ...w }))),
  });
}

/** kn_search's answer: concepts as tables, nodes as one table per object type (identity keys and data properties as columns). */
export function knSearchAnswer(a: KnSearchAnswer): Json {
  const { knId, knOf } = networkColumn([...a.object_types, ...a.relation_types, ...(a.nodes ?? [])]);
  const nodes = new Map<string, Record<string, Json | undefined>[]>();
  for (const n of a.nodes ?? []) {
    const row: Record<string, Json | undefined> = {
      ...knOf(n.kn_id),
      name: n.instance_name,
      score: n.final_score,
      ...n.unique_identities,
      ...n.data_properties,
    };
    nodes.set(n.object_type_id, [...(nodes.get(n.object_type_id) ?? []), row]);
  }
  return compact({
    session_id: a.session_id,
    kn_id: knId,
    object_types: table(
      a.object_types.map((o) => ({
        ...knOf(o.kn_id),
        id: o.concept_id,
        name: o.concept_name,
        comment: sameText(o.comment, o.concept_name) ? "" : o.comment,
        ...(o.display_key !== undefined
          ? { display_key: o.display_key, primary_keys: o.primary_keys ?? [], tags: o.tags ?? [] }
          : {}),
      })),
    ),
    ...propertyTable(a.object_types.map((o) => ({ id: o.concept_id, properties: o.data_properties }))),
    logic_properties: a.object_types.flatMap((o) =>
      o.logic_properties.map((lp) => compact({ object_type: o.concept_id, ...lp })),
    ),
    samples: Object.fromEntries(
      a.object_types.filter((o) => o.sample_data !== undefined).map((o) => [o.concept_id, o.sample_data ?? null]),
    ),
    relation_types: table(
      a.relation_types.map((r) => ({
        ...knOf(r.kn_id),
        id: r.concept_id,
        name: r.concept_name,
        from: r.source_object_type_id,
        to: r.target_object_type_id,
        comment: r.comment,
      })),
    ),
    action_types: actionTable(a.action_types, knOf),
    nodes: Object.fromEntries([...nodes].map(([type, rows]) => [type, table(rows)])),
    message: a.message,
    warnings: table(a.warnings.map((w) => ({ ...w }))),
  });
}

/** RerankConcepts' answer: the kept concepts as a table, their details (as given) apart. */
export function rerankAnswer(r: RerankResult): Json {
  return compact({
    concepts: table(
      r.reranked_concepts.map((c) => ({
        type: c.concept_type,
        id: c.concept_id,
        name: c.concept_name,
        score: c.score,
        rank: c.rank,
      })),
    ),
    details: Object.fromEntries(
      r.reranked_concepts
        .filter((c) => Object.keys(c.concept_detail).length > 0)
        .map((c) => [c.concept_id, c.concept_detail]),
    ),
    filtered_count: r.filtered_count,
  });
}

/** A comment that only repeats a name (case and surrounding blanks aside) says nothing more. */
function sameText(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * Which network each row is from: said once (`kn_id` at the top) when every
 * concept is from one network, else a `kn_id` column in each table.
 */
function networkColumn(items: readonly { kn_id: string }[]): {
  knId: string | undefined;
  knOf: (kn: string) => { kn_id?: string };
} {
  const networks = new Set(items.map((i) => i.kn_id));
  if (networks.size > 1) return { knId: undefined, knOf: (kn) => ({ kn_id: kn }) };
  return { knId: [...networks][0], knOf: () => ({}) };
}

/** Action types as one table (both answers list the same fields). */
function actionTable(
  types: readonly {
    kn_id: string;
    id: string;
    name: string;
    action_type: string;
    object_type_id: string;
    comment: string;
    tags: readonly string[];
  }[],
  knOf: (kn: string) => { kn_id?: string },
): Record<string, Json>[] {
  return table(
    types.map((t) => ({
      ...knOf(t.kn_id),
      id: t.id,
      name: t.name,
      action_type: t.action_type,
      object_type: t.object_type_id,
      comment: t.comment,
      tags: [...t.tags],
    })),
  );
}
