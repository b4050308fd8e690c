import type { Json } from "../../core/json";
import type { InstanceIdentity } from "../../kn/types";
import type { MatchType } from "../matching/score";

/** What RetrieveKeywordContext answers (spec keyword-context-recall §5), before encoding. */
export interface KeywordContextResult {
  session_id: string;
  keyword: string;
  object_type_id: string;
  matched_field: string;
  instances: InstanceContext[];
  statistics: { total_instances: number; total_neighbors: number; matched_fields: string[] };
  warnings: KeywordContextWarning[];
  /** YAML of the context, when compact_format. */
  compact: string | undefined;
}

export interface KeywordContextWarning {
  target: string;
  reason: string;
  message: string;
}

export interface NeighborContext {
  instance_id: string;
  object_type_id: string;
  instance_name: string;
  relation_type_id: string;
  relation_type_name: string;
  relation_direction: "outgoing" | "incoming";
  properties: Record<string, Json> | undefined;
  already_returned: boolean;
}

export interface InstanceContext {
  instance_id: string;
  object_type_id: string;
  instance_name: string;
  identity: InstanceIdentity;
  properties: Record<string, Json> | undefined;
  match_type: MatchType;
  score: number;
  matched_fields: string[];
  already_returned: boolean;
  neighbors: NeighborContext[];
}
