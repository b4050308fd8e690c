import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  KnowledgeRetrievalService,
  RetrieveKeywordContextRequestSchema,
  RetrieveKeywordContextResponseSchema,
  RetrieveSchemaRequestSchema,
  RetrieveSchemaResponseSchema,
  type RetrieveKeywordContextResponse,
  type RetrieveSchemaResponse,
} from "../../gen/contextloader/knowledge/v1/knowledge_pb";
import { notBuiltYet } from "../errors/tool-error";
import { validateRequest } from "../errors/validation";
import { callContext } from "../server/interceptors";
import { keywordContextInput, retrieveKeywordContext, type KeywordContextResult, type KeywordDeps } from "./keyword-context";
import { retrieveSchema, retrieveSchemaInput, type SchemaDeps, type SchemaResult } from "./schema-recall";

export type KnowledgeDeps = SchemaDeps & KeywordDeps;

const SERVICE = "contextloader.knowledge.v1.KnowledgeRetrievalService";

/** Registers KnowledgeRetrievalService: decode and validate, call the domain, encode. */
export function registerKnowledge(router: ConnectRouter, deps: KnowledgeDeps): void {
  router.service(KnowledgeRetrievalService, {
    async retrieveSchema(req, ctx) {
      const input = validateRequest(RetrieveSchemaRequestSchema, req, retrieveSchemaInput);
      return schemaResponse(await retrieveSchema(deps, callContext(ctx), input));
    },
    async retrieveKeywordContext(req, ctx) {
      const input = validateRequest(RetrieveKeywordContextRequestSchema, req, keywordContextInput);
      return keywordContextResponse(await retrieveKeywordContext(deps, callContext(ctx), input));
    },
    knSearch() {
      throw notBuiltYet(`${SERVICE}/KnSearch`, 7, "kn_search (proxy and native)");
    },
    rerankConcepts() {
      throw notBuiltYet(`${SERVICE}/RerankConcepts`, 7, "concept reranking");
    },
  });
}

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
      logicProperties: o.logic_properties.map((lp) => ({ name: lp.name, displayName: lp.display_name, type: lp.type, comment: lp.comment })),
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
  const init: MessageInitShape<typeof RetrieveKeywordContextResponseSchema> = { sessionId: r.session_id, warnings: r.warnings };
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
