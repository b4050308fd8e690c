#!/usr/bin/env bash
# kn_search: schema and instances for a question in one call, as an RPC (curl, then buf curl
# over gRPC with only_schema) and as the spec's REST route POST /kn/kn_search.
. "$(dirname "$0")/env.sh"

curl -sS "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/KnSearch" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻 呼吸困难","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"ex-kn-'"$RUN"'"}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"retrieval_config":{"concept_retrieval":{"top_k":3,"schema_brief":false}},"only_schema":true}' \
  "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/KnSearch"

curl -sS "$BASE_URL/kn/kn_search" -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"ex-kn-rest-'"$RUN"'","retrieval_config":{"concept_retrieval":{"top_k":3,"per_object_property_top_k":3}}}'
echo
