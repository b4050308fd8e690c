import type { Json } from "../../../core/json";
import { compact, table } from "../../../core/tables";
import type { ObjectType, RelationType } from "../../../kn/types";
import { propertyTable } from "../../answers";
import type { SearchSchemaResult } from "./search-schema";

/**
 * SearchSchema's answer in two shapes: the platform tool's JSON (what the REST
 * route returns, and what the RPC message is read from — the proto's field
 * names are the platform's), and the compact tables MCP and output_format get.
 */

/**
 * The platform's search_schema answer: `object_types` and `relation_types` as
 * concepts (`concept_id`, `concept_name`, …), `action_types` and
 * `metric_types` by `id`, all four always present. Brief mode leaves out
 * concept_type, tags, primary keys and property and relation comments (an
 * object type keeps its comment, a logic property its data source and
 * parameters). Besides: how relation types were ranked, and any warning.
 */
export function searchSchemaJson(r: SearchSchemaResult): Record<string, Json> {
  return {
    object_types: r.object_types.map((o) => objectTypeJson(o, r.schema_brief)),
    relation_types: r.relation_types.map((rel) => relationTypeJson(rel, r.schema_brief)),
    action_types: r.action_types.map((a) => ({
      id: a.id,
      name: a.name,
      action_type: a.action_type,
      object_type_id: a.object_type_id,
      object_type_name: a.object_type_name,
      comment: a.comment,
      tags: a.tags,
      kn_id: r.kn_id,
    })),
    metric_types: r.metric_types.map((m) =>
      compact({
        id: m.id,
        name: m.name,
        comment: m.comment,
        unit_type: m.unit_type,
        unit: m.unit,
        metric_type: m.metric_type,
        scope_type: m.scope_type,
        scope_ref: m.scope_ref,
        time_dimension: m.time_dimension,
        calculation_formula: m.calculation_formula,
        analysis_dimensions: m.analysis_dimensions,
        logic_property: m.logic_property,
      }),
    ),
    ranking_method: r.ranking_method,
    ...(r.warnings.length > 0 ? { warnings: r.warnings.map((w) => ({ ...w })) } : {}),
  };
}

function objectTypeJson(o: ObjectType, brief: boolean): Record<string, Json> {
  return {
    ...(brief ? {} : { concept_type: "object_type" }),
    concept_id: o.id,
    concept_name: o.name,
    comment: o.comment,
    ...(brief ? {} : { tags: o.tags }),
    data_properties: o.data_properties.map((p) => ({
      name: p.name,
      display_name: p.display_name,
      type: p.type,
      ...(brief ? {} : { comment: p.comment }),
      condition_operations: p.condition_operations,
    })),
    logic_properties: o.logic_properties.map((lp) => ({
      name: lp.name,
      display_name: lp.display_name,
      type: lp.type,
      ...(brief ? {} : { comment: lp.comment }),
      data_source: JSON.parse(JSON.stringify(lp.data_source)) as Json,
      parameters: JSON.parse(JSON.stringify(lp.parameters)) as Json,
    })),
    ...(brief ? {} : { primary_keys: o.primary_keys }),
    display_key: o.display_key,
  };
}

function relationTypeJson(r: RelationType, brief: boolean): Record<string, Json> {
  return {
    ...(brief ? {} : { concept_type: "relation_type" }),
    concept_id: r.id,
    concept_name: r.name,
    ...(brief ? {} : { comment: r.comment }),
    source_object_type_id: r.source_object_type_id,
    target_object_type_id: r.target_object_type_id,
  };
}

/**
 * The compact answer: one table per concept type (data properties one table
 * for every object type, the operations most share said once), a logic
 * property's input parameters (what get_logic_properties_values fills) in a
 * column, a metric's object type and the logic property that evaluates it.
 */
export function searchSchemaAnswer(r: SearchSchemaResult): Json {
  const brief = r.schema_brief;
  return compact({
    kn_id: r.kn_id,
    ranking_method: r.ranking_method,
    object_types: table(
      r.object_types.map((o) => ({
        id: o.id,
        name: o.name,
        comment: o.comment === o.name ? "" : o.comment,
        display_key: o.display_key,
        ...(brief ? {} : { primary_keys: o.primary_keys, tags: o.tags }),
      })),
    ),
    ...propertyTable(
      r.object_types.map((o) => ({
        id: o.id,
        properties: o.data_properties.map((p) => ({
          name: p.name,
          display_name: p.display_name,
          type: p.type,
          ...(brief ? {} : { comment: p.comment }),
          condition_operations: p.condition_operations,
        })),
      })),
    ),
    logic_properties: table(
      r.object_types.flatMap((o) =>
        o.logic_properties.map((lp) => ({
          object_type: o.id,
          name: lp.name,
          display_name: lp.display_name,
          type: lp.type,
          comment: brief ? "" : lp.comment,
          inputs: lp.parameters.filter((p) => p.value_from === "input").map((p) => p.name),
        })),
      ),
    ),
    relation_types: table(
      r.relation_types.map((rel) => ({
        id: rel.id,
        name: rel.name,
        from: rel.source_object_type_id,
        to: rel.target_object_type_id,
        comment: brief ? "" : rel.comment,
      })),
    ),
    action_types: table(
      r.action_types.map((a) => ({
        id: a.id,
        name: a.name,
        object_type: a.object_type_id,
        action_type: a.action_type,
        comment: a.comment,
        tags: a.tags,
      })),
    ),
    metric_types: table(
      r.metric_types.map((m) => ({
        id: m.id,
        name: m.name,
        object_type: m.scope_ref,
        logic_property: m.logic_property,
        metric_type: m.metric_type,
        unit: m.unit,
        comment: m.comment,
        dimensions: m.analysis_dimensions,
        formula: Object.keys(m.calculation_formula).length > 0 ? JSON.stringify(m.calculation_formula) : "",
      })),
    ),
    warnings: table(r.warnings.map((w) => ({ ...w }))),
  });
}
