#!/usr/bin/env bash
# What a load balancer and a curious developer call: the probes, grpc.health.v1, and server
# reflection (buf curl lists the services and methods from the running server).
. "$(dirname "$0")/env.sh"

curl -sS "$BASE_URL/healthz"; echo
curl -sS "$BASE_URL/readyz"; echo
$BUF curl --protocol grpc --http2-prior-knowledge -d '{"service":"contextloader.memrecall.v1.MemRecallService"}' \
  --schema "$(dirname "$0")/../gen/descriptors.binpb" "$BASE_URL/grpc.health.v1.Health/Check"
$BUF curl --http2-prior-knowledge --reflect --list-services "$BASE_URL" | jq -Rn '[inputs]'
