#!/usr/bin/env bash
# The platform's agent tools for a network's schema: search_schema (the types a question needs),
# get_action_info (an action type as function-call tools), find_skills (an object type's skills).
# The network comes from kn_id, or from the x-kn-id header when kn_id is empty.
. "$(dirname "$0")/env.sh"

curl -sS "$BASE_URL/api/agent-retrieval/in/v1/kn/search_schema" -H 'content-type: application/json' \
  -H "x-account-id: ex-$RUN" -d '{"query":"上气道梗阻有哪些症状","kn_id":"kn_medical","max_concepts":2,"schema_brief":true}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" -H 'x-kn-id: kn_medical' \
  -d '{"query":"药企获批上市的药品数量","max_concepts":1}' \
  "$BASE_URL/contextloader.kntools.v1.KnowledgeToolsService/SearchSchema"

curl -sS "$BASE_URL/api/agent-retrieval/in/v1/kn/get_action_info" -H 'content-type: application/json' \
  -H "x-account-id: ex-$RUN" \
  -d '{"kn_id":"kn_medical","at_id":"generate_treatment_plan","_instance_identities":[{"disease_id":"disease_000001"}]}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" -H 'x-kn-id: kn_medical' \
  -d '{"object_type_id":"disease","instance_identities":[{"disease_id":"disease_004790"}],"skill_query":"急救","top_k":2}' \
  "$BASE_URL/contextloader.kntools.v1.KnowledgeToolsService/FindSkills"
