#!/usr/bin/env bash
# The scale a node holds (issue 18; docs/BENCHMARKS.md, "Scale a node holds"): one server on loopback with the §11
# defaults on a fresh database, then
#   sessions  `bench sessions`: N users registered, N WebSocket sessions connected and logged in, held idle; heap per
#             session after a full GC, fds, the heap histogram's growth per session, connect and login times, a
#             GetUserCard round trip beside them vs without
#   polls     `bench hub-polls`: N hub users with tokens, N long polls held; heap per poll after a full GC, fds, the
#             histogram's growth per poll, the server's CPU while they wait, a hub event's wake-up latency beside
#             them vs with few
#   s1        scripts/bench.sh's S1 (`bench send`, 50 senders × 10 in flight, recipients online, 20 s) on the server
#             alone (twice: the first run warms the JVM up), then again beside N idle sessions that a
#             `bench sessions --hold-s` holds meanwhile
# each on a server of its own (fresh JVM, fresh database), stopped after.
#   scripts/scale-bench.sh [--only sessions,polls,s1] [--sessions N] [--polls N] [--warm] [--before-jar JAR]
#                          [--keep-db] [-- extra options for the bench command]
# Defaults: sessions and polls, --sessions 10000, --polls 5000. --warm runs a first, unreported round of 3,000
# sessions on the same server before the measured one (a node that has run a while: its JIT has compiled the login
# path). --before-jar JAR runs each part twice: the server from JAR
# ("before"), then from target/ ("after"); the load generator is always target/'s. The open-file limit is raised to
# the hard limit (each session is a descriptor in the server and one in the load generator). The server listens on
# 127.0.0.1:7651 (SHINE_SCALE_PORT_BASE=7650) with database shine_scale_s1 (SHINE_SCALE_DB=...); SHINE_SCALE_CONFIG
# adds top-level members to its config (e.g. '"limits": {"maxConnectionsPerIp": 2000}'), SHINE_SERVER_JAVA_OPTS JVM
# options to the server only (e.g. a flight recording); logs and each run's full output are in run/scale/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/scale"
PORT=$(( ${SHINE_SCALE_PORT_BASE:-7650} + 1 ))
DB="${SHINE_SCALE_DB:-shine_scale_s1}"
URL="ws://127.0.0.1:$PORT/ws"

only="sessions,polls"
sessions=10000
polls=5000
before_jar=""
keep_db=0
warm=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    --polls) polls="$2"; shift 2 ;;
    --before-jar) before_jar="$2"; shift 2 ;;
    --keep-db) keep_db=1; shift ;;
    --warm) warm=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see scripts/scale-bench.sh --help)" ;;
  esac
done
[[ "$sessions" =~ ^[1-9][0-9]*$ ]] || die "--sessions takes a positive number"
[[ "$polls" =~ ^[1-9][0-9]*$ ]] || die "--polls takes a positive number"
[ -z "$before_jar" ] || [ -f "$before_jar" ] || die "--before-jar: no file $before_jar"
psql_admin() { PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres "$@"; }

server_pid=""
stop_server() {
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$server_pid" 2>/dev/null && { log "the server did not stop in 30 s; killing"; kill -KILL "$server_pid" 2>/dev/null || true; }
  server_pid=""
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_server
  [ "$keep_db" = 1 ] || psql_admin -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server JAR NAME: a fresh database and a fresh JVM, §11 defaults but for address, database and egress.
start_server() {
  local jar="$1" name="$2"
  curl -fsS --max-time 5 "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 \
    && die "something already answers on port $PORT; set SHINE_SCALE_PORT_BASE"
  psql_admin -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >&2
  psql_admin -qc "CREATE DATABASE $DB" >&2
  cat > "$DIR/s1.json" <<JSON
{
  "serverLogin": "s1",
  "http": {"host": "127.0.0.1", "port": $PORT},
  "publicUrl": "$URL",
  "serverKeyFile": "$DIR/s1.key",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$DB", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"}${SHINE_SCALE_CONFIG:+,
  $SHINE_SCALE_CONFIG}
}
JSON
  nohup "$SERVER_JAVA" $(server_opts_for "$jar") -jar "$jar" server --config "$DIR/s1.json" > "$DIR/$name.log" 2>&1 &
  server_pid=$!
  echo "$server_pid" > "$DIR/s1.pid"
  wait_until_healthy s1 "$PORT" "$DIR/s1.pid" "$DIR/$name.log"
  log "server up from $jar on $SERVER_JAVA (pid $server_pid), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

command -v curl >/dev/null || apt_install curl
command -v jcmd >/dev/null || die "jcmd (the JDK's) is needed to read the server's heap"
ensure_toolchain
ensure_postgres
command -v psql >/dev/null || apt_install postgresql-client
ensure_jar
ensure_cds
mkdir -p "$DIR"
[ -f "$DIR/s1.key" ] || java -jar "$JAR" keygen --out "$DIR/s1.key" >/dev/null
hard=$(ulimit -Hn)
ulimit -n "$hard" || true
needed=$(( (sessions > polls ? sessions : polls) + 1000 ))
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge "$needed" ] \
  || die "open-file limit $(ulimit -n) is below $needed (one descriptor per session, in the server and here)"

