import type { CallContext } from "../../../core/call-context";
import { type Language, text } from "../../../errors/text";
import type { KnowledgeNetworkBackend } from "../../../kn/backend";
import { knIdOf } from "../../../kn/kn-id";
import type { SubgraphEntry, SubgraphObject, SubgraphRelation } from "../../../kn/types";
import { noProblems } from "../conditions/check-condition";
import { invalidQuery } from "../conditions/check-query";
import { platformFailure } from "../conditions/platform-failure";
import { networkOf, SEARCH_SCHEMA_RPC } from "../conditions/schema-lookup";
import { type CheckedPath, type Correction, checkPaths, type Direction } from "./check-paths";
import type { QueryInstanceSubgraphInput } from "./input";

/** A found path's edge, with the way the walk took its relation. */
export interface DirectedRelation extends SubgraphRelation {
  direction: Direction;
}

/** The answer for one path template. */
export interface SubgraphAnswerEntry {
  /** The template as checked (nodes' types, edges' relations and directions), for the compact answer. */
  template: CheckedPath;
  objects: Record<string, SubgraphObject>;
  relation_paths: { relations: DirectedRelation[]; length: number }[];
  /** Paths matching the template in all, limits aside, when the backend counts them. */
  total_count?: number;
  /** Why there is no path, or that limits cut the answer. */
  message: string;
}

export interface SubgraphAnswer {
  entries: SubgraphAnswerEntry[];
  /** What was corrected in the request. */
  warnings: Correction[];
}

/**
 * query_instance_subgraph: the instances along relation type paths. Every
 * template is checked against the network's schema before the platform is
 * called (see check-paths.ts); each relation of a found path says whether the
 * walk took it forward or backward; an entry without paths says which node
 * has no matching instance, or that they are not linked.
 */
export async function queryInstanceSubgraph(
  deps: { backend: KnowledgeNetworkBackend },
  ctx: CallContext,
  input: QueryInstanceSubgraphInput,
): Promise<SubgraphAnswer> {
  const knId = knIdOf(input.kn_id, ctx);
  const network = await networkOf(deps.backend, ctx, knId);
  const problems = noProblems();
  const warnings: Correction[] = [];
  const templates = checkPaths(input.relation_type_paths, network, problems, warnings, ctx.language);
  if (problems.violations.length > 0) {
    const unknownTypes = problems.violations.some((v) => /\.(id|relation_type_id)$/.test(v.field));
    throw invalidQuery(problems, text("invalid relation_type_paths", "relation_type_paths 无效"), {
      reason: "INVALID_RELATION_PATH",
      ...(unknownTypes
        ? {
            next: {
              message: text(
                "SearchSchema lists the object and relation types (each relation with its source → target).",
                "SearchSchema 列出对象类型和关系类型（每个关系都带有它的 source → target）。",
              ),
              nextRpc: SEARCH_SCHEMA_RPC,
            },
          }
        : {}),
    });
  }
  let result: Awaited<ReturnType<KnowledgeNetworkBackend["querySubgraph"]>>;
  try {
    result = await deps.backend.querySubgraph(ctx, knId, {
      relation_type_paths: templates.map((t) => t.query),
      ...(input.include_logic_params ? { include_logic_params: true } : {}),
    });
  } catch (err) {
    throw platformFailure(err, text("the subgraph query", "子图查询"));
  }
  const entries = await Promise.all(
    templates.map(async (template, i) => {
      const entry: SubgraphEntry = result.entries[i] ?? { objects: {}, relation_paths: [] };
      const out: SubgraphAnswerEntry = {
        template,
        objects: entry.objects,
        relation_paths: entry.relation_paths.map((p) => ({
          relations: p.relations.map((r) => ({ ...r, direction: directionOf(r, entry.objects, template) })),
          length: p.length,
        })),
        message: "",
      };
      if (entry.total_count !== undefined) out.total_count = entry.total_count;
      out.message =
        out.relation_paths.length === 0
          ? await whyEmpty(deps.backend, ctx, knId, template)
          : cutMessage(out.relation_paths.length, out.total_count, template, ctx.language);
      return out;
    }),
  );
  return { entries, warnings };
}

