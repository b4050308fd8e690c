#!/usr/bin/env bash
# Rerank concepts for a question by vector similarity (no LLM needed): the RPC over gRPC and
# the REST route POST /tools/knowledge_rerank.
. "$(dirname "$0")/env.sh"

$BUF curl --protocol grpc --http2-prior-knowledge --reflect \
  -d '{"query_understanding":{"origin_query":"哪些药企生产的药最多","processed_query":"药企 药品 数量"},"concepts":[{"concept_type":"object_type","concept_id":"company","concept_name":"企业"},{"concept_type":"object_type","concept_id":"drug","concept_name":"药品"}],"action":"vector"}' \
  "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RerankConcepts"

curl -sS "$BASE_URL/tools/knowledge_rerank" -H 'content-type: application/json' \
  -d '{"query_understanding":{"origin_query":"药品的批准文号","processed_query":"药品 批准文号","intent":[]},
       "concepts":[{"concept_type":"object_type","concept_id":"drug","concept_name":"药品","concept_detail":{"comment":"上市药品"}},
                   {"concept_type":"object_type","concept_id":"symptom","concept_name":"症状","concept_detail":{"comment":"疾病的临床症状"}}],
       "action":"vector"}'
echo
