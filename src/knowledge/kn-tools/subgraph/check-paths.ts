import type { Json } from "../../../core/json";
import { type Language, type Text, text } from "../../../errors/text";
import type { KnowledgeNetwork, ObjectType, RelationType, RelationTypePath } from "../../../kn/types";
import { checkCondition, type Problems } from "../conditions/check-condition";
import { checkSort } from "../conditions/check-query";
import { closestNames } from "../conditions/suggest";
import { MAX_HOPS, type RelationTypePathInput } from "./input";

/** Which way a walk takes a relation: along its definition (source type → target type) or against it. */
export type Direction = "forward" | "backward";

/** A path template checked against the schema, ready for the platform. */
export interface CheckedPath {
  /** Edges with source/target set to the walk's direction, conditions normalised, limits explicit. */
  query: RelationTypePath;
  /** The object type of each node. */
  nodes: ObjectType[];
  /** The relation type of each edge and the way the walk takes it. */
  edges: { relation: RelationType; direction: Direction }[];
}

/** Something corrected in a request: the caller should write it so next time. */
export interface Correction {
  target: string;
  reason: string;
  message: string;
}

/**
 * Checks relation_path templates against the network's schema: every object
 * and relation type exists; path i has n+1 nodes and n edges (n ≤ 10); edge i
 * is a relation type joining object_types[i] and object_types[i+1] in either
 * direction. An edge's source/target are the walk's direction and are filled
 * in when empty; given as the relation's own definition while the walk goes
 * against it (a common misreading), they are corrected and reported in
 * `corrections`; matching the relation in neither direction, they are a
 * violation showing the relation's real source → target and the corrected
 * edge. Node conditions and sorts are checked as in QueryObjectInstances.
 */
export function checkPaths(
  paths: readonly RelationTypePathInput[],
  network: KnowledgeNetwork,
  problems: Problems,
  corrections: Correction[],
  language: Language,
): CheckedPath[] {
  const types = new Map(network.object_types.map((t) => [t.id, t]));
  const relations = new Map(network.relation_types.map((r) => [r.id, r]));
  return paths.flatMap((path, p) => {
    const at = `relation_type_paths[${p}]`;
    const before = problems.violations.length;
    const hops = path.relation_types.length;
    if (hops !== path.object_types.length - 1) {
      problems.violations.push({
        field: `${at}.relation_types`,
        description: text(
          `has ${hops} relation types for ${path.object_types.length} object_types: a path of n+1 object_types needs exactly n relation types (edge i joins object_types[i] and object_types[i+1])`,
          `${path.object_types.length} 个 object_types 对应了 ${hops} 个关系类型：由 n+1 个 object_types 组成的路径需要正好 n 个关系类型（第 i 条边连接 object_types[i] 和 object_types[i+1]）`,
        ),
      });
    }
    if (hops > MAX_HOPS) {
      problems.violations.push({
        field: `${at}.relation_types`,
        description: text(
          `has ${hops} hops; a path has at most ${MAX_HOPS}: split it into shorter paths, each starting where the last ended`,
          `有 ${hops} 跳；一条路径最多 ${MAX_HOPS} 跳：请拆成较短的路径，每条从上一条结束的地方开始`,
        ),
      });
    }
    const nodes = path.object_types.map((node, i) => {
      const type = types.get(node.id);
      if (!type) {
        const close = closestNames(node.id, [...types.keys()], 3);
        problems.violations.push({
          field: `${at}.object_types[${i}].id`,
          description: text(
            `${node.id} is not an object type of ${network.id}${close.length ? `; did you mean ${close.join(" or ")}?` : ""}`,
            `${node.id} 不是 ${network.id} 的对象类型${close.length ? `；是否指 ${close.join(" 或 ")}？` : ""}`,
          ),
        });
      }
      return type;
    });
    const edges = path.relation_types.map((edge, i) =>
      checkEdge(
        edge,
        i,
        nodes[i],
        nodes[i + 1],
        path.object_types,
        relations,
        network,
        `${at}.relation_types[${i}]`,
        problems,
        corrections,
        language,
      ),
    );
    const query: RelationTypePath = {
      object_types: path.object_types.map((node, i) => {
        const type = nodes[i];
        const where = `${at}.object_types[${i}]`;
        const condition =
          type && node.condition ? checkCondition(node.condition, type, `${where}.condition`, problems) : undefined;
        const sort = type ? checkSort(node.sort, type, `${where}.sort`, problems) : [];
        return {
          id: node.id,
          limit: node.limit,
          ...(condition ? { condition } : {}),
          ...(sort.length > 0 ? { sort } : {}),
        };
      }),
      relation_types: path.relation_types.map((edge, i) => ({
        relation_type_id: edge.relation_type_id,
        source_object_type_id: path.object_types[i]?.id ?? "",
        target_object_type_id: path.object_types[i + 1]?.id ?? "",
      })),
      limit: path.limit,
    };
    if (problems.violations.length > before) return [];
    return [{ query, nodes: nodes as ObjectType[], edges: edges as CheckedPath["edges"] }];
  });
}

