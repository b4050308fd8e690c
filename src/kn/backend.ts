import type { CallContext } from "../core/call-context";
import type { ActionQueryResult, McpToolDefinition, ToolBoxTool } from "./actions";
import type { ConceptGroup, ConceptHit, ConceptKind, ConceptSearch } from "./concepts";
import type {
  InstanceIdentity,
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

  /** The network's concept groups (every one, in the network's order). */
  listConceptGroups(ctx: CallContext, knId: string): Promise<ConceptGroup[]>;

  /**
   * A typed search over one kind of concept (object, relation or action types,
   * metrics), optionally within concept groups: the hits, best first when the
   * condition scores text, else in the network's order, at most `limit`.
   */
  searchConcepts<K extends ConceptKind>(
    ctx: CallContext,
    knId: string,
    kind: K,
    query: ConceptSearch,
  ): Promise<ConceptHit<K>[]>;

  /**
   * An action type's actions for these instances (none given: every instance
   * its condition selects): what it is bound to, and per instance the
   * arguments already decided and those left to the caller. NOT_FOUND when the
   * action type is unknown.
   */
  queryActions(
    ctx: CallContext,
    knId: string,
    actionTypeId: string,
    identities: InstanceIdentity[],
  ): Promise<ActionQueryResult>;

  /** A tool box tool's definition (agent-operator-integration). NOT_FOUND when unknown. */
  getToolBoxTool(ctx: CallContext, boxId: string, toolId: string): Promise<ToolBoxTool>;

  /** The tools an MCP server registered with agent-operator-integration offers. NOT_FOUND when unknown. */
  listMcpTools(ctx: CallContext, mcpId: string): Promise<McpToolDefinition[]>;
}
