#!/usr/bin/env bash
# A local federation of four access servers s1..s4 on ports 7101..7104, each with its own database
# (shine_fed_s1..shine_fed_s4), every server configured with the other three as peers, their server keys
# pinned (each server's key is a key file, run/federation/sN.key, made once with keygen).
#   scripts/federation.sh start [--fast]   build if needed, start all four, wait for /health and for the
#                                          servers to log each other in (progress every second, a summary)
#   scripts/federation.sh stop             SIGTERM each (they drain), wait for them to exit
#   scripts/federation.sh status           which are up
#   scripts/federation.sh kill sN | start-one sN   stop or (re)start one server, e.g. to watch retries
#   scripts/federation.sh reset            stop, then drop the four databases (a clean slate)
#   scripts/federation.sh crash sN         kill -9 one server (no drain), e.g. for the fault suite
# --fast compresses the retry schedule to 0/3/6/9/12 s (instead of 0/30 s/5/25/60 min) for demos.
# Logs and configs: run/federation/.
# Other scripts (scripts/chaos.sh) run their own federation through these variables, read whenever a config is
# written (start, start-one): SHINE_FED_DIR (run/federation), SHINE_FED_PORT_BASE (7100: sN listens on base+N),
# SHINE_FED_DB_PREFIX (shine_fed_), SHINE_FED_DELIVERY and SHINE_FED_SYNC (JSON objects replacing the "delivery"
# and "sync" sections), SHINE_FED_URL_sN (the URL peers and cards know sN by, e.g. a proxy in front of it) and
# SHINE_FED_EXTRA_sN (more top-level config members for sN, e.g. "testing" or "cluster"), SHINE_FED_ADMIN_BASE
# (base+80: sN's admin API on 127.0.0.1:base+80+N; empty turns the admin APIs off).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="${SHINE_FED_DIR:-$ROOT/run/federation}"
PORT_BASE="${SHINE_FED_PORT_BASE:-7100}"
DB_PREFIX="${SHINE_FED_DB_PREFIX:-shine_fed_}"
SERVERS=(s1 s2 s3 s4)

