import type { Json } from "../../../core/json";
import { compact, table } from "../../../core/tables";
import { flatRows } from "../conditions/rows";
import type { CheckedPath } from "./check-paths";
import type { SubgraphAnswer, SubgraphAnswerEntry } from "./query-subgraph";

/**
 * query_instance_subgraph's compact answer, per path template: the walk
 * (`disease -[has_symptom]-> symptom`, `<-[…]-` for an edge walked against
 * its definition), each found path as a row of instance ids (a column per
 * node), and the instances as one table per object type.
 */
export function subgraphAnswer(a: SubgraphAnswer): Json {
  return compact({
    entries: a.entries.map(entryAnswer),
    warnings: table(a.warnings.map((w) => ({ ...w }))),
  });
}

function entryAnswer(e: SubgraphAnswerEntry): Json {
  const columns = nodeColumns(e.template);
  const byType = new Map<string, SubgraphAnswerEntry["objects"][string][]>();
  for (const o of Object.values(e.objects)) byType.set(o.object_type_id, [...(byType.get(o.object_type_id) ?? []), o]);
  const objects: Record<string, Json> = {};
  const logicParams: Record<string, Json>[] = [];
  const identityKeys: Record<string, Json> = {};
  for (const [typeId, list] of byType) {
    const type = e.template.nodes.find((n) => n.id === typeId);
    if (!type) continue;
    const flat = flatRows(
      type,
      list.map((o) => ({
        id: o._instance_id,
        display: o._display,
        identity: o._instance_identity,
        values: o.properties,
      })),
    );
    objects[typeId] = table(flat.rows);
    logicParams.push(...flat.logicParams);
    identityKeys[typeId] = type.primary_keys.join(", ");
  }
  return compact({
    path: walkText(e.template),
    total_count: e.total_count,
    message: e.message,
    paths: table(
      e.relation_paths.map((p) => {
        const row: Record<string, Json> = {};
        p.relations.forEach((r, i) => {
          if (i === 0) row[columns[0]!] = r.source_object_id;
          row[columns[i + 1]!] = r.target_object_id;
        });
        return row;
      }),
    ),
    identity_keys: identityKeys,
    objects,
    logic_params: table(logicParams),
  });
}

/** A column per node: its object type id, numbered when a type comes back (disease, disease#2). */
function nodeColumns(t: CheckedPath): string[] {
  const seen = new Map<string, number>();
  return t.query.object_types.map((n) => {
    const k = (seen.get(n.id) ?? 0) + 1;
    seen.set(n.id, k);
    return k === 1 ? n.id : `${n.id}#${k}`;
  });
}

/** "disease -[has_symptom]-> symptom <-[cures]- drugs": the walk, each edge's arrow in its direction. */
function walkText(t: CheckedPath): string {
  const columns = nodeColumns(t);
  return columns
    .map((c, i) => {
      const edge = t.edges[i];
      if (!edge) return c;
      return edge.direction === "forward" ? `${c} -[${edge.relation.id}]->` : `${c} <-[${edge.relation.id}]-`;
    })
    .join(" ");
}
