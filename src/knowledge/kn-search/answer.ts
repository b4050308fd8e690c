import type { Json } from "../../core/json";

/**
 * kn_search's answer, the same whichever mode computed it (spec
 * kn-search-proxy.zh.md "响应结构"). Brief and full schema differ in which
 * fields are present, so optional fields here are absent in brief mode. Its
 * JSON form is rest-shape.ts; data-retrieval's is read by data-retrieval-wire.ts.
 */
export interface KnSearchAnswer {
  session_id: string;
  object_types: KnObjectType[];
  relation_types: KnRelationType[];
  action_types: KnActionType[];
  /** Undefined with only_schema. */
  nodes: KnNode[] | undefined;
  /** Why no node came back, when none did. */
  message: string | undefined;
  warnings: KnWarning[];
}

export interface KnWarning {
  target: string;
  reason: string;
  message: string;
}

export interface KnProperty {
  name: string;
  display_name: string;
  /** Full schema only, as are the fields below. */
  type?: string;
  comment?: string;
  condition_operations?: string[];
}

export interface KnLogicProperty {
  name: string;
  display_name: string;
  type?: string;
  comment?: string;
  data_source?: Record<string, Json>;
  parameters?: Record<string, Json>[];
}

export interface KnObjectType {
  kn_id: string;
  concept_id: string;
  concept_name: string;
  comment: string;
  data_properties: KnProperty[];
  logic_properties: KnLogicProperty[];
  /** Full schema only. */
  primary_keys?: string[];
  display_key?: string;
  tags?: string[];
  /** With include_sample_data: one instance's properties, null when the type has none. */
  sample_data?: Record<string, Json> | null;
}

export interface KnRelationType {
  kn_id: string;
  concept_id: string;
  concept_name: string;
  source_object_type_id: string;
  target_object_type_id: string;
  /** Full schema only. */
  comment?: string;
}

export interface KnActionType {
  id: string;
  name: string;
  action_type: string;
  object_type_id: string;
  object_type_name: string;
  comment: string;
  tags: string[];
  kn_id: string;
}

export interface KnNode {
  kn_id: string;
  object_type_id: string;
  object_type_name: string;
  /** The spec's `<object_type_id>_name`. */
  instance_name: string;
  unique_identities: Record<string, Json>;
  final_score: number;
  data_properties: Record<string, Json>;
}
