import type { CallContext } from "../core/call-context";
import type {
  KnowledgeNetwork,
  KnowledgeNetworkSummary,
  ObjectQuery,
  ObjectQueryResult,
  ObjectType,
  OperatorDetail,
  PropertiesQuery,
  PropertiesResult,
  SubgraphQuery,
  SubgraphResult,
} from "./types";

/**
 * Everything the knowledge capabilities (schema recall, keyword context,
 * kn_search, the resolver) read from a knowledge network. Two real
 * implementations: the HTTP clients of the platform (ontology-manager,
 * ontology-query, the operator market) and the embedded engine over KN bundle
 * files. Every call carries the caller's identity, abort signal and deadline
 * in `ctx`; failures are ToolErrors (never an empty result in place of an
 * error).
 */
export interface KnowledgeNetworkBackend {
  /** Where the data comes from, for logs and /readyz: "embedded" or "http". */
  readonly kind: "embedded" | "http";

  /** Knowledge networks whose name contains `name_pattern` (all when absent), one page. */
  listKnowledgeNetworks(
    ctx: CallContext,
    query: { name_pattern?: string; limit?: number; offset?: number },
  ): Promise<{ entries: KnowledgeNetworkSummary[]; total_count: number }>;

  /** A network with its object, relation and action types. NOT_FOUND when unknown. */
  getKnowledgeNetwork(ctx: CallContext, knId: string): Promise<KnowledgeNetwork>;

  /** Object type definitions, logic properties included, in the order asked. NOT_FOUND names any unknown id. */
  getObjectTypes(ctx: CallContext, knId: string, objectTypeIds: string[]): Promise<ObjectType[]>;

  /** One page of instances of an object type. */
  queryObjects(ctx: CallContext, knId: string, objectTypeId: string, query: ObjectQuery): Promise<ObjectQueryResult>;

  /** relation_path subgraphs: one entry per path, walking each edge forward or backward. */
  querySubgraph(ctx: CallContext, knId: string, query: SubgraphQuery): Promise<SubgraphResult>;

  /** Logic (and data) property values, aligned to the requested identities. */
  queryProperties(
    ctx: CallContext,
    knId: string,
    objectTypeId: string,
    query: PropertiesQuery,
  ): Promise<PropertiesResult>;

  /** An operator's definition from the operator market. NOT_FOUND when unknown. */
  getOperator(ctx: CallContext, operatorId: string): Promise<OperatorDetail>;
}
