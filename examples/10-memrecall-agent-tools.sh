#!/usr/bin/env bash
# The recall agent's tools as RPCs: the keywords of a question, the tool definitions an LLM is
# offered, widening the context window, and the handoff report. One session per run.
. "$(dirname "$0")/env.sh"
ACCOUNT="ex-tools-$RUN"
MEM="$BASE_URL/contextloader.memrecall.v1.MemRecallService"

curl -sS "$MEM/ExtractSearchKeywords" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"query":"上周我配置的生产环境 PostgreSQL 数据库连接池","max_keywords":4}'
echo

$BUF curl --protocol connect --reflect -H "x-account-id: $ACCOUNT" -d '{}' \
  "$BASE_URL/contextloader.memrecall.v1.MemRecallService/ListTools"

curl -sS "$MEM/ExpandContextWindow" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"reason":"搜索结果太少，需要查看更早的对话","current_size":5,"requested_size":10}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: $ACCOUNT" \
  -d '{"reason":"已找到相关记忆，搜索完成","search_summary":"找到用户之前的数据库配置","relevant_memory_keys":[],"confidence":0.85,"needs_more_info":true,"follow_up_question":"您指的是哪个数据库？"}' \
  "$BASE_URL/contextloader.memrecall.v1.MemRecallService/Handoff"
