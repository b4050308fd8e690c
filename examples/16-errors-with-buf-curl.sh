#!/usr/bin/env bash
# buf curl prints an error's details as base64 values; npm run -s explain-error decodes them
# (the reason, the field violations, the next step). buf curl exits non-zero on an error, and
# writes it to stderr: both are taken into the pipe here.
. "$(dirname "$0")/env.sh"
cd "$(dirname "$0")/.."

{ $BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" \
  -d '{"query":"上气道梗阻","session_id":"ex-err-buf-'"$RUN"'","object_type_id":"disease"}' \
  "$BASE_URL/contextloader.knowledge.v1.KnowledgeRetrievalService/RetrieveKeywordContext" 2>&1 || true; } \
  | npm run -s explain-error
