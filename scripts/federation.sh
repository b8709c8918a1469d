#!/usr/bin/env bash
# A local federation of four access servers s1..s4 on ports 7101..7104, each with its own database
# (shine_fed_s1..shine_fed_s4), every server configured with the other three as peers, their server keys
# pinned (each server's key is a key file, run/federation/sN.key, made once with keygen).
#   scripts/federation.sh start [--fast]   build if needed, start all four, wait for /health and for the
#                                          servers to log each other in (a line per server session)
#   scripts/federation.sh stop             SIGTERM each (they drain), wait for them to exit
#   scripts/federation.sh status           which are up
#   scripts/federation.sh kill sN | start-one sN   stop or (re)start one server, e.g. to watch retries
#   scripts/federation.sh reset            stop, then drop the four databases (a clean slate)
# --fast compresses the retry schedule to 0/3/6/9/12 s (instead of 0/30 s/5/25/60 min) for demos.
# Logs and configs: run/federation/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/federation"
SERVERS=(s1 s2 s3 s4)

port_of() { echo $((7100 + ${1#s})); }

key_file() { echo "$DIR/$1.key"; }

# The server key of each server: a keygen key file, made once and kept (its peers pin the public half).
ensure_key() {
  [ -f "$(key_file "$1")" ] || java -jar "$JAR" keygen --out "$(key_file "$1")" >/dev/null
}

public_key_of() { sed -n 's/.*"publicKeyB64" *: *"\([^"]*\)".*/\1/p' "$(key_file "$1")"; }

write_config() {
  local name="$1" fast="$2" peers="" other
  for other in "${SERVERS[@]}"; do
    [ "$other" = "$name" ] && continue
    peers="$peers${peers:+,}{\"serverLogin\":\"$other\",\"url\":\"ws://127.0.0.1:$(port_of "$other")/ws\",\"publicKeyB64\":\"$(public_key_of "$other")\"}"
  done
  local delivery=""
  if [ "$fast" = 1 ]; then
    delivery=',"delivery":{"scheduleMs":[0,3000,6000,9000,12000],"workerPeriodMs":1000}'
  fi
  cat > "$DIR/$name.json" <<JSON
{
  "serverLogin": "$name",
  "http": {"host": "127.0.0.1", "port": $(port_of "$name")},
  "publicUrl": "ws://127.0.0.1:$(port_of "$name")/ws",
  "serverKeyFile": "$(key_file "$name")",
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "shine_fed_$name", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"},
  "peers": [$peers]$delivery
}
JSON
}

is_up() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

start_one() {
  local name="$1"
  if is_up "$name"; then
    log "$name already running (pid $(cat "$DIR/$name.pid"))"
    return 0
  fi
  # where this run's lines begin in the (appended) log
  if [ -f "$DIR/$name.log" ]; then wc -c < "$DIR/$name.log" > "$DIR/$name.log.offset"; else echo 0 > "$DIR/$name.log.offset"; fi
  nohup java ${SHINE_JAVA_OPTS:-} -jar "$JAR" server --config "$DIR/$name.json" >> "$DIR/$name.log" 2>&1 &
  echo $! > "$DIR/$name.pid"
}

wait_healthy() {
  local name="$1" port
  port=$(port_of "$name")
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      log "$name up at ws://127.0.0.1:$port/ws (web chat: http://127.0.0.1:$port/app/)"
      return 0
    fi
    is_up "$name" || die "$name exited; see $DIR/$name.log"
    sleep 0.5
  done
  die "$name did not become healthy; see $DIR/$name.log"
}

# Waits until every other server has opened a server session with $1, and says so.
wait_sessions() {
  local name="$1" others=() other from
  for other in "${SERVERS[@]}"; do [ "$other" = "$name" ] || others+=("$other"); done
  for _ in $(seq 1 80); do
    from=()
    for other in "${others[@]}"; do
      tail -c +$(($(cat "$DIR/$name.log.offset" 2>/dev/null || echo 0) + 1)) "$DIR/$name.log" 2>/dev/null \
        | grep -q "server session authenticated \[serverLogin: $other," && from+=("$other")
    done
    if [ "${#from[@]}" = "${#others[@]}" ]; then
      log "$name: server sessions open from ${from[*]}"
      return 0
    fi
    sleep 0.5
  done
  log "$name: server sessions so far from ${from[*]:-none} (see $DIR/$name.log)"
}

stop_one() {
  local name="$1" pid
  is_up "$name" || { rm -f "$DIR/$name.pid"; return 0; }
  pid=$(cat "$DIR/$name.pid")
  kill -TERM "$pid"
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30 s; killing"; kill -KILL "$pid"; }
  rm -f "$DIR/$name.pid"
  log "$name stopped"
}

cmd="${1:-}"
case "$cmd" in
  start)
    fast=0
    [ "${2:-}" = "--fast" ] && fast=1
    command -v curl >/dev/null || apt_install curl
    ensure_toolchain
    ensure_postgres
    ensure_jar
    mkdir -p "$DIR"
    for s in "${SERVERS[@]}"; do ensure_key "$s"; done
    for s in "${SERVERS[@]}"; do
      ensure_database "shine_fed_$s"
      write_config "$s" "$fast"
      start_one "$s"
    done
    for s in "${SERVERS[@]}"; do wait_healthy "$s"; done
    for s in "${SERVERS[@]}"; do wait_sessions "$s"; done
    log "federation up; stop it with: scripts/federation.sh stop"
    ;;
  stop)
    for s in "${SERVERS[@]}"; do stop_one "$s"; done
    ;;
  reset)
    for s in "${SERVERS[@]}"; do stop_one "$s"; done
    for s in "${SERVERS[@]}"; do
      PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres -qc \
        "DROP DATABASE IF EXISTS shine_fed_$s WITH (FORCE)" >&2
    done
    log "dropped shine_fed_s1..s4"
    ;;
  status)
    for s in "${SERVERS[@]}"; do
      if is_up "$s"; then echo "$s up (pid $(cat "$DIR/$s.pid"), ws://127.0.0.1:$(port_of "$s")/ws)"; else echo "$s down"; fi
    done
    ;;
  kill)
    [ -n "${2:-}" ] || die "usage: federation.sh kill sN"
    stop_one "$2"
    ;;
  start-one)
    [ -n "${2:-}" ] || die "usage: federation.sh start-one sN"
    [ -f "$DIR/$2.json" ] || die "no config for $2; run federation.sh start first"
    start_one "$2"
    wait_healthy "$2"
    ;;
  *)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
