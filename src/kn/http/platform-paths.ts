/**
 * Where each platform service's resources start below its base URL. The
 * platform moved ontology-manager's API to bkn-backend in its 0.8 release
 * (same resources, same bodies); ontology-query and agent-operator-integration
 * kept theirs. A deployment names its release (PLATFORM_API_LAYOUT) and may
 * override any one prefix (a gateway that rewrites paths).
 */
export interface PlatformPaths {
  /** ontology-manager (bkn-backend since 0.8): knowledge networks, object types, concept searches. */
  ontologyManager: string;
  /** ontology-query: instances, subgraphs, property values, action queries. */
  ontologyQuery: string;
  /** agent-operator-integration: the operator market, tool boxes, MCP servers. */
  operatorIntegration: string;
}

export const PLATFORM_LAYOUTS = {
  "0.7": {
    ontologyManager: "/api/ontology-manager/in/v1",
    ontologyQuery: "/api/ontology-query/in/v1",
    operatorIntegration: "/api/agent-operator-integration/internal-v1",
  },
  "0.8": {
    ontologyManager: "/api/bkn-backend/in/v1",
    ontologyQuery: "/api/ontology-query/in/v1",
    operatorIntegration: "/api/agent-operator-integration/internal-v1",
  },
} as const satisfies Record<string, PlatformPaths>;

/** A platform release whose paths PLATFORM_LAYOUTS knows. */
export type PlatformLayout = keyof typeof PLATFORM_LAYOUTS;

export const PLATFORM_LAYOUT_NAMES = Object.keys(PLATFORM_LAYOUTS) as PlatformLayout[];

/** The paths of the release before 0.8, which deployments used before the layout could be chosen. */
export const DEFAULT_PLATFORM_LAYOUT: PlatformLayout = "0.7";
