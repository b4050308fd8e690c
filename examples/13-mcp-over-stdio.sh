#!/usr/bin/env bash
# MCP over stdio, as a client that spawns its server does: initialize, tools/list and one
# tools/call; each answer is read before the next request, and closing stdin ends the server.
# stdout carries only JSON-RPC (logs go to stderr). It runs the server from this checkout, not
# BASE_URL, with its settings from the environment (MCP_ACCOUNT_ID is the caller).
. "$(dirname "$0")/env.sh"
cd "$(dirname "$0")/.."
coproc MCP { MCP_ACCOUNT_ID="ex-stdio-$RUN" MCP_KN_ID=kn_medical LOG_LEVEL=warn npm run --silent mcp:stdio 2>/dev/null; }
ask() {
  echo "$1" >&"${MCP[1]}"
  local line
  IFS= read -r -t 60 line <&"${MCP[0]}"
  echo "$line"
}

ask '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}'
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&"${MCP[1]}"
ask '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
ask '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_schema","arguments":{"query":"上气道梗阻有哪些症状","max_concepts":1}}}'
exec {MCP[1]}>&-
wait "$MCP_PID"
