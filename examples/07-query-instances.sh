#!/usr/bin/env bash
# Instances by a checked condition, and instances along relation paths: RPCs over Connect and
# gRPC, and the platform's REST routes (one answering TOON text).
. "$(dirname "$0")/env.sh"

curl -sS "$BASE_URL/contextloader.kntools.v1.KnowledgeToolsService/QueryObjectInstances" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"kn_id":"kn_medical","ot_id":"disease","condition":{"operation":"and","sub_conditions":[{"field":"age","operation":"==","value":"儿童"}]},"properties":["disease_name","period"],"limit":2}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" -H 'x-kn-id: kn_medical' \
  -d '{"relation_type_paths":[{"object_types":[{"id":"symptom","condition":{"field":"symptom_name","operation":"==","value":"吞咽困难"}},{"id":"disease","limit":2}],"relation_types":[{"relation_type_id":"has_symptom"}],"limit":2}]}' \
  "$BASE_URL/contextloader.kntools.v1.KnowledgeToolsService/QueryInstanceSubgraph"

# A condition the property does not allow: the answer says what to write instead.
curl -sS -X POST "$BASE_URL/api/agent-retrieval/in/v1/kn/query_object_instance?kn_id=kn_medical&ot_id=disease" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"condition":{"field":"disease_name","operation":"match","value":"气道"}}'
echo
