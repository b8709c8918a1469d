#!/usr/bin/env bash
# The fault suite: real servers on loopback (a four-server federation s1..s4 run by scripts/federation.sh, with
# its own ports, databases and compressed schedule), a load of signed sends with every recipient online on both
# of its servers (`chaos load`), and a fault injected while it runs. Each scenario prints one ledger line
#   LEDGER x: sent N / accepted N / delivered N / lost N / duplicated N / final states ... | details | OK|FAIL
# and the script exits 1 when any scenario lost, duplicated, left unanswered or left unsettled a pair.
#   scripts/chaos.sh [--short] [--only a,b,...] [--keep]
# Senders have routes [s1, s2] and send on s1; recipients have routes [s3, s4]; s3 is known to every server
# through a proxy of the project's own (`chaos proxy`, clean but in (d)), s1 through another (clean) that stands
# for a cluster's load balancer: node a, or node b of (c) when node a is down.
#   a   kill -9 of s1 (the sender's server) mid-burst, restart
#   b   kill -9 of s3 and s4 mid-burst; s4 back a few seconds later, s3 after the load
#   c   s1 as a two-node cluster (Hazelcast, one database), senders on both nodes; s3 and s4 down; kill -9 of
#       one node; s3 and s4 back: the clients move to the survivor, which claims the retries
#   d   the proxy in front of s3 cuts a connection at random every few hundred ms and delays bytes
#   e   s1's own database refuses connections for 5 s (ALLOW_CONNECTIONS false, its backends terminated)
#   f   every pair sent on s1 and s2 at once
#   g+  g-  s3 and s4 down while pairs wait on s1, s1 killed and restarted with its clock 10 min ahead
#       (behind) through testing.clockOffsetMs; s3 and s4 back. g- also checks that s1 made no scheduled
#       attempt while none was due on its new clock.
# --short: small loads (CI); default: the full loads. --keep leaves the databases (shine_chaos_s1..s4).
# Ports 127.0.0.1:7201..7205, 7213 and 7214 (SHINE_CHAOS_PORT_BASE=7200), Hazelcast from 5901 (SHINE_CHAOS_CLUSTER_PORT);
# logs, configs and each scenario's output in run/chaos/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/chaos"
FED="$ROOT/scripts/federation.sh"
PORT_BASE="${SHINE_CHAOS_PORT_BASE:-7200}"
CLUSTER_PORT="${SHINE_CHAOS_CLUSTER_PORT:-5901}"
ALL_SCENARIOS=(a b d e f g+ g- c)

short=0
only=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; shift ;;
    --only) only="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see scripts/chaos.sh --help)" ;;
  esac
done
scenarios=()
for s in "${ALL_SCENARIOS[@]}"; do
  if [ -z "$only" ] || [[ ",$only," == *",$s,"* ]]; then scenarios+=("$s"); fi
done
if [ -n "$only" ]; then
  IFS=',' read -r -a wanted <<< "$only"
  for s in "${wanted[@]}"; do
    [[ " ${ALL_SCENARIOS[*]} " == *" $s "* ]] || die "unknown scenario $s (known: ${ALL_SCENARIOS[*]})"
  done
fi

if [ "$short" = 1 ]; then
  USERS=8; RATE=40; SECONDS_=6; SETTLE=150; PAUSE=2
else
  USERS=20; RATE=100; SECONDS_=20; SETTLE=150; PAUSE=6
fi