# run_s1 STEM: S1 alone, then S1 beside --sessions idle sessions (held by a bench sessions in the background).
run_s1() {
  local stem="$1" holder
  local s1=(bench send --scenario S1 --clients 50 --window 10 --body 200 --compression offer --seconds 20 --warmup 3
    --server "$URL" --server-pid "s1=$server_pid" --db-name "$DB")
  local lines='^(window|send→recipient|accept latency|pairs sent|errors|per second|  cpu server)'
  log "S1 alone, twice (cold, warm): java -jar target/shine-tools.jar ${s1[*]}"
  java $JAVA_OPTS -jar "$TOOLS_JAR" "${s1[@]}" > "$DIR/$stem-cold.out" 2>&1 || true
  grep -E "$lines" "$DIR/$stem-cold.out" | sed 's/^/S1 alone, cold JVM: /' || true
  java $JAVA_OPTS -jar "$TOOLS_JAR" "${s1[@]}" > "$DIR/$stem-alone.out" 2>&1 || true
  grep -E "$lines" "$DIR/$stem-alone.out" | sed 's/^/S1 alone: /' || true
  java $JAVA_OPTS -jar "$TOOLS_JAR" bench sessions --server "$URL" --sessions "$sessions" --server-pid "$server_pid" \
    --db-name "$DB" --top 0 --hold-s 900 > "$DIR/$stem-sessions.out" 2>&1 &
  holder=$!
  until grep -q '^holding ' "$DIR/$stem-sessions.out"; do
    kill -0 "$holder" 2>/dev/null || { tail -n 5 "$DIR/$stem-sessions.out" >&2; die "bench sessions ended before holding"; }
    sleep 1
  done
  grep -E '^(holding|server holding|per session)' "$DIR/$stem-sessions.out" || true
  log "S1 beside the sessions"
  java $JAVA_OPTS -jar "$TOOLS_JAR" "${s1[@]}" > "$DIR/$stem-beside.out" 2>&1 || true
  grep -E "$lines" "$DIR/$stem-beside.out" | sed 's/^/S1 beside: /' || true
  kill -TERM "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
}

builds=(after)
[ -n "$before_jar" ] && builds=(before after)
IFS=',' read -r -a parts <<< "$only"
for part in "${parts[@]}"; do
  for build in "${builds[@]}"; do
    jar="$JAR"
    [ "$build" = before ] && jar="$before_jar"
    stem="$part-$build"
    start_server "$jar" "$stem-server"
    if [ "$part" = s1 ]; then
      run_s1 "$stem"
      stop_server
      continue
    fi
    case "$part" in
      sessions) args=(bench sessions --server "$URL" --sessions "$sessions" --server-pid "$server_pid" --db-name "$DB") ;;
      polls) args=(bench hub-polls --server "$URL" --polls "$polls" --server-pid "$server_pid" --db-name "$DB") ;;
      *) die "unknown part $part (sessions, polls, s1)" ;;
    esac
    if [ "$part" = sessions ] && [ "$warm" = 1 ]; then
      log "sessions ($build): a first round of 3000 sessions to warm the server up (not reported)"
      java $JAVA_OPTS -jar "$TOOLS_JAR" bench sessions --server "$URL" --sessions 3000 --top 0 --probes 200 \
        > "$DIR/$stem-warmup.out" 2>&1 || log "the warm-up round failed; see $DIR/$stem-warmup.out"
    fi
    log "$part ($build): java -jar target/shine-tools.jar ${args[*]} ${extra[*]}"
    { java $JAVA_OPTS -jar "$TOOLS_JAR" "${args[@]}" "${extra[@]}" 2>&1 || echo "exit code $?"; } | tee "$DIR/$stem.out" \
      | grep -v -E '^(bench sessions|hub-polls): [a-z ]+: [0-9]' || true
    stop_server
  done
done
