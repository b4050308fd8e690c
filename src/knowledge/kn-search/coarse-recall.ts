import type { CallContext } from "../../core/call-context";
import { topIndexes } from "../../core/scores";
import type { KnowledgeNetworkBackend } from "../../kn/backend";
import type { KnowledgeNetwork } from "../../kn/types";
import type { DescriptionCache } from "../relevance/descriptions";
import { lexicalRelevance } from "../relevance/lexical";
import type { ConceptRetrievalConfig } from "./input";

/**
 * Coarse recall: a network with at least `coarse_min_relation_count` relation
 * types is narrowed by the question's words alone, before the finer (and
 * costlier) ranking sees it: the `coarse_relation_limit` best relation types,
 * then at most `coarse_object_limit` object types — the ends of the kept
 * relations first, then the best of the rest. A relation type whose end did
 * not make the cut goes too. Ties keep the network's order.
 */
export function coarseNetwork(
  kn: KnowledgeNetwork,
  question: string,
  cfg: ConceptRetrievalConfig,
  descriptions: DescriptionCache,
): KnowledgeNetwork {
  if (!cfg.enable_coarse_recall || kn.relation_types.length < cfg.coarse_min_relation_count) return kn;
  const typeName = new Map(kn.object_types.map((o) => [o.id, o.name]));
  const relationScores = lexicalRelevance(
    question,
    kn.relation_types.map(
      (r) =>
        `${r.id} ${r.name} ${r.comment} ${typeName.get(r.source_object_type_id) ?? ""} ${typeName.get(r.target_object_type_id) ?? ""}`,
    ),
    descriptions,
  );
  const relations = topIndexes(relationScores, cfg.coarse_relation_limit).map((i) => kn.relation_types[i]!);
  const typeScores = lexicalRelevance(
    question,
    kn.object_types.map(
      (o) => `${o.id} ${o.name} ${o.comment} ${o.data_properties.map((p) => p.display_name || p.name).join(" ")}`,
    ),
    descriptions,
  );
  const kept = new Set<string>();
  for (const r of relations)
    for (const end of [r.source_object_type_id, r.target_object_type_id])
      if (kept.size < cfg.coarse_object_limit) kept.add(end);
  for (const i of topIndexes(typeScores, kn.object_types.length))
    if (kept.size < cfg.coarse_object_limit) kept.add(kn.object_types[i]!.id);
  return {
    ...kn,
    object_types: kn.object_types.filter((o) => kept.has(o.id)),
    relation_types: relations.filter((r) => kept.has(r.source_object_type_id) && kept.has(r.target_object_type_id)),
    action_types: kn.action_types.filter((a) => kept.has(a.object_type_id)),
  };
}

/**
 * The backend as schema recall sees it during one kn_search: networks come
 * narrowed by `narrow`, and the full definitions fetched are kept for the
 * answer (full schema, property details). Everything else passes through.
 */
export class NarrowedBackend implements KnowledgeNetworkBackend {
  /** The networks fetched, in full, by id. */
  readonly fetched = new Map<string, KnowledgeNetwork>();

  constructor(
    private readonly inner: KnowledgeNetworkBackend,
    private readonly narrow: (kn: KnowledgeNetwork, ctx: CallContext) => KnowledgeNetwork,
  ) {}

  get kind() {
    return this.inner.kind;
  }

  async getKnowledgeNetwork(ctx: CallContext, knId: string): Promise<KnowledgeNetwork> {
    const kn = await this.inner.getKnowledgeNetwork(ctx, knId);
    this.fetched.set(knId, kn);
    return this.narrow(kn, ctx);
  }

  listKnowledgeNetworks: KnowledgeNetworkBackend["listKnowledgeNetworks"] = (ctx, query) =>
    this.inner.listKnowledgeNetworks(ctx, query);
  getObjectTypes: KnowledgeNetworkBackend["getObjectTypes"] = (ctx, knId, ids) =>
    this.inner.getObjectTypes(ctx, knId, ids);
  queryObjects: KnowledgeNetworkBackend["queryObjects"] = (ctx, knId, ot, query) =>
    this.inner.queryObjects(ctx, knId, ot, query);
  querySubgraph: KnowledgeNetworkBackend["querySubgraph"] = (ctx, knId, query) =>
    this.inner.querySubgraph(ctx, knId, query);
  queryProperties: KnowledgeNetworkBackend["queryProperties"] = (ctx, knId, ot, query) =>
    this.inner.queryProperties(ctx, knId, ot, query);
  getOperator: KnowledgeNetworkBackend["getOperator"] = (ctx, id) => this.inner.getOperator(ctx, id);
  listConceptGroups: KnowledgeNetworkBackend["listConceptGroups"] = (ctx, knId) =>
    this.inner.listConceptGroups(ctx, knId);
  searchConcepts: KnowledgeNetworkBackend["searchConcepts"] = (ctx, knId, kind, query) =>
    this.inner.searchConcepts(ctx, knId, kind, query);
  queryActions: KnowledgeNetworkBackend["queryActions"] = (ctx, knId, at, identities) =>
    this.inner.queryActions(ctx, knId, at, identities);
  getToolBoxTool: KnowledgeNetworkBackend["getToolBoxTool"] = (ctx, box, tool) =>
    this.inner.getToolBoxTool(ctx, box, tool);
  listMcpTools: KnowledgeNetworkBackend["listMcpTools"] = (ctx, id) => this.inner.listMcpTools(ctx, id);
}
