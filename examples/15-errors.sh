#!/usr/bin/env bash
# What a mistake answers: the gRPC code, a message an agent can act on, and details
# (ErrorInfo with the reason and trace id, BadRequest field violations, AgentHint with the next
# step). Over Connect JSON each detail carries a decoded "debug" copy beside its base64 "value".
. "$(dirname "$0")/env.sh"

# A misspelt field: INVALID_ARGUMENT naming it and the valid ones.
curl -sS "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveSchema" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"querry":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}]}'
echo

# Step two before step one: FAILED_PRECONDITION with a hint naming RetrieveSchema.
curl -sS "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext" \
  -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻","session_id":"ex-err-'"$RUN"'","object_type_id":"disease"}'
echo

# A memory call without an account: UNAUTHENTICATED.
curl -sS "$BASE_URL/contextloader.memrecall.v1.MemRecallService/SearchMemories" \
  -H 'content-type: application/json' -d '{"query":"数据库配置"}'
echo
