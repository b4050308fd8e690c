import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type KnSearchResponse,
  KnSearchResponseSchema,
  type RerankConceptsResponse,
  RerankConceptsResponseSchema,
  type RetrieveKeywordContextResponse,
  RetrieveKeywordContextResponseSchema,
  type RetrieveSchemaResponse,
  RetrieveSchemaResponseSchema,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { type OutputFormat, render } from "../core/output-format";
import { keywordContextAnswer, knSearchAnswer, schemaAnswer } from "./answers";
import type { KeywordContextResult } from "./keyword-context/result";
import type { KnSearchAnswer } from "./kn-search/answer";
import type { RerankResult } from "./rerank/rerank-concepts";
import type { SchemaResult } from "./schema/retrieve-schema";

/**
 * The knowledge domain's results as proto messages: what the RPCs answer, and
 * what the JSON routes turn into the specs' JSON (rest-routes.ts).
 */

/** The RetrieveSchema answer: structured concepts, or the compact YAML texts. */
export function schemaResponse(r: SchemaResult): RetrieveSchemaResponse {
  const init: MessageInitShape<typeof RetrieveSchemaResponseSchema> = {
    sessionId: r.session_id,
    rankingMethod: r.ranking_method,
    round: r.round,
    warnings: r.warnings,
  };
  if (r.compact) {
    init.objects = r.compact.objects;
    init.relations = r.compact.relations;
  } else {
    init.objectTypes = r.object_types.map((o) => ({
      conceptType: "object_type",
      conceptId: o.id,
      conceptName: o.name,
      comment: o.comment,
      properties: o.data_properties.map((p) => ({
        name: p.name,
        displayName: p.display_name,
        type: p.type,
        comment: p.comment,
        conditionOperations: p.condition_operations,
      })),
      primaryKeyField: o.primary_keys[0] ?? "",
      primaryKeys: o.primary_keys,
      displayKey: o.display_key,
      logicProperties: o.logic_properties.map((lp) => ({
        name: lp.name,
        displayName: lp.display_name,
        type: lp.type,
        comment: lp.comment,
      })),
      knId: o.kn_id,
      score: o.score,
    }));
    init.relationTypes = r.relation_types.map((rel) => ({
      conceptType: "relation_type",
      conceptId: rel.id,
      conceptName: rel.name,
      sourceObjectTypeId: rel.source_object_type_id,
      targetObjectTypeId: rel.target_object_type_id,
      knId: rel.kn_id,
      score: rel.score,
      comment: rel.comment,
    }));
    init.actionTypes = r.action_types.map((a) => ({
      id: a.id,
      name: a.name,
      actionType: a.action_type,
      objectTypeId: a.object_type_id,
      objectTypeName: a.object_type_name,
      comment: a.comment,
      tags: a.tags,
      knId: a.kn_id,
    }));
  }
  return create(RetrieveSchemaResponseSchema, init);
}

/** The RetrieveKeywordContext answer: the structured context, or its compact YAML text. */
export function keywordContextResponse(r: KeywordContextResult): RetrieveKeywordContextResponse {
  const init: MessageInitShape<typeof RetrieveKeywordContextResponseSchema> = {
    sessionId: r.session_id,
    warnings: r.warnings,
  };
  if (r.compact !== undefined) {
    init.keywordContextText = r.compact;
  } else {
    init.keywordContext = {
      keyword: r.keyword,
      objectTypeId: r.object_type_id,
      matchedField: r.matched_field,
      instances: r.instances.map((i) => ({
        instanceId: i.instance_id,
        objectTypeId: i.object_type_id,
        instanceName: i.instance_name,
        ...(i.properties ? { properties: i.properties } : {}),
        identity: i.identity,
        matchType: i.match_type,
        score: i.score,
        matchedFields: i.matched_fields,
        alreadyReturned: i.already_returned,
        neighbors: i.neighbors.map((n) => ({
          instanceId: n.instance_id,
          objectTypeId: n.object_type_id,
          instanceName: n.instance_name,
          relationTypeId: n.relation_type_id,
          relationTypeName: n.relation_type_name,
          relationDirection: n.relation_direction,
          ...(n.properties ? { properties: n.properties } : {}),
          alreadyReturned: n.already_returned,
        })),
      })),
      statistics: {
        totalInstances: r.statistics.total_instances,
        totalNeighbors: r.statistics.total_neighbors,
        matchedFields: r.statistics.matched_fields,
      },
    };
  }
  return create(RetrieveKeywordContextResponseSchema, init);
}