function checkEdge(
  edge: RelationTypePathInput["relation_types"][number],
  i: number,
  fromType: ObjectType | undefined,
  toType: ObjectType | undefined,
  nodes: RelationTypePathInput["object_types"],
  relations: Map<string, RelationType>,
  network: KnowledgeNetwork,
  at: string,
  problems: Problems,
  corrections: Correction[],
  language: Language,
): CheckedPath["edges"][number] | undefined {
  const from = nodes[i]?.id;
  const to = nodes[i + 1]?.id;
  const relation = relations.get(edge.relation_type_id);
  const joining = (a: string, b: string) =>
    network.relation_types.filter(
      (r) =>
        (r.source_object_type_id === a && r.target_object_type_id === b) ||
        (r.source_object_type_id === b && r.target_object_type_id === a),
    );
  const walkEdge = (r: RelationType): Json => ({
    relation_type_id: r.id,
    source_object_type_id: from ?? "",
    target_object_type_id: to ?? "",
  });
  const alternatives = (a: string, b: string): Text => {
    const list = joining(a, b);
    const named = list.map((r) => `${r.id} (${r.source_object_type_id} → ${r.target_object_type_id})`).join(", ");
    return list.length > 0
      ? text(`relation types joining ${a} and ${b}: ${named}`, `连接 ${a} 和 ${b} 的关系类型：${named}`)
      : text(
          `no relation type joins ${a} and ${b} directly: go through another object type`,
          `没有直接连接 ${a} 和 ${b} 的关系类型：请经过另一个对象类型`,
        );
  };
  if (!relation) {
    const close = closestNames(edge.relation_type_id, [...relations.keys()], 3);
    const joins = from && to ? alternatives(from, to) : undefined;
    problems.violations.push({
      field: `${at}.relation_type_id`,
      description: text(
        `${edge.relation_type_id} is not a relation type of ${network.id}${close.length ? ` (did you mean ${close.join(" or ")}?)` : ""}${joins ? `; ${joins.en}` : ""}`,
        `${edge.relation_type_id} 不是 ${network.id} 的关系类型${close.length ? `（是否指 ${close.join(" 或 ")}？）` : ""}${joins ? `；${joins.zh}` : ""}`,
      ),
    });
    const only = from && to ? joining(from, to) : [];
    if (only.length === 1) problems.examples.push({ path: at, value: walkEdge(only[0]!) });
    return undefined;
  }
  if (!fromType || !toType || from === undefined || to === undefined) return undefined;
  const { source_object_type_id: s, target_object_type_id: t } = relation;
  const definition = text(
    `${relation.id} (${relation.name || relation.id}) is defined ${s} → ${t}`,
    `${relation.id}（${relation.name || relation.id}）的定义是 ${s} → ${t}`,
  );
  let direction: Direction;
  if (s === from && t === to) direction = "forward";
  else if (s === to && t === from) direction = "backward";
  else {
    const only = joining(from, to);
    problems.violations.push({
      field: `${at}.relation_type_id`,
      description: text(
        `${definition.en}: it cannot join object_types[${i}] (${from}) and object_types[${i + 1}] (${to}); ${alternatives(from, to).en}`,
        `${definition.zh}：它不能连接 object_types[${i}]（${from}）和 object_types[${i + 1}]（${to}）；${alternatives(from, to).zh}`,
      ),
    });
    if (only.length === 1) problems.examples.push({ path: at, value: walkEdge(only[0]!) });
    return undefined;
  }

  // source/target are the walk's direction; empty ones are filled in.
  const source = edge.source_object_type_id || from;
  const target = edge.target_object_type_id || to;
  if (source === from && target === to) return { relation, direction };
  if ((source === s && target === t) || (source === t && target === s)) {
    corrections.push({
      target: at,
      reason: "EDGE_DIRECTION_CORRECTED",
      message: text(
        `${at} said ${source} → ${target}, but the walk goes object_types[${i}] (${from}) → object_types[${i + 1}] (${to}); ${definition.en}, so this edge is walked ${direction}. source/target are the walk's direction: write ${JSON.stringify(walkEdge(relation))}`,
        `${at} 写的是 ${source} → ${target}，但路径走的是 object_types[${i}]（${from}）→ object_types[${i + 1}]（${to}）；${definition.zh}，所以这条边按 ${direction} 方向走。source/target 是路径行走的方向：应写作 ${JSON.stringify(walkEdge(relation))}`,
      )[language],
    });
    return { relation, direction };
  }
  problems.violations.push({
    field: at,
    description: text(
      `says ${source} → ${target}, which matches ${relation.id} in neither direction (${definition.en}); walking object_types[${i}] (${from}) → object_types[${i + 1}] (${to}) takes it ${direction}: ${JSON.stringify(walkEdge(relation))}`,
      `写的是 ${source} → ${target}，与 ${relation.id} 的两个方向都不符（${definition.zh}）；从 object_types[${i}]（${from}）走到 object_types[${i + 1}]（${to}）时按 ${direction} 方向走它：${JSON.stringify(walkEdge(relation))}`,
    ),
  });
  problems.examples.push({ path: at, value: walkEdge(relation) });
  return undefined;
}
