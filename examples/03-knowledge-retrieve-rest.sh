#!/usr/bin/env bash
# The REST route existing agent configurations call (POST /tools/knowledge_retrieve):
# enable_keyword_context chooses the step. Answers use the spec's snake_case names.
. "$(dirname "$0")/env.sh"
SESSION="ex-rest-$RUN"

curl -sS "$BASE_URL/tools/knowledge_retrieve" -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"'"$SESSION"'","top_k":5}'
echo
curl -sS "$BASE_URL/tools/knowledge_retrieve" -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻","kn_ids":[{"knowledge_network_id":"kn_medical"}],"session_id":"'"$SESSION"'","enable_keyword_context":true,"object_type_id":"disease"}'
echo
