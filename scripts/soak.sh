#!/usr/bin/env bash
# Soak (issue 10): a bounded mixed load — signed sends, edits, read receipts, tombstones, hub long polls — against a
# four-server federation this script starts itself, with one server restarted (SIGTERM, then started again on the
# same database) every few minutes. The load generator (`java -jar target/shine-tools.jar soak`) prints a progress
# line every 10 s and, at the end, the ledger and each server's heap after GC and open descriptors against their
# level at the baseline (after the first five minutes; with --short or under 15 minutes, after the first third).
#   scripts/soak.sh [--minutes N] [--short] [--restart-every S] [--rate OPS] [--users U] [--hub-users H]
#                   [--settle S] [--keep-db]
# Defaults: --minutes 60, a restart every 180 s (0: none), 20 operations/s over 20 sender/recipient pairs, 4
# recipients polling the hub. --short is a ~2-minute run with a restart every 45 s. Exits non-zero on a loss, a
# duplicate, or heap/descriptors more than 20 % above the baseline.
# Servers s1..s4 listen on 127.0.0.1:7401..7404 (SHINE_SOAK_PORT_BASE=7400) with databases shine_soak_s1..s4
# (dropped after the run unless --keep-db), pinned server keys, and a compressed retry schedule (0/5/15/30/60 s)
# so an hour passes through many retry cycles; SHINE_SOAK_HEAP (default 256m) is each server's -Xmx. Logs,
# configs, keys and the run's full output (soak.out) are in run/soak/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/soak"
PORT_BASE="${SHINE_SOAK_PORT_BASE:-7400}"
SERVERS=(s1 s2 s3 s4)

minutes=60
restart_every=""
rate=20
users=20
hub_users=4
settle=180
keep_db=0
short=0
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --short) short=1; shift ;;
    --restart-every) restart_every="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --users) users="$2"; shift 2 ;;
    --hub-users) hub_users="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --keep-db) keep_db=1; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see scripts/soak.sh --help)" ;;
  esac
done
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || die "--minutes takes a positive number"
if [ "$short" = 1 ]; then
  seconds=120
  restart_every="${restart_every:-45}"
else
  seconds=$((minutes * 60))
  restart_every="${restart_every:-180}"
fi
[[ "$restart_every" =~ ^[0-9]+$ ]] || die "--restart-every takes a number of seconds"
if [ "$seconds" -ge 900 ]; then baseline=300; else baseline=$((seconds / 3)); fi

port_of() { echo $((PORT_BASE + ${1#s})); }
url_of() { echo "ws://127.0.0.1:$(port_of "$1")/ws"; }
db_of() { echo "shine_soak_$1"; }
key_file() { echo "$DIR/$1.key"; }
public_key_of() { key_file_public_key "$(key_file "$1")"; }
psql_admin() { PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres "$@"; }
pid_of() { cat "$DIR/$1.pid" 2>/dev/null || echo 0; }
SERVER_OPTS="$JAVA_OPTS -Xmx${SHINE_SOAK_HEAP:-256m}"

write_config() {
  local name="$1" peers="" other
  for other in "${SERVERS[@]}"; do
    [ "$other" = "$name" ] && continue
    peers="$peers${peers:+,}{\"serverLogin\":\"$other\",\"url\":\"$(url_of "$other")\",\"publicKeyB64\":\"$(public_key_of "$other")\"}"
  done
  cat > "$DIR/$name.json" <<JSON
{
  "serverLogin": "$name",
  "http": {"host": "127.0.0.1", "port": $(port_of "$name")},
  "publicUrl": "$(url_of "$name")",
  "serverKeyFile": "$(key_file "$name")",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$(db_of "$name")", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"},
  "peers": [$peers],
  "delivery": {"scheduleMs": [0, 5000, 15000, 30000, 60000], "workerPeriodMs": 1000}
}
JSON
}

started=0

start_servers() {
  local name port
  for name in "${SERVERS[@]}"; do
    port=$(port_of "$name")
    if curl -fsS --max-time 5 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      die "something already answers on port $port; stop it or set SHINE_SOAK_PORT_BASE"
    fi
  done
  for name in "${SERVERS[@]}"; do
    [ -f "$(key_file "$name")" ] || java -jar "$JAR" keygen --out "$(key_file "$name")" >/dev/null
  done
  for name in "${SERVERS[@]}"; do
    psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >&2
    psql_admin -qc "CREATE DATABASE $(db_of "$name")" >&2
    write_config "$name"
    # shellcheck disable=SC2086
    nohup java $SERVER_OPTS -jar "$JAR" server --config "$DIR/$name.json" > "$DIR/$name.log" 2>&1 &
    echo $! > "$DIR/$name.pid"
  done
  started=1
  for name in "${SERVERS[@]}"; do
    wait_until_healthy "$name" "$(port_of "$name")" "$DIR/$name.pid" "$DIR/$name.log"
  done
  wait_server_sessions "$DIR" "${SERVERS[@]}"
  log "servers up: $(for n in "${SERVERS[@]}"; do printf '%s (pid %s) ' "$n" "$(pid_of "$n")"; done)"
}


# The load generator restarts servers itself and keeps run/soak/sN.pid current, so the pid files name who to stop.
stop_servers() {
  local name pid
  [ "$started" = 1 ] || return 0
  for name in "${SERVERS[@]}"; do
    pid=$(pid_of "$name")
    [ "$pid" != 0 ] && kill -TERM "$pid" 2>/dev/null || true
  done
  for name in "${SERVERS[@]}"; do
    pid=$(pid_of "$name")
    [ "$pid" = 0 ] && continue
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30 s; killing"; kill -KILL "$pid" 2>/dev/null || true; }
    rm -f "$DIR/$name.pid"
  done
  started=0
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_servers
  if [ "$keep_db" = 0 ]; then
    for name in "${SERVERS[@]}"; do
      psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >/dev/null 2>&1 || true
    done
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v curl >/dev/null || apt_install curl
command -v jcmd >/dev/null || die "jcmd (from the JDK) is needed to read heap after GC"
ensure_toolchain
ensure_postgres
command -v psql >/dev/null || apt_install postgresql-client
ensure_jar
mkdir -p "$DIR"
start_servers
args=(soak --run-dir "$DIR" --server-jar "$JAR" --seconds "$seconds" --baseline-s "$baseline" --restart-every-s "$restart_every"
  --rate "$rate" --users "$users" --hub-users "$hub_users" --settle-s "$settle" --java-opts "$SERVER_OPTS")
for name in "${SERVERS[@]}"; do args+=(--server "$name=$(url_of "$name")"); done
log "soak for $seconds s (baseline at $baseline s, a restart every $restart_every s): java -jar target/shine-tools.jar ${args[*]}"
set +e
# shellcheck disable=SC2086
java $JAVA_OPTS -jar "$TOOLS_JAR" "${args[@]}" 2>&1 | tee "$DIR/soak.out"
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
