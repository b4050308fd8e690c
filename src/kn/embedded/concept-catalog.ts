import type { Json } from "../../core/json";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import {
  type ConceptGroup,
  type ConceptHit,
  type ConceptKind,
  type ConceptOfKind,
  type ConceptSearch,
  MAX_CONCEPT_LIMIT,
  type MetricDefinition,
} from "../concepts";
import type { DataProperty, KnowledgeNetwork, ObjectType } from "../types";
import type { Bundle } from "./bundle";
import { evaluateCondition } from "./conditions";
import { ObjectStore } from "./object-store";
import type { ScanBudget } from "./scan-budget";

/** Texts: exact, contains, full-text and vector search. */
const TEXT_OPS = ["==", "!=", "in", "not_in", "like", "not_like", "match", "match_phrase", "knn", "exist", "not_exist"];
/** Ids: exact and contains. */
const KEY_OPS = ["==", "!=", "in", "not_in", "like", "not_like", "exist", "not_exist"];

/** Each kind's searchable fields besides id, name, comment and tags: the ids it refers to. */
const REFERENCES: Record<ConceptKind, string[]> = {
  object_types: [],
  relation_types: ["source_object_type_id", "target_object_type_id"],
  action_types: ["object_type_id", "action_type"],
  metrics: ["scope_type", "scope_ref", "metric_type"],
};

interface KindIndex<K extends ConceptKind> {
  /** One row per concept, keyed by its position in the network (`seq`), so unscored hits keep the network's order. */
  store: ObjectStore;
  concepts: ConceptOfKind[K][];
  /** The object types that put a concept in a group: it belongs to a group holding all of them. */
  anchors(concept: ConceptOfKind[K]): string[];
}

/**
 * A network's concepts as the platform's typed searches see them: each kind
 * (object, relation, action types, metrics) held as a small object store of
 * its fields, so a search condition is evaluated exactly as an instance
 * condition is (match and knn scored, each field limited to its operations),
 * and its concept groups.
 */
export class ConceptCatalog {
  private readonly groups: ConceptGroup[];
  private readonly members: Map<string, Set<string>>;
  private readonly kinds: { [K in ConceptKind]: KindIndex<K> };

  constructor(kn: KnowledgeNetwork, bundle: Bundle) {
    this.groups = bundle.concept_groups.map((g) => ({ id: g.id, name: g.name, comment: g.comment, tags: g.tags }));
    this.members = new Map(bundle.concept_groups.map((g) => [g.id, new Set(g.object_type_ids)]));
    const metrics: MetricDefinition[] = bundle.metric_definitions.map((m) => ({ ...m }));
    this.kinds = {
      object_types: index("object_types", kn.object_types, (o) => [o.id]),
      relation_types: index("relation_types", kn.relation_types, (r) => [
        r.source_object_type_id,
        r.target_object_type_id,
      ]),
      action_types: index("action_types", kn.action_types, (a) => [a.object_type_id]),
      metrics: index("metrics", metrics, (m) => [m.scope_ref]),
    };
  }

  listGroups(): ConceptGroup[] {
    return structuredClone(this.groups);
  }

  /** `budgetOf` gives the call's scan budget over a kind's store. */
  async search<K extends ConceptKind>(
    knId: string,
    kind: K,
    query: ConceptSearch,
    budgetOf: (store: ObjectStore) => ScanBudget,
  ): Promise<ConceptHit<K>[]> {
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_CONCEPT_LIMIT) {
      throw new ToolError({
        code: "invalid_argument",
        reason: "INVALID_QUERY",
        message: text(
          `invalid concept search: limit must be a whole number in 1..${MAX_CONCEPT_LIMIT}`,
          `概念搜索无效：limit 必须是 1..${MAX_CONCEPT_LIMIT} 之间的整数`,
        ),
        violations: [
          {
            field: "limit",
            description: text(`must be in 1..${MAX_CONCEPT_LIMIT}`, `必须在 1..${MAX_CONCEPT_LIMIT} 之间`),
          },
        ],
      });
    }
    const k = this.kinds[kind] as unknown as KindIndex<K>;
    const inGroups = this.groupFilter(knId, query.concept_groups ?? []);
    const matches = await evaluateCondition(k.store, query.condition, budgetOf(k.store));
    const scored = matches.scores.size > 0;
    const rows = matches.rows.filter((i) => inGroups(k.anchors(k.concepts[i]!)));
    if (scored) rows.sort((a, b) => (matches.scores.get(b) ?? 0) - (matches.scores.get(a) ?? 0) || a - b);
    return rows.slice(0, query.limit).map((i) => {
      const hit = structuredClone(k.concepts[i]!) as ConceptHit<K>;
      if (scored) hit._score = matches.scores.get(i) ?? 0;
      return hit;
    });
  }

  /** Whether a concept anchored at these object types is in one of the groups (no group: every concept is). */
  private groupFilter(knId: string, groupIds: string[]): (anchors: string[]) => boolean {
    if (groupIds.length === 0) return () => true;
    const unknown = groupIds.filter((g) => !this.members.has(g));
    if (unknown.length > 0) {
      throw new ToolError({
        code: "not_found",
        reason: "CONCEPT_GROUP_NOT_FOUND",
        message: text(
          `concept group ${unknown.join(", ")} does not exist in knowledge network ${knId}`,
          `知识网络 ${knId} 中不存在概念分组 ${unknown.join(", ")}`,
        ),
        hint: {
          message: text("Use the ids of the network's concept groups.", "使用这个知识网络的概念分组id。"),
          validValues: [...this.members.keys()],
        },
      });
    }
    const sets = groupIds.map((g) => this.members.get(g)!);
    return (anchors) => sets.some((set) => anchors.every((a) => set.has(a)));
  }
}

function index<K extends ConceptKind>(
  kind: K,
  concepts: ConceptOfKind[K][],
  anchors: (c: ConceptOfKind[K]) => string[],
): KindIndex<K> {
  const references = REFERENCES[kind];
  const property = (name: string, ops: string[]): DataProperty => ({
    name,
    display_name: name,
    type: "text",
    comment: "",
    condition_operations: ops,
  });
  const type: ObjectType = {
    id: `concept:${kind}`,
    name: kind,
    comment: "",
    tags: [],
    primary_keys: ["seq"],
    display_key: "name",
    data_properties: [
      property("id", KEY_OPS),
      property("name", TEXT_OPS),
      property("comment", TEXT_OPS),
      property("tags", TEXT_OPS),
      ...references.map((r) => property(r, KEY_OPS)),
    ],
    logic_properties: [],
  };
  const rows = concepts.map((c, seq) => {
    const fields = c as unknown as Record<string, Json>;
    const row: Record<string, Json> = {
      seq,
      id: c.id,
      name: c.name,
      comment: c.comment,
      tags: "tags" in c ? c.tags.join(" ") : "",
    };
    for (const r of references) row[r] = fields[r] ?? null;
    return row;
  });
  return { store: new ObjectStore(type, rows), concepts, anchors };
}
