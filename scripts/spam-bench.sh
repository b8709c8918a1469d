#!/usr/bin/env bash
# The abuse benchmark of issue 16 (docs/BENCHMARKS.md, "Abuse: spam flood of open ops"): two servers s1 and s2 on
# loopback (fresh databases shine_spam_s1/_s2, pool of 8 each, each the pinned peer of the other), then
# `bench spam`: an honest sender on s1 writes to a recipient on s2 at --rate pairs/s while a flood of
# ReceiveIncomingMessage from logins registered on s2 goes to s2; the servers are stopped after.
#   scripts/spam-bench.sh [bench spam options...]      e.g. --seconds 20 --spam-addresses 4, or --spam-window 0
# SHINE_SERVER_JAR runs the servers from another build (e.g. an older commit's jar, for a before/after); the load
# generator is always this tree's target/shine-tools.jar. Servers listen on 127.0.0.1:7601/7602 (SHINE_SPAM_PORT_BASE=7600); logs,
# configs and keys are in run/spam-bench/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/spam-bench"
PORT_BASE="${SHINE_SPAM_PORT_BASE:-7600}"
SERVER_JAR="${SHINE_SERVER_JAR:-$JAR}"
SERVERS=(s1 s2)

port_of() { echo $((PORT_BASE + ${1#s})); }
url_of() { echo "ws://127.0.0.1:$(port_of "$1")/ws"; }
db_of() { echo "shine_spam_$1"; }
key_file() { echo "$DIR/$1.key"; }
public_key_of() { key_file_public_key "$(key_file "$1")"; }
psql_admin() { PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres "$@"; }

write_config() {
  local name="$1" other="$2"
  cat > "$DIR/$name.json" <<JSON
{
  "serverLogin": "$name",
  "http": {"host": "127.0.0.1", "port": $(port_of "$name")},
  "publicUrl": "$(url_of "$name")",
  "serverKeyFile": "$(key_file "$name")",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$(db_of "$name")", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}", "poolSize": 8},
  "peers": [{"serverLogin": "$other", "url": "$(url_of "$other")", "publicKeyB64": "$(public_key_of "$other")"}]
}
JSON
}

stop_servers() {
  local name
  for name in "${SERVERS[@]}"; do
    [ -f "$DIR/$name.pid" ] && kill -TERM "$(cat "$DIR/$name.pid")" 2>/dev/null || true
  done
  for name in "${SERVERS[@]}"; do
    [ -f "$DIR/$name.pid" ] || continue
    for _ in $(seq 1 60); do
      kill -0 "$(cat "$DIR/$name.pid")" 2>/dev/null || break
      sleep 0.5
    done
    rm -f "$DIR/$name.pid"
    psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >/dev/null 2>&1 || true
  done
}
trap stop_servers EXIT
trap 'exit 130' INT TERM

ensure_toolchain
ensure_postgres
ensure_jar
[ -f "$SERVER_JAR" ] || die "no server jar at $SERVER_JAR"
mkdir -p "$DIR"
for name in "${SERVERS[@]}"; do
  curl -fsS --max-time 5 "http://127.0.0.1:$(port_of "$name")/health" >/dev/null 2>&1 \
    && die "something already answers on port $(port_of "$name"); set SHINE_SPAM_PORT_BASE"
  [ -f "$(key_file "$name")" ] || java -jar "$JAR" keygen --out "$(key_file "$name")" >/dev/null
done
for name in "${SERVERS[@]}"; do
  other=$([ "$name" = s1 ] && echo s2 || echo s1)
  psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >&2
  psql_admin -qc "CREATE DATABASE $(db_of "$name")" >&2
  write_config "$name" "$other"
  nohup java $JAVA_OPTS -jar "$SERVER_JAR" server --config "$DIR/$name.json" > "$DIR/$name.log" 2>&1 &
  echo $! > "$DIR/$name.pid"
done
for name in "${SERVERS[@]}"; do
  wait_until_healthy "$name" "$(port_of "$name")" "$DIR/$name.pid" "$DIR/$name.log"
done
wait_server_sessions "$DIR" "${SERVERS[@]}"
log "servers up from $SERVER_JAR: s1 (pid $(cat "$DIR/s1.pid")), s2 (pid $(cat "$DIR/s2.pid"))"
java $JAVA_OPTS -jar "$TOOLS_JAR" bench spam --server "$(url_of s1)" --recipient-server "$(url_of s2)" \
  --server-pid "s1=$(cat "$DIR/s1.pid")" --server-pid "s2=$(cat "$DIR/s2.pid")" \
  --db-name "$(db_of s1)" --db-name "$(db_of s2)" "$@"
