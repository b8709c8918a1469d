#!/usr/bin/env bash
# Runs one access server: installs Java/Maven if missing, builds the jar if needed, makes PostgreSQL available,
# then starts `server --config conf/server.json` (or the file given as $1) in the foreground.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
CONFIG="${1:-$ROOT/conf/server.json}"
ensure_toolchain
ensure_postgres
ensure_jar
url=$(sed -n 's/.*"publicUrl"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$CONFIG" | head -n 1)
app=$(printf '%s' "$url" | sed -e 's#^ws://#http://#' -e 's#^wss://#https://#' -e 's#/ws$#/app/#')
log "starting server with $CONFIG; clients connect to ${url:-the configured publicUrl} (health: /health)"
[ -n "$app" ] && log "web chat: open ${app} in a browser"
exec java ${SHINE_JAVA_OPTS:-} -jar "$JAR" server --config "$CONFIG"
