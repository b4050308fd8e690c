import { yaml } from "../compact-yaml";
import type { KeywordContextResult } from "./result";

/**
 * The context as YAML: instances with their properties, neighbours grouped by
 * relation and direction (with their properties the first time the session
 * returns them).
 */
export function compactContext(r: KeywordContextResult): string {
  return yaml({
    keyword: r.keyword,
    object_type_id: r.object_type_id,
    matched_field: r.matched_field,
    instances: r.instances.map((i) => {
      const groups: Record<string, unknown[]> = {};
      for (const n of i.neighbors) {
        const label = `${n.relation_type_id} ${n.relation_type_name} (${n.relation_direction})`;
        const line = `${n.instance_name} [${n.object_type_id}:${n.instance_id}]`;
        // Properties beyond the id and the name are worth their tokens; the rest is in the line.
        const extra = Object.entries(n.properties ?? {}).filter(
          ([, v]) => v !== null && v !== "" && v !== n.instance_id && v !== n.instance_name,
        );
        (groups[label] ??= []).push(
          n.already_returned
            ? `${line} (already returned)`
            : extra.length > 0
              ? { [line]: Object.fromEntries(extra) }
              : line,
        );
      }
      return {
        instance_id: i.instance_id,
        instance_name: i.instance_name,
        match: `${i.match_type} ${i.score} ${i.matched_fields.join(",")}`.trim(),
        ...(i.already_returned ? { already_returned: true } : { properties: i.properties }),
        ...(Object.keys(groups).length > 0 ? { neighbors: groups } : {}),
      };
    }),
    statistics: r.statistics,
    ...(r.warnings.length > 0 ? { warnings: r.warnings.map((w) => w.message) } : {}),
  });
}
