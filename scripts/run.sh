#!/usr/bin/env bash
# Runs one access server: installs Java/Maven if missing, builds the jar if needed, makes PostgreSQL available,
# then starts `server --config conf/server.json` (or the file given as $1) and stays in the foreground until it
# exits. Once /health answers it prints where clients, the metrics and the admin API are. SIGTERM/SIGINT are passed
# on to the server, which drains and exits 0.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
CONFIG="${1:-$ROOT/conf/server.json}"
[ -f "$CONFIG" ] || die "no config file $CONFIG"
CONFIG="$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")"
ensure_toolchain
ensure_postgres
ensure_jar
ensure_cds

# the first value of a key in the config (good enough for the flat examples in conf/; the server validates the file)
value() { sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*{[^}]*\"$2\"[[:space:]]*:[[:space:]]*\"\{0,1\}\([^\",}]*\).*/\1/p" "$CONFIG" | head -n 1; }
url=$(sed -n 's/.*"publicUrl"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$CONFIG" | head -n 1)
http_host=$(value http host); http_port=$(value http port)
admin_host=$(value admin host); admin_port=$(value admin port)
metrics_on=$(value metrics enabled)

log "starting server with $CONFIG"
"$SERVER_JAVA" $(server_java_opts) -jar "$JAR" server --config "$CONFIG" &
pid=$!
signalled=""
trap 'signalled=1; kill -TERM "$pid" 2>/dev/null' TERM INT

base="http://${http_host:-127.0.0.1}:${http_port:-7101}"
up=""
for _ in $(seq 1 120); do
  kill -0 "$pid" 2>/dev/null || break
  if curl -fsS --max-time 5 "$base/health" >/dev/null 2>&1; then up=1; break; fi
  sleep 0.5
done
if [ -n "$up" ]; then
  log "server is up: clients connect to ${url:-the configured publicUrl}"
  app=$(printf '%s' "$url" | sed -e 's#^ws://#http://#' -e 's#^wss://#https://#' -e 's#/ws$#/app/#')
  [ -n "$app" ] && log "  web chat:  open $app in a browser"
  log "  health:    $base/health"
  if [ "${metrics_on:-true}" != "false" ]; then log "  metrics:   $base/metrics"; else log "  metrics:   off (metrics.enabled)"; fi
  if [ -n "$admin_port" ] && [ "$admin_port" != "0" ]; then
    log "  admin API: http://${admin_host:-127.0.0.1}:$admin_port/admin/v1 (java -jar $JAR admin --config $CONFIG peers)"
  else
    log "  admin API: off (set admin.port in $CONFIG)"
  fi
elif kill -0 "$pid" 2>/dev/null; then
  log "server has not answered $base/health after 60 s; still waiting for it to exit"
fi
rc=0
wait "$pid" || rc=$?
# a signal interrupts that wait (status 128+n): wait again for the server's own status after it drained (0)
while [ -n "$signalled" ] && [ "$rc" -gt 128 ]; do
  signalled=""
  rc=0
  wait "$pid" || rc=$?
done
exit "$rc"
