import type { Json } from "../core/json";
import type { ActionType, Condition, ObjectType, RelationType } from "./types";

/**
 * Concepts: the types of a knowledge network as the platform searches them
 * (ontology-manager's typed searches), the concept groups that scope such a
 * search, and the metrics defined on the network.
 */

/**
 * A named set of object types, with the relation types between them, the
 * action types on them and the metrics scoped to them: what a search can be
 * restricted to in a large network.
 */
export interface ConceptGroup {
  id: string;
  name: string;
  comment: string;
  tags: string[];
}

/** A metric defined on a network (the platform's MetricDefinition), scoped to what it measures. */
export interface MetricDefinition {
  id: string;
  name: string;
  comment: string;
  /** e.g. "numUnit", "currency". */
  unit_type: string;
  unit: string;
  /** e.g. "atomic", "derived". */
  metric_type: string;
  /** What it is scoped to: "object_type". */
  scope_type: string;
  /** The id of what it is scoped to (an object type id). */
  scope_ref: string;
  /** The time field and its format, when the metric has one. */
  time_dimension?: Record<string, Json>;
  /** How it is computed (the platform's formula object). */
  calculation_formula: Record<string, Json>;
  /** Fields it can be broken down by. */
  analysis_dimensions: string[];
}

/** The concept each kind of search returns. */
export interface ConceptOfKind {
  object_types: ObjectType;
  relation_types: RelationType;
  action_types: ActionType;
  metrics: MetricDefinition;
}

/** The kinds of typed search, named as the platform's paths name them. */
export type ConceptKind = keyof ConceptOfKind;

/**
 * One typed search. The condition is ontology-query's language over the
 * concepts' own fields: `id`, `name`, `comment`, `tags` for every kind, plus
 * `source_object_type_id` / `target_object_type_id` (relation types),
 * `object_type_id` / `action_type` (action types), `scope_type` / `scope_ref`
 * / `metric_type` (metrics); `*` with `match` or `knn` searches the texts.
 */
export interface ConceptSearch {
  condition?: Condition;
  /** Only concepts of these groups (ids); absent or empty: the whole network. */
  concept_groups?: string[];
  /** 1..10000. */
  limit: number;
}

/** A search hit: the concept, with `_score` when the condition scored text. Best first. */
export type ConceptHit<K extends ConceptKind> = ConceptOfKind[K] & { _score?: number };

/** The largest `limit` of a typed search. */
export const MAX_CONCEPT_LIMIT = 10_000;
