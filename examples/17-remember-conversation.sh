#!/usr/bin/env bash
# Memories that write themselves: a conversation in, the memories it holds out (rules mode when the
# service has no LLM). An older chart preference is stored first; the conversation keeps three new
# statements and supersedes that preference; sent again, it changes nothing; a search as of a date
# before the change finds the old preference still holding; a pasted token lands only in a sensitive memory.
. "$(dirname "$0")/env.sh"
ACCOUNT="ex-remember-$RUN"
MEM="$BASE_URL/contextloader.memrecall.v1.MemRecallService"

curl -sS "$MEM/StoreMemory" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"memory_key":"pref_weekly_chart","memory_type":"user_preference","summary":"周报图表用柱状图","content":"我喜欢周报里的图表用柱状图。","stated_at":"2026-09-01T08:00:00Z"}'
echo

CONVERSATION='{"messages":[
  {"role":"user","content":"早上好！今天天气不错。","time":"2026-11-20T09:00:00+08:00"},
  {"role":"assistant","content":"早上好，有什么可以帮你？"},
  {"role":"user","content":"记住：我们的生产数据库在上海机房。","time":"2026-11-20T09:01:00+08:00"},
  {"role":"user","content":"我喜欢回复用中文写。","time":"2026-11-20T09:02:00+08:00"},
  {"role":"user","content":"部署用这个：\n```bash\nkubectl rollout restart deploy/api -n prod\n```","time":"2026-11-20T09:03:00+08:00"},
  {"role":"user","content":"以后周报图表改用折线图。","time":"2026-11-20T09:04:00+08:00"}]}'

curl -sS "$MEM/RememberConversation" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" -d "$CONVERSATION"
echo

# The same conversation again: every operation is NOOP, nothing is written.
curl -sS "$MEM/RememberConversation" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" -d "$CONVERSATION"
echo

# As the memories stood on 1 October: the bar-chart preference still held.
curl -sS "$MEM/SearchMemories" -H 'content-type: application/json' -H "x-account-id: $ACCOUNT" \
  -d '{"query":"周报 图表","min_relevance_score":0,"as_of":"2026-10-01T00:00:00Z"}'
echo

# A pasted token: a dry run shows it would be kept as a sensitive memory, its summary without the token.
$BUF curl --protocol grpc --http2-prior-knowledge --reflect -H "x-account-id: $ACCOUNT" \
  -d '{"messages":[{"role":"user","content":"记住：CI 用的 GitHub token 是 ghp_Zx9Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg"}],"dry_run":true}' \
  "$MEM/RememberConversation"