/**
 * Which way the walk took a found edge: forward when its source object is of
 * the relation's source type (a self-relation always is).
 */
function directionOf(r: SubgraphRelation, objects: Record<string, SubgraphObject>, template: CheckedPath): Direction {
  const edge = template.edges.find((e) => e.relation.id === r.relation_type_id);
  const sourceType = objects[r.source_object_id]?.object_type_id;
  if (!edge) return "forward";
  if (sourceType === undefined) return edge.direction;
  return sourceType === edge.relation.source_object_type_id ? "forward" : "backward";
}

/** Why a template found no path: a node none of whose instances match, or nodes that match but are not linked. */
async function whyEmpty(
  backend: KnowledgeNetworkBackend,
  ctx: CallContext,
  knId: string,
  template: CheckedPath,
): Promise<string> {
  const counts = await Promise.all(
    template.query.object_types.map(async (node) => {
      // Only a diagnosis: when a count fails, the message claims nothing about that node.
      const r = await backend
        .queryObjects(ctx, knId, node.id, {
          limit: 1,
          need_total: true,
          ...(node.condition ? { condition: node.condition } : {}),
        })
        .catch(() => undefined);
      return r === undefined ? undefined : (r.total_count ?? r.datas.length);
    }),
  );
  const empty = counts.flatMap((n, i) => (n === 0 ? [i] : []));
  if (empty.length > 0) {
    const which = empty
      .map((i) => {
        const node = template.query.object_types[i]!;
        return text(
          `object_types[${i}] (${node.id}) has no instance${node.condition ? " matching its condition" : ""}`,
          `object_types[${i}]（${node.id}）没有${node.condition ? "符合其条件的" : ""}实例`,
        )[ctx.language];
      })
      .join(ctx.language === "en" ? "; " : "；");
    return text(
      `No path found: ${which}. Loosen that condition (like with a shorter part of a name instead of ==), or check the values with query_object_instance (QueryObjectInstances).`,
      `没有找到路径：${which}。请放宽那个条件（例如用 like 加名称中较短的一部分代替 ==），或用 query_object_instance（QueryObjectInstances）核对取值。`,
    )[ctx.language];
  }
  const walk = template.edges
    .map(
      (e, i) =>
        `${template.query.object_types[i]!.id} -[${e.relation.id}, ${e.direction}]-> ${template.query.object_types[i + 1]!.id}`,
    )
    .join(", ");
  return text(
    `No path found: every node has matching instances, but none of them are linked along ${walk}. Check that these relations connect the instances you mean (query_object_instance on each node), or try other relation types.`,
    `没有找到路径：每个节点都有符合条件的实例，但它们没有沿 ${walk} 相连。请检查这些关系是否连接了你要的实例（对每个节点调用 query_object_instance），或尝试其他关系类型。`,
  )[ctx.language];
}

function cutMessage(returned: number, total: number | undefined, template: CheckedPath, language: Language): string {
  const limit = template.query.limit ?? returned;
  if (total !== undefined && total > returned) {
    const nodeLimits = template.query.object_types.map((n) => n.limit).join("/");
    return text(
      `${total} paths match in all; ${returned} are returned (path limit ${limit}, node limits ${nodeLimits}). Narrow the conditions or raise the limits to see the rest.`,
      `共有 ${total} 条路径匹配；返回了 ${returned} 条（路径上限 ${limit}，节点上限 ${nodeLimits}）。要看到其余的，请收窄条件或调高上限。`,
    )[language];
  }
  if (total === undefined && returned >= limit) {
    return text(
      `The path limit (${limit}) was reached: there may be more paths. Narrow the conditions or raise limit.`,
      `达到了路径上限（${limit}）：可能还有更多路径。请收窄条件或调高 limit。`,
    )[language];
  }
  return "";
}
