import type { Json } from "../../core/json";
import type { KnSearchAnswer } from "./answer";

/**
 * The answer in the spec's JSON shapes: a brief object type is concept_id,
 * concept_name, comment, data_properties and logic_properties by name and
 * display_name (and sample_data); a full one adds concept_type, the
 * properties' details, primary_keys, display_key and tags. Each node is
 * `{object_type_id, <object_type_id>_name, unique_identities, final_score,
 * data_properties}`. Beyond the spec: kn_id on every concept and node (which
 * network, when several are searched), object_type_name on nodes,
 * session_id, and warnings when there are any.
 */
export function renderAnswer(a: KnSearchAnswer): Record<string, Json> {
  const out: Record<string, Json> = {
    object_types: a.object_types.map((o) => {
      const full = o.primary_keys !== undefined;
      return {
        ...(full ? { concept_type: "object_type" } : {}),
        concept_id: o.concept_id,
        concept_name: o.concept_name,
        comment: o.comment,
        data_properties: o.data_properties.map((p) => ({ ...p })),
        logic_properties: o.logic_properties.map((p) => ({ ...p })),
        ...(full ? { primary_keys: o.primary_keys!, display_key: o.display_key ?? "", tags: o.tags ?? [] } : {}),
        ...(o.sample_data !== undefined ? { sample_data: o.sample_data } : {}),
        kn_id: o.kn_id,
      };
    }),
    relation_types: a.relation_types.map((r) => ({
      ...(r.comment !== undefined ? { concept_type: "relation_type" } : {}),
      concept_id: r.concept_id,
      concept_name: r.concept_name,
      source_object_type_id: r.source_object_type_id,
      target_object_type_id: r.target_object_type_id,
      ...(r.comment !== undefined ? { comment: r.comment } : {}),
      kn_id: r.kn_id,
    })),
    action_types: a.action_types.map((t) => ({ ...t })),
  };
  if (a.nodes !== undefined) {
    out["nodes"] = a.nodes.map((n) => ({
      object_type_id: n.object_type_id,
      [`${n.object_type_id}_name`]: n.instance_name,
      unique_identities: n.unique_identities,
      final_score: n.final_score,
      data_properties: n.data_properties,
      object_type_name: n.object_type_name,
      kn_id: n.kn_id,
    }));
  }
  if (a.message !== undefined) out["message"] = a.message;
  out["session_id"] = a.session_id;
  if (a.warnings.length > 0) out["warnings"] = a.warnings.map((w) => ({ ...w }));
  return out;
}
