#!/usr/bin/env bash
# Recall, the recall agent in one server-streaming call: store a memory, then ask what
# "按照我之前的数据库配置来" refers to. buf curl prints each event as it arrives, ending with
# the handoff. Without LLM_BASE_URL the deterministic strategy runs (no LLM request).
. "$(dirname "$0")/env.sh"
ACCOUNT="ex-recall-$RUN"

curl -sS "$BASE_URL/contextloader.memrecall.v1.MemRecallService/StoreMemory" -H 'content-type: application/json' \
  -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"db_config_001","memory_type":"project_fact","summary":"生产环境 PostgreSQL 数据库配置","content":"host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200"}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: $ACCOUNT" \
  -d '{"messages":[{"role":"user","content":"帮我建一个报表数据源"},{"role":"assistant","content":"好的，用哪个数据库？"},{"role":"user","content":"按照我之前的数据库配置来"}]}' \
  "$BASE_URL/contextloader.memrecall.v1.MemRecallService/Recall"
