import type { Json } from "../../../core/json";
import type { ObjectType } from "../../../kn/types";

/**
 * Instance rows laid out for the compact answers: one flat row per instance
 * (`_instance_id`, `_display`, the identity keys, the data properties,
 * `_score`), so TOON writes them as a table; the logic property cells that
 * include_logic_params adds go to a table of their own, a row per instance
 * and property.
 */
export function flatRows(
  type: ObjectType,
  rows: readonly { id: string; display: Json; identity: Record<string, Json>; values: Record<string, Json> }[],
): { rows: Record<string, Json>[]; logicParams: Record<string, Json>[] } {
  const logic = new Set(type.logic_properties.map((lp) => lp.name));
  const out: Record<string, Json>[] = [];
  const logicParams: Record<string, Json>[] = [];
  for (const r of rows) {
    const row: Record<string, Json> = { _instance_id: r.id, _display: r.display, ...r.identity };
    for (const [k, v] of Object.entries(r.values)) {
      if (k === "_instance_id" || k === "_instance_identity" || k === "_display") continue;
      if (logic.has(k) && v !== null && typeof v === "object" && !Array.isArray(v)) {
        logicParams.push({ _instance_id: r.id, property: k, ...v });
        continue;
      }
      row[k] = v;
    }
    out.push(row);
  }
  return { rows: out, logicParams };
}
