#!/usr/bin/env bash
# A user's memories: store two, search them, read one, delete one (then reading it is NOT_FOUND).
# Every MemRecall call needs x-account-id; this run's account is its own.
. "$(dirname "$0")/env.sh"
ACCOUNT="ex-mem-$RUN"
MEM="$BASE_URL/contextloader.memrecall.v1.MemRecallService"

curl -sS "$MEM/StoreMemory" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"db_config_001","memory_type":"project_fact","summary":"生产环境 PostgreSQL 数据库配置","content":"host=pg-prod.internal port=5432 database=analytics，连接池 max_connections=200","metadata":{"source":"chat"}}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"redis_002","memory_type":"project_fact","summary":"Redis cache settings","content":"Redis 7, maxmemory 2gb, allkeys-lru"}' \
  "$BASE_URL/contextloader.memrecall.v1.MemRecallService/StoreMemory"

curl -sS "$MEM/SearchMemories" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"query":"我之前的数据库配置"}'
echo

curl -sS "$MEM/GetMemoryDetail" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"db_config_001"}'
echo

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"redis_002"}' "$BASE_URL/contextloader.memrecall.v1.MemRecallService/DeleteMemory"

curl -sS "$MEM/GetMemoryDetail" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"redis_002"}'
echo
