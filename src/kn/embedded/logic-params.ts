import type { Json } from "../../core/json";
import type { LogicProperty, ObjectType } from "../types";

/**
 * The logic property cells ontology-query adds to a row when asked with
 * `include_logic_params=true`: per logic property, what it maps to and its
 * parameters as this instance fills them. Parameters taken from the row's
 * properties or constants are filled in; `input` parameters are the caller's
 * to give (as dynamic_params of a property value query) and are listed with a
 * null value, `has_any_unfilled_params` saying whether there are any.
 * Metric parameters are the metric model's filters, as the platform shows them.
 */
export function logicParamCells(type: ObjectType, row: Record<string, Json>): Record<string, Json> {
  const cells: Record<string, Json> = {};
  for (const lp of type.logic_properties) cells[lp.name] = cellOf(lp, row);
  return cells;
}

function cellOf(lp: LogicProperty, row: Record<string, Json>): Json {
  const dynamic: Record<string, Json> = {};
  const filled: { name: string; operation: string; value: Json }[] = [];
  for (const p of lp.parameters) {
    if (p.value_from === "input") {
      dynamic[p.name] = null;
      continue;
    }
    const value = p.value_from === "property" ? (row[String(p.value)] ?? null) : (p.value ?? null);
    filled.push({ name: p.name, operation: p.operation ?? "", value });
  }
  return {
    property_type: lp.type,
    mapping_source_id: lp.data_source.id,
    has_any_unfilled_params: Object.keys(dynamic).length > 0,
    parameters:
      lp.type === "metric" ? { filters: filled } : Object.fromEntries(filled.map((f) => [f.name, f.value] as const)),
    dynamic_params: dynamic,
  };
}
