#!/usr/bin/env bash
# The same two steps with buf curl: step one over gRPC (HTTP/2) answering structured concepts,
# step two over Connect (HTTP/1.1) answering compact YAML text. buf curl prints lowerCamel JSON.
. "$(dirname "$0")/env.sh"
SESSION="ex-buf-$RUN"

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"'"$SESSION"'","top_k":5,"compact_format":false}' \
  "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema"

$BUF curl --protocol connect --reflect -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻","session_id":"'"$SESSION"'","object_type_id":"disease"}' \
  "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext"
