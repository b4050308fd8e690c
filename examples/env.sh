# Sourced by every example: the service to call, and names unique to this run so that
# no example depends on another or on an earlier run (sessions, memory keys, accounts).
set -euo pipefail
BASE_URL=${BASE_URL:-http://127.0.0.1:8080}
RUN=${RUN:-$(date +%s)-$$-$RANDOM}
# buf curl comes with npm install; run from anywhere inside the repository.
BUF="npx --no-install buf"
