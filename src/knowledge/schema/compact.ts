import { yaml } from "../compact-yaml";
import type { RecalledObjectType, RecalledRelationType } from "../session";

/**
 * RetrieveSchema's compact answer: the object types as YAML (see
 * compact-yaml.ts). When a session spans several networks, keys are
 * "<kn_id>/<id>".
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
        ? {
            logic_properties: o.logic_properties.map((lp) => ({
              name: lp.name,
              display_name: lp.display_name,
              type: lp.type,
            })),
          }
        : {}),
    };
  }
  return yaml({ objects });
}

/** The relation types as YAML, keyed like compactObjects. */
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