port_of() { echo $((PORT_BASE + ${1#s})); }
url_of() { echo "ws://127.0.0.1:$(port_of "$1")/ws"; }
PROXY_PORT=$((PORT_BASE + 13))
PROXY_URL="ws://127.0.0.1:$PROXY_PORT/ws"
NODE_B_PORT=$((PORT_BASE + 5))
NODE_B_URL="ws://127.0.0.1:$NODE_B_PORT/ws"
FRONT_PORT=$((PORT_BASE + 14))
FRONT_URL="ws://127.0.0.1:$FRONT_PORT/ws"

export SHINE_FED_DIR="$DIR"
export SHINE_FED_PORT_BASE="$PORT_BASE"
export SHINE_FED_DB_PREFIX=shine_chaos_
# no admin APIs: node b of scenario c runs a copy of s1's config, whose admin port it could not share
export SHINE_FED_ADMIN_BASE=
# the retry schedule compressed (PROTOCOL §11 keys): 0, 3, 10, 30 s and the last point at 2 min, so that no fault
# of a scenario (a restart takes up to half a minute on a loaded machine) outlasts the schedule and a pair that
# reaches s2 by sync soon finds a point (it joins the next one, PROTOCOL §8); a short lease so a dead node's claimed
# rows come back quickly; sync every second
export SHINE_FED_DELIVERY='{"scheduleMs":[0,3000,10000,30000,120000],"workerPeriodMs":500,"leaseMs":3000}'
export SHINE_FED_SYNC='{"periodMs":1000,"pageSize":200}'
export SHINE_FED_URL_s3="$PROXY_URL"
export SHINE_FED_URL_s1="$FRONT_URL"

psql_admin() { PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres "$@"; }
psql_db() { local db="$1"; shift; PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d "$db" "$@"; }

# Starts `chaos proxy` with options $2... in the background, its output appended to $1; sets launched_pid once it
# listens.
launched_pid=""
launch_proxy() {
  local out="$1" before
  shift
  before=$(grep -c "listening on" "$out" || true)
  nohup java ${SHINE_JAVA_OPTS:-} -jar "$TOOLS_JAR" chaos proxy "$@" >> "$out" 2>&1 &
  launched_pid=$!
  for _ in $(seq 1 120); do
    [ "$(grep -c "listening on" "$out" || true)" -gt "$before" ] && return 0
    kill -0 "$launched_pid" 2>/dev/null || die "the proxy exited; see $out"
    sleep 0.25
  done
  die "the proxy did not start; see $out"
}

proxy_pid=""
# Starts the proxy in front of s3: a cut every $1 ms (0 = never), bytes held back up to $2 ms.
start_proxy() {
  launch_proxy "$DIR/proxy.log" --listen "$PROXY_PORT" --target "127.0.0.1:$(port_of s3)" \
    --drop-every-ms "$1" --max-delay-ms "$2"
  proxy_pid=$launched_pid
}
restart_proxy() {
  stop_proxy
  start_proxy "$1" "$2"
}
stop_proxy() {
  if [ -n "$proxy_pid" ] && kill -0 "$proxy_pid" 2>/dev/null; then
    kill -TERM "$proxy_pid"
    wait "$proxy_pid" 2>/dev/null || true
  fi
  proxy_pid=""
}

front_pid=""
# s1's address as its peers and the users' cards know it: node a, or node b of (c) when node a takes no connection,
# as a load balancer in front of a cluster would do. Without it nothing of s1 could reach s2 by sync after (c)
# kills node a.
start_front() {
  launch_proxy "$DIR/front.log" --listen "$FRONT_PORT" --target "127.0.0.1:$(port_of s1)" \
    --target "127.0.0.1:$NODE_B_PORT"
  front_pid=$launched_pid
}
stop_front() {
  if [ -n "$front_pid" ] && kill -0 "$front_pid" 2>/dev/null; then
    kill -TERM "$front_pid"
    wait "$front_pid" 2>/dev/null || true
  fi
  front_pid=""
}

node_b_pid=""
stop_node_b() {
  if [ -n "$node_b_pid" ] && kill -0 "$node_b_pid" 2>/dev/null; then
    kill -KILL "$node_b_pid"
    wait "$node_b_pid" 2>/dev/null || true
  fi
  node_b_pid=""
}

load_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null || true
  stop_node_b
  "$FED" stop >/dev/null 2>&1 || true
  stop_proxy
  stop_front
  if [ "$keep" = 0 ]; then
    for s in s1 s2 s3 s4; do
      psql_admin -qc "DROP DATABASE IF EXISTS shine_chaos_$s WITH (FORCE)" >/dev/null 2>&1 || true
    done
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts `chaos load` for scenario $1 in the background (more options after it); its output goes to run/chaos/$1.out.
start_load() {
  local scenario="$1" out
  shift
  out="$DIR/$scenario.out"
  : > "$out"
  FAULTS_DONE="$DIR/$scenario.faults-done"
  rm -f "$FAULTS_DONE"
  java ${SHINE_JAVA_OPTS:-} -jar "$TOOLS_JAR" chaos load --scenario "$scenario" --users "$USERS" --rate "$RATE" \
    --seconds "$SECONDS_" --settle-s "$SETTLE" --route "s3=$PROXY_URL" --route "s1=$FRONT_URL" --faults-done "$FAULTS_DONE" \
    --recipient-server "$(url_of s3)" --recipient-server "$(url_of s4)" "$@" > "$out" 2>&1 &
  load_pid=$!
  CURRENT_OUT="$out"
}

# The scenario's faults are over: the load's settle time starts now.
faults_over() { touch "$FAULTS_DONE"; }

# Waits until the load has printed "CHAOS <phase>".
wait_phase() {
  local phase="$1"
  for _ in $(seq 1 4800); do
    grep -Eq "^CHAOS $phase" "$CURRENT_OUT" && return 0
    kill -0 "$load_pid" 2>/dev/null || { tail -n 20 "$CURRENT_OUT" >&2; die "the load stopped before '$phase'"; }
    sleep 0.25
  done
  die "the load never reached '$phase'"
}

LEDGERS=()
FAILED=0
finish_load() {
  local scenario="$1" rc=0 line
  wait "$load_pid" || rc=$?
  load_pid=""
  line=$(grep '^LEDGER ' "$CURRENT_OUT" | tail -n 1 || true)
  if [ -z "$line" ]; then
    line="LEDGER $scenario: no ledger (exit $rc), see run/chaos/$scenario.out | FAIL"
    tail -n 20 "$CURRENT_OUT" >&2
  fi
  [ -n "${2:-}" ] && line="$line | $2"
  if [[ "$line" == *500:INTERNAL* ]]; then
    line="$line | known issue, fixed elsewhere: database trouble answered 500 instead of 503 STORAGE_UNAVAILABLE"
  fi
  [ "$rc" = 0 ] && [ -z "${3:-}" ] || FAILED=1
  echo "$line"
  LEDGERS+=("$line")
}

# s3 and s4 back, started side by side.
restart_recipients() {
  local p3 p4
  "$FED" start-one s3 & p3=$!
  "$FED" start-one s4 & p4=$!
  wait "$p3" "$p4"
}

sender_args() { echo --sender-server "$(url_of s1)" --sender-server "$(url_of s2)"; }

# A login prefix of this run's users: the scenario (g+ → gp, g- → gm) and a random number.
tag_of() { local s="${1/+/p}"; echo "${s/-/m}$RANDOM"; }

scenario_a() {
  start_load a $(sender_args) --tag "$(tag_of a)"
  wait_phase load-started
  sleep "$PAUSE"
  "$FED" crash s1
  sleep 2
  "$FED" start-one s1
  faults_over
  finish_load a
}

scenario_b() {
  start_load b $(sender_args) --tag "$(tag_of b)"
  wait_phase load-started
  sleep "$PAUSE"
  "$FED" crash s3
  "$FED" crash s4
  sleep 3
  "$FED" start-one s4
  wait_phase load-ended
  sleep 2
  "$FED" start-one s3
  faults_over
  finish_load b
}

scenario_d() {
  restart_proxy 300 40
  start_load d $(sender_args) --tag "$(tag_of d)"
  wait_phase load-ended
  restart_proxy 0 0
  faults_over
  finish_load d "proxy: $(grep 'proxy stopped' "$DIR/proxy.log" | tail -n 1 | sed 's/^CHAOS proxy stopped: //')"
}

scenario_e() {
  local db=shine_chaos_s1
  start_load e $(sender_args) --tag "$(tag_of e)"
  wait_phase load-started
  sleep "$PAUSE"
  log "e: $db refuses connections for 5 s"
  psql_admin -qc "ALTER DATABASE $db ALLOW_CONNECTIONS false" >&2
  psql_admin -qtAc "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '$db'" >&2
  sleep 5
  psql_admin -qc "ALTER DATABASE $db ALLOW_CONNECTIONS true" >&2
  log "e: $db takes connections again"
  faults_over
  finish_load e
}

scenario_f() {
  start_load f $(sender_args) --both-senders on --tag "$(tag_of f)"
  faults_over
  finish_load f
}

# Sum of the attempts s1 recorded for this scenario's pairs.
attempts_on_s1() {
  psql_db shine_chaos_s1 -qtAc "SELECT coalesce(sum(attempts), 0) FROM dm_delivery WHERE owner LIKE 'c$1-s%'"
}

scenario_g() {
  local scenario="$1" offset="$2" tag before after note=""
  tag=$(tag_of "$scenario")
  start_load "$scenario" $(sender_args) --tag "$tag"
  wait_phase load-started
  "$FED" crash s3
  "$FED" crash s4
  wait_phase answered
  "$FED" crash s1
  before=$(attempts_on_s1 "$tag")
  log "$scenario: s1 restarts with its clock ${offset} ms off"
  SHINE_FED_EXTRA_s1="\"testing\":{\"clockOffsetMs\":$offset}" "$FED" start-one s1
  # longer than every compressed schedule point on the real clock, so an attempt due only there would show
  sleep 8
  after=$(attempts_on_s1 "$tag")
  note="s1 attempts of these pairs before the clock moved $before, 8 s after $after"
  if [ "$offset" -lt 0 ] && [ "$after" != "$before" ]; then
    note="$note: attempts made that the new clock did not allow | FAIL"
  fi
  restart_recipients
  faults_over
  finish_load "$scenario" "$note" "$([[ "$note" == *FAIL ]] && echo fail)"
  CLOCK_MOVED=1
}

# After (g), s1 runs on the system clock again before another scenario uses it.
CLOCK_MOVED=0
plain_s1() {
  if [ "$CLOCK_MOVED" = 1 ]; then
    "$FED" crash s1
    "$FED" start-one s1
    CLOCK_MOVED=0
  fi
}

scenario_c() {
  local cluster members
  members="[\"127.0.0.1:$CLUSTER_PORT\",\"127.0.0.1:$((CLUSTER_PORT + 1))\"]"
  cluster="\"cluster\":{\"enabled\":true,\"members\":$members,\"port\":$CLUSTER_PORT,\"host\":\"127.0.0.1\"}"
  "$FED" kill s1
  CLOCK_MOVED=0
  SHINE_FED_EXTRA_s1="$cluster" "$FED" start-one s1
  # node b: the same server (login, key, database), its own HTTP port
  sed "s/$(port_of s1)/$NODE_B_PORT/g" "$DIR/s1.json" > "$DIR/s1b.json"
  nohup java ${SHINE_JAVA_OPTS:-} -jar "$JAR" server --config "$DIR/s1b.json" > "$DIR/s1b.log" 2>&1 &
  node_b_pid=$!
  for _ in $(seq 1 240); do
    curl -fsS --max-time 5 "http://127.0.0.1:$NODE_B_PORT/health" >/dev/null 2>&1 && break
    kill -0 "$node_b_pid" 2>/dev/null || die "node b of s1 exited; see $DIR/s1b.log"
    sleep 0.5
  done
  grep -q "Members {size:2" "$DIR/s1b.log" || log "c: warning: node b's log does not show a two-member cluster"
  start_load c --sender-server "$(url_of s1),$NODE_B_URL" --sender-server "$(url_of s2)" --tag "$(tag_of c)"
  wait_phase load-started
  "$FED" crash s3
  "$FED" crash s4
  sleep "$PAUSE"
  "$FED" crash s1
  log "c: node a of s1 killed; node b (pid $node_b_pid) serves alone"
  sleep 1
  restart_recipients
  faults_over
  finish_load c
  stop_node_b
}

command -v curl >/dev/null || apt_install curl
ensure_toolchain
ensure_postgres
command -v psql >/dev/null || apt_install postgresql-client
ensure_jar
mkdir -p "$DIR"
for p in $(seq $((PORT_BASE + 1)) $((PORT_BASE + 5))) "$PROXY_PORT" "$FRONT_PORT"; do
  if timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null; then
    die "something already listens on port $p; stop it or set SHINE_CHAOS_PORT_BASE"
  fi
done
: > "$DIR/proxy.log"
: > "$DIR/front.log"
for s in s1 s2 s3 s4; do
  psql_admin -qc "DROP DATABASE IF EXISTS shine_chaos_$s WITH (FORCE)" >&2
  rm -f "$DIR/$s.log" "$DIR/$s.log.offset"
done
started=$(date +%s)
restart_proxy 0 0
start_front
"$FED" start
for scenario in "${scenarios[@]}"; do
  log "scenario $scenario"
  case "$scenario" in
    a|b|d|e|f|g+|g-) plain_s1 ;;
  esac
  case "$scenario" in
    a) scenario_a ;;
    b) scenario_b ;;
    c) scenario_c ;;
    d) scenario_d ;;
    e) scenario_e ;;
    f) scenario_f ;;
    g+) scenario_g g+ 600000 ;;
    g-) scenario_g g- -600000 ;;
  esac
done
echo
echo "chaos.sh$([ "$short" = 1 ] && echo ' --short')${only:+ --only $only}: $(( $(date +%s) - started )) s"
printf '%s\n' "${LEDGERS[@]}"
exit "$FAILED"
