import { stringify } from "yaml";
import type { RecalledObjectType, RecalledRelationType } from "../session";

/**
 * The compact format of knowledge_retrieve (data-retrieval-tools §7.1): YAML
 * text, fewer tokens than JSON for an LLM to read. Built with a YAML library
 * from the data, so names with colons, quotes or newlines stay intact. When a
 * session spans several networks, keys are "<kn_id>/<id>".
 */
export function compactObjects(objectTypes: readonly RecalledObjectType[], withNetwork: boolean): string {
  const objects: Record<string, unknown> = {};
  for (const o of objectTypes) {
    objects[withNetwork ? `${o.kn_id}/${o.id}` : o.id] = {
      name: o.name,
      score: o.score,
      ...(o.comment ? { comment: o.comment } : {}),
      primary_keys: o.primary_keys,
      display_key: o.display_key,
      properties: o.data_properties.map((p) => ({
        name: p.name,
        display_name: p.display_name,
        type: p.type,
        ...(p.comment && p.comment !== p.display_name ? { comment: p.comment } : {}),
      })),
      ...(o.logic_properties.length > 0
        ? { logic_properties: o.logic_properties.map((lp) => ({ name: lp.name, display_name: lp.display_name, type: lp.type })) }
        : {}),
    };
  }
  return yaml({ objects });
}

export function compactRelations(relationTypes: readonly RecalledRelationType[], withNetwork: boolean): string {
  const relations: Record<string, unknown> = {};
  const id = (kn: string, x: string) => (withNetwork ? `${kn}/${x}` : x);
  for (const r of relationTypes) {
    relations[id(r.kn_id, r.id)] = {
      name: r.name,
      score: r.score,
      from: id(r.kn_id, r.source_object_type_id),
      to: id(r.kn_id, r.target_object_type_id),
      ...(r.comment ? { comment: r.comment } : {}),
    };
  }
  return yaml({ relations });
}

/** YAML without line folding, so long Chinese texts stay on one line. */
export function yaml(value: unknown): string {
  return stringify(value, { lineWidth: 0 });
}
