#!/usr/bin/env bash
# MCP over Streamable HTTP at POST /mcp: list the tools (each with its inputSchema and outputSchema),
# then call some. Tools answer TOON text by default (in result.content[0].text), and the RPC's answer
# as JSON in result.structuredContent; get_action_info's holds the function-call definitions.
. "$(dirname "$0")/env.sh"
mcp() {
  curl -sS "$BASE_URL/mcp" -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "x-account-id: ex-$RUN" -H 'x-kn-id: kn_medical' -d "$1"
  echo
}

mcp '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"retrieve_schema","arguments":{"query":"上气道梗阻有哪些症状","kn_ids":[{"knowledge_network_id":"kn_medical"}],"top_k":2,"session_id":"ex-mcp-'"$RUN"'"}}}'
mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query_object_instance","arguments":{"ot_id":"disease","condition":{"field":"disease_name","operation":"like","value":"气道"},"limit":2}}}'
mcp '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_action_info","arguments":{"at_id":"generate_treatment_plan","_instance_identities":[{"disease_id":"disease_000001"}]}}}'