port_of() { echo $((PORT_BASE + ${1#s})); }
# Each server's admin API (loopback only) on base+80+N: 7181..7184; SHINE_FED_ADMIN_BASE= (empty) turns it off.
ADMIN_BASE="${SHINE_FED_ADMIN_BASE-$((PORT_BASE + 80))}"
admin_port_of() { [ -n "$ADMIN_BASE" ] && echo $((ADMIN_BASE + ${1#s})); }

# The URL other servers (and users' cards) know sN by.
url_of() {
  local override="SHINE_FED_URL_$1"
  echo "${!override:-ws://127.0.0.1:$(port_of "$1")/ws}"
}

key_file() { echo "$DIR/$1.key"; }

# The server key of each server: a keygen key file, made once and kept (its peers pin the public half).
ensure_key() {
  [ -f "$(key_file "$1")" ] || java -jar "$JAR" keygen --out "$(key_file "$1")" >/dev/null
}

public_key_of() { key_file_public_key "$(key_file "$1")"; }

write_config() {
  local name="$1" fast="$2" peers="" other
  for other in "${SERVERS[@]}"; do
    [ "$other" = "$name" ] && continue
    peers="$peers${peers:+,}{\"serverLogin\":\"$other\",\"url\":\"$(url_of "$other")\",\"publicKeyB64\":\"$(public_key_of "$other")\"}"
  done
  local delivery="" extra="SHINE_FED_EXTRA_$name"
  if [ -n "${SHINE_FED_DELIVERY:-}" ]; then
    delivery=",\"delivery\":$SHINE_FED_DELIVERY"
  elif [ "$fast" = 1 ]; then
    delivery=',"delivery":{"scheduleMs":[0,3000,6000,9000,12000],"workerPeriodMs":1000}'
  fi
  [ -n "${SHINE_FED_SYNC:-}" ] && delivery="$delivery,\"sync\":$SHINE_FED_SYNC"
  [ -n "${!extra:-}" ] && delivery="$delivery,${!extra}"
  [ -n "$ADMIN_BASE" ] && delivery="$delivery,\"admin\":{\"host\":\"127.0.0.1\",\"port\":$(admin_port_of "$name")}"
  cat > "$DIR/$name.json" <<JSON
{
  "serverLogin": "$name",
  "http": {"host": "127.0.0.1", "port": $(port_of "$name")},
  "publicUrl": "$(url_of "$name")",
  "serverKeyFile": "$(key_file "$name")",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$DB_PREFIX$name", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"},
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
  nohup "$SERVER_JAVA" $(server_java_opts) -jar "$JAR" server --config "$DIR/$name.json" >> "$DIR/$name.log" 2>&1 &
  echo $! > "$DIR/$name.pid"
}

wait_healthy() {
  local name="$1" port
  port=$(port_of "$name")
  for _ in $(seq 1 120); do
    if curl -fsS --max-time 5 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      log "$name up at ws://127.0.0.1:$port/ws (web chat: http://127.0.0.1:$port/app/)"
      return 0
    fi
    is_up "$name" || die "$name exited; see $DIR/$name.log"
    sleep 0.5
  done
  die "$name did not become healthy; see $DIR/$name.log"
}

# How many of the other servers have opened a server session with $1 since its start.
sessions_of() {
  local name="$1" other count=0
  for other in "${SERVERS[@]}"; do
    [ "$other" = "$name" ] && continue
    tail -c +$(($(cat "$DIR/$name.log.offset" 2>/dev/null || echo 0) + 1)) "$DIR/$name.log" 2>/dev/null \
      | grep -q "server session authenticated \[serverLogin: $other," && count=$((count + 1))
  done
  echo "$count"
}

# Waits for all four to answer /health and to log each other in, with a progress line every second on stderr
# (one line redrawn in place on a terminal), then a summary.
wait_federation() {
  local started=$SECONDS total=$(( ${#SERVERS[@]} * (${#SERVERS[@]} - 1) )) healthy sessions line s up=()
  while :; do
    healthy=0; sessions=0; up=()
    for s in "${SERVERS[@]}"; do
      is_up "$s" || die "$s exited; see $DIR/$s.log"
      if curl -fsS --max-time 5 "http://127.0.0.1:$(port_of "$s")/health" >/dev/null 2>&1; then
        healthy=$((healthy + 1)); up+=("$s")
        sessions=$((sessions + $(sessions_of "$s")))
      fi
    done
    line="federation: healthy ${healthy}/${#SERVERS[@]} (${up[*]:-none}), server sessions ${sessions}/${total}, $((SECONDS - started)) s"
    if [ -t 2 ]; then printf '\r\033[2K%s' "$line" >&2; else printf '%s\n' "$line" >&2; fi
    [ "$healthy" = "${#SERVERS[@]}" ] && [ "$sessions" = "$total" ] && break
    [ $((SECONDS - started)) -ge 180 ] && { [ -t 2 ] && echo >&2; die "federation not up after 180 s; see $DIR/*.log"; }
    sleep 1
  done
  [ -t 2 ] && echo >&2
  for s in "${SERVERS[@]}"; do log "$s up at ws://127.0.0.1:$(port_of "$s")/ws"; done
  log "federation up in $((SECONDS - started)) s: ${#SERVERS[@]} servers healthy, ${sessions}/${total} server sessions open"
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

crash_one() {
  local name="$1" pid
  is_up "$name" || { rm -f "$DIR/$name.pid"; return 0; }
  pid=$(cat "$DIR/$name.pid")
  kill -KILL "$pid"
  for _ in $(seq 1 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  rm -f "$DIR/$name.pid"
  log "$name killed (SIGKILL)"
}

cmd="${1:-}"
case "$cmd" in
  start)
    fast=0
    [ "${2:-}" = "--fast" ] && fast=1
    command -v curl >/dev/null || apt_install curl
    # a port held by another process (a server of scripts/run.sh, say) fails the start before anything starts
    for s in "${SERVERS[@]}"; do
      if ! is_up "$s" && port_taken "$(port_of "$s")"; then
        die "port $(port_of "$s") ($s) is taken by another process (a server of scripts/run.sh?); stop it, or move the federation with SHINE_FED_PORT_BASE"
      fi
      if ! is_up "$s" && [ -n "$ADMIN_BASE" ] && port_taken "$(admin_port_of "$s")"; then
        die "port $(admin_port_of "$s") ($s's admin API) is taken by another process; stop it, move the admin APIs with SHINE_FED_ADMIN_BASE, or turn them off with SHINE_FED_ADMIN_BASE="
      fi
    done
    ensure_toolchain
    ensure_postgres
    ensure_jar
    ensure_cds
    mkdir -p "$DIR"
    echo "$fast" > "$DIR/fast"
    for s in "${SERVERS[@]}"; do ensure_key "$s"; done
    # the servers this start starts are stopped again when it fails: no half federation left running
    started_here=()
    trap 'status=$?; if [ "$status" != 0 ]; then for s in "${started_here[@]}"; do stop_one "$s"; done; fi' EXIT
    for s in "${SERVERS[@]}"; do
      ensure_database "$DB_PREFIX$s"
      write_config "$s" "$fast"
      is_up "$s" || started_here+=("$s")
      start_one "$s"
    done
    wait_federation
    trap - EXIT
    if [ -n "$ADMIN_BASE" ]; then
      log "admin APIs (loopback): http://127.0.0.1:$(admin_port_of s1)/admin/v1 … $(admin_port_of s4); e.g. java -jar target/shine-server.jar admin --config $DIR/s1.json peers"
    fi
    log "stop it with: scripts/federation.sh stop"
    ;;
  stop)
    for s in "${SERVERS[@]}"; do stop_one "$s"; done
    ;;
  reset)
    for s in "${SERVERS[@]}"; do stop_one "$s"; done
    for s in "${SERVERS[@]}"; do
      PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres -qc \
        "DROP DATABASE IF EXISTS $DB_PREFIX$s WITH (FORCE)" >&2
    done
    log "dropped ${DB_PREFIX}s1..s4"
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
  crash)
    [ -n "${2:-}" ] || die "usage: federation.sh crash sN"
    crash_one "$2"
    ;;
  start-one)
    [ -n "${2:-}" ] || die "usage: federation.sh start-one sN"
    [ -f "$DIR/$2.json" ] || die "no config for $2; run federation.sh start first"
    # the config follows the environment of this call (a test hook set or cleared between starts)
    write_config "$2" "$(cat "$DIR/fast" 2>/dev/null || echo 0)"
    if ! is_up "$2" && port_taken "$(port_of "$2")"; then
      die "port $(port_of "$2") ($2) is taken by another process; stop it first"
    fi
    start_one "$2"
    wait_healthy "$2"
    ;;
  *)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