/** The kn_search answer; fields only the full schema has are empty in brief mode. */
export function knSearchResponse(a: KnSearchAnswer): KnSearchResponse {
  return create(KnSearchResponseSchema, {
    sessionId: a.session_id,
    objectTypes: a.object_types.map((o) => ({
      conceptType: "object_type",
      conceptId: o.concept_id,
      conceptName: o.concept_name,
      comment: o.comment,
      dataProperties: o.data_properties.map((p) => ({
        name: p.name,
        displayName: p.display_name,
        type: p.type ?? "",
        comment: p.comment ?? "",
        conditionOperations: p.condition_operations ?? [],
      })),
      logicProperties: o.logic_properties.map((lp) => ({
        name: lp.name,
        displayName: lp.display_name,
        type: lp.type ?? "",
        comment: lp.comment ?? "",
        ...(lp.data_source ? { dataSource: lp.data_source } : {}),
        parameters: lp.parameters ?? [],
      })),
      primaryKeys: o.primary_keys ?? [],
      displayKey: o.display_key ?? "",
      ...(o.sample_data ? { sampleData: o.sample_data } : {}),
      tags: o.tags ?? [],
      knId: o.kn_id,
    })),
    relationTypes: a.relation_types.map((r) => ({
      conceptType: "relation_type",
      conceptId: r.concept_id,
      conceptName: r.concept_name,
      comment: r.comment ?? "",
      sourceObjectTypeId: r.source_object_type_id,
      targetObjectTypeId: r.target_object_type_id,
      knId: r.kn_id,
    })),
    actionTypes: a.action_types.map((t) => ({
      id: t.id,
      name: t.name,
      actionType: t.action_type,
      objectTypeId: t.object_type_id,
      objectTypeName: t.object_type_name,
      comment: t.comment,
      tags: t.tags,
      knId: t.kn_id,
    })),
    nodes: (a.nodes ?? []).map((n) => ({
      objectTypeId: n.object_type_id,
      objectTypeName: n.object_type_name,
      instanceName: n.instance_name,
      uniqueIdentities: n.unique_identities,
      dataProperties: n.data_properties,
      finalScore: n.final_score,
      knId: n.kn_id,
    })),
    message: a.message ?? "",
    warnings: a.warnings,
  });
}

/** The RerankConcepts answer. */
export function rerankResponse(r: RerankResult): RerankConceptsResponse {
  return create(RerankConceptsResponseSchema, {
    rerankedConcepts: r.reranked_concepts.map((c) => ({
      conceptType: c.concept_type,
      conceptId: c.concept_id,
      conceptName: c.concept_name,
      conceptDetail: c.concept_detail,
      score: c.score,
      rank: c.rank,
    })),
    filteredCount: r.filtered_count,
  });
}

/**
 * The answers asked for with output_format: the compact answer (answers.ts,
 * what the MCP tools return) written in that format in `text`, and of the
 * structured fields only what the next call needs (the session, the round).
 */
export function schemaTextResponse(r: SchemaResult, format: OutputFormat): RetrieveSchemaResponse {
  return create(RetrieveSchemaResponseSchema, {
    sessionId: r.session_id,
    round: r.round,
    text: render(schemaAnswer(r), format),
  });
}

export function keywordContextTextResponse(
  r: KeywordContextResult,
  format: OutputFormat,
): RetrieveKeywordContextResponse {
  return create(RetrieveKeywordContextResponseSchema, {
    sessionId: r.session_id,
    text: render(keywordContextAnswer(r), format),
  });
}

export function knSearchTextResponse(a: KnSearchAnswer, format: OutputFormat): KnSearchResponse {
  return create(KnSearchResponseSchema, { sessionId: a.session_id, text: render(knSearchAnswer(a), format) });
}
