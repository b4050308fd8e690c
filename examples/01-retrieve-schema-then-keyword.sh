#!/usr/bin/env bash
# Two-step retrieval over Connect JSON with curl: recall the schema a question needs (step one),
# then the instances and one-hop neighbours behind a keyword of it (step two), in one session.
. "$(dirname "$0")/env.sh"
SESSION="ex-schema-$RUN"

curl -sS "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"'"$SESSION"'","top_k":5}'
echo

curl -sS "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻","session_id":"'"$SESSION"'","object_type_id":"disease","compact_format":false}'
echo
