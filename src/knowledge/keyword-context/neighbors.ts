import type { CallContext } from "../../core/call-context";
import { settleWithLimit } from "../../core/concurrency";
import { text } from "../../errors/text";
import { ToolError } from "../../errors/tool-error";
import { identityCondition, instanceIdOf } from "../../kn/identity";
import {
  MAX_OBJECT_LIMIT,
  type RelationTypePath,
  type Row,
  type SubgraphEntry,
  type SubgraphObject,
} from "../../kn/types";
import type { KeywordContextDeps } from "../deps";
import type { RecalledObjectType, RecalledRelationType } from "../session";
import type { KeywordContextWarning } from "./result";

/** Spec §4.2 step 5: at most 10 neighbours per relation type, 50 per instance. */
export const MAX_NEIGHBORS_PER_RELATION = 10;
export const MAX_NEIGHBORS_PER_INSTANCE = 50;

export interface FoundNeighbor {
  id: string;
  object: SubgraphObject;
  relation: RecalledRelationType;
  direction: "outgoing" | "incoming";
}

interface PlannedPath {
  instance: number;
  relation: RecalledRelationType;
  direction: "outgoing" | "incoming";
  /** Which node of the path holds the neighbour. */
  neighborNode: 0 | 1;
  path: RelationTypePath;
}

/**
 * The one-hop neighbours of each chosen instance over the session's relation
 * types of its object type, both directions, in one round trip: every path
 * planned first, then sent `pathsPerRequest` to a request, `concurrency`
 * requests at once. A batch that fails is a warning naming its relation
 * types; all of them failing is one warning, never an error (the instances
 * stand on their own).
 */
export async function findNeighbors(
  deps: KeywordContextDeps,
  ctx: CallContext,
  ot: RecalledObjectType,
  instances: readonly Row[],
  relations: readonly RecalledRelationType[],
  warnings: KeywordContextWarning[],
): Promise<FoundNeighbor[][]> {
  const plans = planPaths(ot, instances, relations);
  const { pathsPerRequest, concurrency } = deps.keywordContext;
  const batches: PlannedPath[][] = [];
  for (let i = 0; i < plans.length; i += pathsPerRequest) batches.push(plans.slice(i, i + pathsPerRequest));
  const results = await settleWithLimit(batches, concurrency, ctx.signal, (batch) =>
    deps.backend.querySubgraph(ctx, ot.kn_id, { relation_type_paths: batch.map((p) => p.path) }),
  );
  const found: FoundNeighbor[][] = instances.map(() => []);
  const failedBatches = results.filter((r) => r.status === "rejected");
  if (failedBatches.length === batches.length && batches.length > 0) {
    const reason = (failedBatches[0] as PromiseRejectedResult).reason;
    if (!(reason instanceof ToolError)) throw reason;
    warnings.push({
      target: "neighbors",
      reason: reason.reason,
      message: text(`no neighbour could be read: ${reason.text.en}`, `无法读取任何邻居：${reason.text.zh}`)[
        ctx.language
      ],
    });
  }
  results.forEach((r, b) => {
    const batch = batches[b]!;
    if (r.status === "rejected") {
      if (!(r.reason instanceof ToolError)) throw r.reason;
      if (failedBatches.length < batches.length) {
        const what = [...new Set(batch.map((p) => `${p.relation.id} (${p.direction})`))].join(", ");
        const count = new Set(batch.map((p) => p.instance)).size;
        warnings.push({
          target: `neighbors:${what}`,
          reason: r.reason.reason,
          message: text(
            `neighbours over ${what} of ${count} instance(s) could not be read: ${r.reason.text.en}`,
            `无法读取 ${count} 个实例经由 ${what} 的邻居：${r.reason.text.zh}`,
          )[ctx.language],
        });
      }
      return;
    }
    for (const [k, plan] of batch.entries()) {
      collect(found[plan.instance]!, plan, r.value.entries[k], instances[plan.instance]!._instance_id);
    }
  });
  return found;
}

/** One path per (instance, relation type, direction) the instance's type takes part in. */
function planPaths(
  ot: RecalledObjectType,
  instances: readonly Row[],
  relations: readonly RecalledRelationType[],
): PlannedPath[] {
  const plans: PlannedPath[] = [];
  instances.forEach((row, instance) => {
    const self: RelationTypePath["object_types"][number] = {
      id: ot.id,
      condition: identityCondition(row._instance_identity),
      limit: 1,
    };
    for (const r of relations) {
      const edge = (from: string, to: string) => [
        { relation_type_id: r.id, source_object_type_id: from, target_object_type_id: to },
      ];
      if (r.source_object_type_id === ot.id) {
        plans.push({
          instance,
          relation: r,
          direction: "outgoing",
          neighborNode: 1,
          path: {
            object_types: [self, { id: r.target_object_type_id, limit: MAX_NEIGHBORS_PER_RELATION }],
            relation_types: edge(ot.id, r.target_object_type_id),
            limit: MAX_NEIGHBORS_PER_RELATION,
          },
        });
      }
      if (r.target_object_type_id === ot.id) {
        // Start at the matched instance and walk the edge backward; a self-relation
        // cannot say "backward", so its incoming side puts the instance at the end.
        const selfRelation = r.source_object_type_id === ot.id;
        const path: RelationTypePath = selfRelation
          ? // No limit of 10 on the first node: a platform applying it before the path filter would keep 10 unrelated objects.
            {
              object_types: [{ id: ot.id, limit: MAX_OBJECT_LIMIT }, self],
              relation_types: edge(ot.id, ot.id),
              limit: MAX_NEIGHBORS_PER_RELATION,
            }
          : {
              object_types: [self, { id: r.source_object_type_id, limit: MAX_NEIGHBORS_PER_RELATION }],
              relation_types: edge(ot.id, r.source_object_type_id),
              limit: MAX_NEIGHBORS_PER_RELATION,
            };
        plans.push({ instance, relation: r, direction: "incoming", neighborNode: selfRelation ? 0 : 1, path });
      }
    }
  });
  return plans;
}

/** Adds a path's neighbours of instance `self` to `list`, at most MAX_NEIGHBORS_PER_INSTANCE and each once. */
function collect(list: FoundNeighbor[], plan: PlannedPath, entry: SubgraphEntry | undefined, self: string): void {
  for (const p of entry?.relation_paths ?? []) {
    if (list.length >= MAX_NEIGHBORS_PER_INSTANCE) break;
    const rel = p.relations[0];
    if (!rel) continue;
    const [mine, theirs] =
      plan.neighborNode === 1
        ? [rel.source_object_id, rel.target_object_id]
        : [rel.target_object_id, rel.source_object_id];
    const object = entry!.objects[theirs];
    if (mine !== self || !object) continue;
    const id = instanceIdOf(object._instance_identity, Object.keys(object._instance_identity));
    const known = list.some(
      (n) =>
        n.id === id &&
        n.object.object_type_id === object.object_type_id &&
        n.relation.id === plan.relation.id &&
        n.direction === plan.direction,
    );
    if (!known) list.push({ id, object, relation: plan.relation, direction: plan.direction });
  }
}
