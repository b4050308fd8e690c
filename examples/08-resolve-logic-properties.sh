#!/usr/bin/env bash
# Resolve and execute a metric logic property. The time words (2025年2月 with instant=true) decide
# every parameter here, so no LLM is needed. The RPC over gRPC, then the spec's REST route.
. "$(dirname "$0")/env.sh"

$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: ex-$RUN" \
  -d '{"kn_id":"kn_medical","ot_id":"company","query":"2025年2月这些企业上市了多少药品","unique_identities":[{"company_id":"company_000001"}],"properties":["approved_drug_count"],"additional_context":"instant=true"}' \
  "$BASE_URL/contextloader.resolver.v1.LogicPropertyResolverService/ResolveLogicProperties"

curl -sS "$BASE_URL/api/kn/logic-property-resolver" -H 'content-type: application/json' -H "x-account-id: ex-$RUN" \
  -d '{"kn_id":"kn_medical","ot_id":"company","query":"今年每月的药品上市数量趋势","_instance_identities":[{"company_id":"company_000001"}],"properties":["approved_drug_count"]}'
echo
