#!/usr/bin/env bash
# The standard benchmark set (issue 9): `bench send` against servers this script starts itself, with live recipient
# sessions, and a Markdown table of the results written into docs/BENCHMARKS.md (between the bench.sh markers) and
# printed.
#   scripts/bench.sh [--runs N] [--seconds S] [--warmup S] [--only S1,S1-offline,S1-open,S2,S2-open,S1-cluster,S2-dead] [--warm]
#                    [--keep-db] [--no-write] [--jfr] [--before-jar JAR]
# Scenarios: 50 senders × 50 recipients, 200-byte bodies, compression offered by every client session.
#   S1          one server; recipients online on it; closed loop, 10 in flight per sender, slot freed on arrival
#   S1-offline  the same with recipients offline (slot freed on the 200 answer)
#   S1-open     S1 as an open loop at 1,500 pairs/s
#   S2          four servers s1..s4 (own databases, each a pinned peer of the others); senders' routes [s1,s2],
#               recipients' [s3,s4]; sessions on s1 and s3; closed loop as S1
#   S2-open     S2 as an open loop at 500 pairs/s
# S1-cluster (issue 18, only with --only): S1 on s1 run as a two-node cluster (Hazelcast on 127.0.0.1:5951/5952,
#   SHINE_BENCH_CLUSTER_PORT; one database): senders' sessions and routes on node a (7301), recipients' on node b
#   (7311), so every push crosses the clustered event bus; compare with S1 run beside it.
# S2-dead (issue 18, only with --only): S2 in a federation of twenty servers, seven of them dead: s1..s13 run (s5..s13
#   idle, one database connection each), s14..s20 are configured peers of every one with nothing listening on their
#   ports (7314..7320); beside the load, SHINE_BENCH_DEAD_RATE (20) pairs/s from ten other senders on s1 go to seven
#   logins each routed only to one dead server (s1 takes their cards: directory.registration open), so s1's retry
#   worker and its reconnect loops run all along; compare with S2 run beside it.
# Abuse scenarios (issue 16; only with --only, written into a section of their own): two servers s1, s3; 10 honest
# senders on s1 write to recipients online on s3 (routes [s3]) in an open loop of 50 pairs/s, beside
#   tarpit-none     nothing else
#   tarpit          a flood of 150 pairs/s from 10 other senders on s1 to a login routed only to a tarpit (a listener
#                   of the bench on 127.0.0.66 that takes the connection, answers the login as a v1 server and never
#                   answers ReceiveIncomingMessage)
#   tarpit-control  the same flood to a peer that answers at once
# --before-jar JAR runs every scenario twice: servers from JAR ("before"), then from target/ ("after"); the load
# generator is always target/'s.
# Defaults: --runs 1, --seconds 20, --warmup 3 (cold: the first seconds of fresh JVMs). Every run starts its servers
# from the jar on fresh databases (shine_bench_s1..s4) and stops them after; --warm measures the same fresh servers
# after 40 s of the same load instead of 3 (--warmup still wins when given) and labels its rows "warm". --keep-db
# leaves the databases and --no-write leaves docs/BENCHMARKS.md alone. --jfr records every server with Java Flight Recorder (settings=profile)
# during each run's measured window into run/bench/<scenario>-<run>-<server>.jfr (read with `jfr print` or JMC).
# SHINE_BENCH_CONFIG adds top-level members to every server's config (e.g. '"delivery": {"maxInFlightPerDestination": 64}',
# which config loading merges over the defaults), for experiments; the standard set runs the §11 defaults.
# SHINE_BENCH_S1_RATE / SHINE_BENCH_S2_RATE change the open loops' rates (an open loop above the servers' capacity
# ends with a backlog: SHINE_BENCH_GRACE, 10 s by default, is how long arrivals are awaited before a pair counts as
# lost), SHINE_BENCH_ABUSE_RATE the honest load of
# the abuse scenarios and SHINE_BENCH_FLOOD_RATE their flood. Servers listen on 127.0.0.1:7301..7304
# (SHINE_BENCH_PORT_BASE=7300) on databases shine_bench_s1..s4 (SHINE_BENCH_DB_PREFIX=shine_bench: two runs on one
# machine need both apart); logs, configs, keys and each run's full output are in run/bench/.
# Servers from target/ start on its class-data sharing archive (scripts/lib.sh; made once per build), --before-jar's
# without; SHINE_CDS=off: all without. SHINE_SERVER_JAVA_OPTS adds JVM options to the servers only.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/bench"
DOC="$ROOT/docs/BENCHMARKS.md"
BEGIN_MARK='<!-- bench.sh:begin -->'
END_MARK='<!-- bench.sh:end -->'
PORT_BASE="${SHINE_BENCH_PORT_BASE:-7300}"
DB_PREFIX="${SHINE_BENCH_DB_PREFIX:-shine_bench}"
ALL_SCENARIOS=(S1 S1-offline S1-open S2 S2-open)
SCALE_SCENARIOS=(S1-cluster S2-dead)
# S2-dead: the servers of the twenty-server federation that are down (configured peers with nothing listening)
DEAD_SERVERS=(s14 s15 s16 s17 s18 s19 s20)
DEAD_RATE="${SHINE_BENCH_DEAD_RATE:-20}"
CLUSTER_PORT="${SHINE_BENCH_CLUSTER_PORT:-5951}"
ABUSE_SCENARIOS=(tarpit-none tarpit tarpit-control)
ABUSE_BEGIN_MARK='<!-- bench.sh:abuse:begin -->'
ABUSE_END_MARK='<!-- bench.sh:abuse:end -->'

runs=1
seconds=20
warmup=""
only=""
warm=0
keep_db=0
write=1
jfr=0
before_jar=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --warm) warm=1; shift ;;
    --keep-db) keep_db=1; shift ;;
    --no-write) write=0; shift ;;
    --jfr) jfr=1; shift ;;
    --before-jar) before_jar="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see scripts/bench.sh --help)" ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "--runs takes a positive number"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || die "--seconds takes a positive number"
if [ -z "$warmup" ]; then
  warmup=3
  [ "$warm" = 1 ] && warmup=40
fi
[[ "$warmup" =~ ^[0-9]+$ ]] || die "--warmup takes a number"
[ -z "$before_jar" ] || [ -f "$before_jar" ] || die "--before-jar: no file $before_jar"

scenarios=()
if [ -z "$only" ]; then
  scenarios=("${ALL_SCENARIOS[@]}")
else
  IFS=',' read -r -a wanted <<< "$only"
  for s in "${wanted[@]}"; do
    [[ " ${ALL_SCENARIOS[*]} ${SCALE_SCENARIOS[*]} ${ABUSE_SCENARIOS[*]} " == *" $s "* ]] \
      || die "unknown scenario $s (known: ${ALL_SCENARIOS[*]} ${SCALE_SCENARIOS[*]} ${ABUSE_SCENARIOS[*]})"
  done
  # keep the standard order, so each topology's scenarios run together
  for s in "${ALL_SCENARIOS[@]}" "${SCALE_SCENARIOS[@]}" "${ABUSE_SCENARIOS[@]}"; do
    [[ ",$only," == *",$s,"* ]] && scenarios+=("$s")
  done
fi

topology_of() {
  case "$1" in S1-cluster) echo cluster ;; S1*) echo one ;; tarpit*) echo pair ;; S2-dead) echo twenty ;; *) echo four ;; esac
}
# the processes of a topology: s1b is node b of s1 (the same server: its login, key and database)
servers_of() {
  case "$1" in
    one) echo s1 ;; cluster) echo s1 s1b ;; pair) echo s1 s3 ;; four) echo s1 s2 s3 s4 ;; twenty) seq -f 's%g' 1 13 ;;
  esac
}
# the servers a topology's configs name as peers: its processes and, in twenty, the dead ones (keys, no process)
members_of() { servers_of "$1"; [ "$1" = twenty ] && printf '%s\n' "${DEAD_SERVERS[@]}"; return 0; }
is_abuse() { [[ "$1" == tarpit* ]]; }
server_of() { echo "${1%b}"; }
port_of() { case "$1" in s1b) echo $((PORT_BASE + 11)) ;; *) echo $((PORT_BASE + ${1#s})) ;; esac; }
url_of() { echo "ws://127.0.0.1:$(port_of "$1")/ws"; }
db_of() { echo "${DB_PREFIX}_$(server_of "$1")"; }
key_file() { echo "$DIR/$(server_of "$1").key"; }
public_key_of() { key_file_public_key "$(key_file "$1")"; }
psql_admin() { PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres "$@"; }

# A server of this run: default settings but for its address, database and peers (the other servers of its
# topology, their keys pinned as scripts/federation.sh does).
write_config() {
  local name="$1" topology="$2" peers="" other cluster="" extra="" pool=""
  for other in $(members_of "$topology"); do
    [ "$(server_of "$other")" = "$(server_of "$name")" ] && continue
    peers="$peers${peers:+,}{\"serverLogin\":\"$other\",\"url\":\"$(url_of "$other")\",\"publicKeyB64\":\"$(public_key_of "$other")\"}"
  done
  if [ "$topology" = cluster ]; then
    local port=$CLUSTER_PORT
    [ "$name" = s1b ] && port=$((CLUSTER_PORT + 1))
    cluster="
  \"cluster\": {\"enabled\": true, \"members\": [\"127.0.0.1:$CLUSTER_PORT\", \"127.0.0.1:$((CLUSTER_PORT + 1))\"], \"port\": $port, \"host\": \"127.0.0.1\"},"
  fi
  # the flood's recipients are routed only to other servers (a tarpit, or dead ones): s1 takes their cards from the bench
  if [ "$name" = s1 ] && { [ "$topology" = pair ] || [ "$topology" = twenty ]; }; then
    extra="
  \"directory\": {\"registration\": \"open\"},"
  fi
  # the idle members of the twenty-server federation hold one connection each (PostgreSQL's 100 go round)
  if [ "$topology" = twenty ] && [ "${name#s}" -gt 4 ]; then
    pool=", \"poolSize\": 1"
  fi
  cat > "$DIR/$name.json" <<JSON
{
  "serverLogin": "$(server_of "$name")",
  "http": {"host": "127.0.0.1", "port": $(port_of "$name")},
  "publicUrl": "$(url_of "$(server_of "$name")")",$cluster$extra
  "serverKeyFile": "$(key_file "$name")",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$(db_of "$name")", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"$pool},
  "peers": [$peers]${SHINE_BENCH_CONFIG:+,
  $SHINE_BENCH_CONFIG}
}
JSON
}

started=()
# the servers' build: target/'s, or --before-jar's for the "before" runs
server_jar="$JAR"

pid_of() { cat "$DIR/$1.pid"; }

start_servers() {
  local topology="$1" name port
  for name in $(members_of "$topology"); do
    port=$(port_of "$name")
    if curl -fsS --max-time 5 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      die "something already answers on port $port; stop it or set SHINE_BENCH_PORT_BASE"
    fi
    [ -f "$(key_file "$name")" ] || java -jar "$server_jar" keygen --out "$(key_file "$name")" >/dev/null
  done
  for name in $(servers_of "$topology"); do
    if [ "$name" = s1b ]; then
      # node b joins once node a has made the shared database's schema
      wait_until_healthy s1 "$(port_of s1)" "$DIR/s1.pid" "$DIR/s1.log"
    else
      psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >&2
      psql_admin -qc "CREATE DATABASE $(db_of "$name")" >&2
    fi
    write_config "$name" "$topology"
    # the server's log starts afresh with each start, so the session lines below are this start's
    nohup "$SERVER_JAVA" $(server_opts_for "$server_jar") -jar "$server_jar" server --config "$DIR/$name.json" > "$DIR/$name.log" 2>&1 &
    echo $! > "$DIR/$name.pid"
    started+=("$name")
  done
  for name in $(servers_of "$topology"); do
    wait_until_healthy "$name" "$(port_of "$name")" "$DIR/$name.pid" "$DIR/$name.log"
  done
  [ "$topology" = four ] || [ "$topology" = twenty ] && wait_server_sessions "$DIR" s1 s2 s3 s4
  [ "$topology" = pair ] && wait_server_sessions "$DIR" s1 s3
  if [ "$topology" = cluster ] && ! grep -q "Members {size:2" "$DIR/s1b.log"; then
    log "warning: node b's log does not show a two-member cluster"
  fi
  log "servers up: $(for n in $(servers_of "$topology"); do printf '%s (pid %s) ' "$n" "$(pid_of "$n")"; done)"
}


stop_servers() {
  local name pid
  for name in "${started[@]}"; do
    [ -f "$DIR/$name.pid" ] || continue
    pid=$(pid_of "$name")
    kill -TERM "$pid" 2>/dev/null || true
  done
  for name in "${started[@]}"; do
    [ -f "$DIR/$name.pid" ] || continue
    pid=$(pid_of "$name")
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30 s; killing"; kill -KILL "$pid" 2>/dev/null || true; }
    rm -f "$DIR/$name.pid"
  done
  started=()
}

drop_databases() {
  local name
  [ "$keep_db" = 1 ] && return 0
  for name in $(seq -f 's%g' 1 13); do
    psql_admin -qc "DROP DATABASE IF EXISTS $(db_of "$name") WITH (FORCE)" >/dev/null 2>&1 || true
  done
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_servers
  drop_databases
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The bench send command line of a scenario.
bench_args() {
  local scenario="$1" topology name
  topology=$(topology_of "$scenario")
  local args=(bench send --scenario "$scenario" --clients 50 --window 10 --body 200 --compression offer
    --seconds "$seconds" --warmup "$warmup" --grace "${SHINE_BENCH_GRACE:-10}" --server "$(url_of s1)")
  if is_abuse "$scenario"; then
    args=(bench send --scenario "$scenario" --clients 10 --rate "${SHINE_BENCH_ABUSE_RATE:-50}" --body 200
      --seconds "$seconds" --warmup "$warmup" --server "$(url_of s1)" --recipient-server "$(url_of s3)")
  fi
  case "$scenario" in
    tarpit) args+=(--flood-rate "${SHINE_BENCH_FLOOD_RATE:-150}" --flood-peer tarpit) ;;
    tarpit-control) args+=(--flood-rate "${SHINE_BENCH_FLOOD_RATE:-150}" --flood-peer answering) ;;
    S1-offline) args+=(--recipients offline) ;;
    S1-open) args+=(--rate "${SHINE_BENCH_S1_RATE:-1500}") ;;
    S2-open) args+=(--rate "${SHINE_BENCH_S2_RATE:-500}") ;;
    S2-dead)
      args+=(--flood-rate "$DEAD_RATE" --flood-peer dead)
      for name in "${DEAD_SERVERS[@]}"; do args+=(--dead-route "$name=$(url_of "$name")"); done ;;
  esac
  if [ "$topology" = four ] || [ "$topology" = twenty ]; then
    args+=(--sender-sibling "$(url_of s2)" --recipient-server "$(url_of s3)" --recipient-server "$(url_of s4)")
  fi
  [ "$topology" = cluster ] && args+=(--recipient-node "$(url_of s1b)")
  for name in $(servers_of "$topology"); do
    # the idle members of twenty count in the load average, not in the table's CPU per pair
    [ "$topology" = twenty ] && [ "${name#s}" -gt 4 ] && continue
    args+=(--server-pid "$name=$(pid_of "$name")")
    [ "$name" = s1b ] || args+=(--db-name "$(db_of "$name")")
  done
  printf '%s\n' "${args[@]}"
}

# value KEY LINE: the value of KEY=... in a RESULT line ("–" when absent).
value() {
  local v
  v=$(tr ' ' '\n' <<< "$2" | sed -n "s/^$1=//p" | head -n 1)
  [ "$v" = na ] && v=""
  echo "${v:-–}"
}

# each PREFIX LINE: "name v · name v" over the keys PREFIX<name>=v of a RESULT line.
each() {
  tr ' ' '\n' <<< "$2" | sed -n "s/^$1\([^=]*\)=\(.*\)$/\1 \2/p" | sed "s/^${DB_PREFIX}_//; s/ na$/ –/" \
    | paste -sd'|' - | sed 's/|/ · /g'
}

# sum PREFIX LINE: the sum of the values of the keys PREFIX* of a RESULT line.
sum() {
  tr ' ' '\n' <<< "$2" | sed -n "s/^$1[^=]*=\(.*\)$/\1/p" | awk '{ s += $1; n++ } END { if (n) printf "%.2f", s; else printf "–" }'
}

row() {
  local label="$1" load="$2" line="$3" lat accept servers writes commits statements verifications
  lat="$(value p50_ms "$line") / $(value p90_ms "$line") / $(value p99_ms "$line") / $(value max_ms "$line")"
  accept="$(value accept_p50_ms "$line") / $(value accept_p99_ms "$line")"
  servers=$(each cpu_us_per_pair_ "$line")
  writes=$(each syscw_per_pair_ "$line")
  commits=$(each commits_per_pair_ "$line")
  statements=$(tr ' ' '\n' <<< "$line" | sed -n 's/^m_\(s[0-9]*\)_sql_statements=\(.*\)$/\1 \2/p' | paste -sd'|' - \
    | sed 's/|/ · /g')
  statements=${statements:-–}
  verifications=$(sum m_s[0-9]*_shine_signature_verifications_total "$line")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
    "$label" "$load" "$(value accepted_per_s "$line")" "$(value delivered_per_s "$line")" "$lat" "$accept" \
    "$(value lost "$line")" "$(value dup "$line")" "$(errors_of "$line")" "$(value sessions_open "$line")" \
    "${servers:-–}" "${writes:-–}" "$(value pg_us_per_pair "$line")" "$(value pg_backends_us_per_pair "$line")" \
    "$(value bench_us_per_pair "$line")" "${commits:-–}" "$statements / $verifications"
}

errors_of() {
  local n codes unanswered
  n=$(value errors "$1")
  codes=$(tr ' ' '\n' <<< "$1" | sed -n 's/^error_\([^=]*\)=\(.*\)$/\1 \2/p' | paste -sd',' - | sed 's/,/, /g')
  [ -n "$codes" ] && n="$n ($codes)"
  unanswered=$(value unanswered "$1")
  case "$unanswered" in 0|–) ;; *) n="$n; $unanswered never answered" ;; esac
  if [ "$(value flood_peer "$1")" = dead ]; then
    n="$n; to dead servers: $(value flood_sent "$1") sent, $(value flood_accepted "$1") accepted"
  fi
  echo "$n"
}

# abuse_row LABEL BUILD LOAD LINE: a row of the abuse table.
abuse_row() {
  local label="$1" build="$2" load="$3" line="$4" lat flood cpu answers
  lat="$(value p50_ms "$line") / $(value p90_ms "$line") / $(value p99_ms "$line") / $(value max_ms "$line")"
  flood="–"
  if [ "$(value flood_rate "$line")" != – ]; then
    answers=$(tr ' ' '\n' <<< "$line" | sed -n 's/^flood_\(accepted\|delivered\|[A-Z_]*\)=\(.*\)$/\1 \2/p' \
      | paste -sd',' - | sed 's/,/, /g')
    flood="$(value flood_sent "$line") sent: $answers; its peer got $(value flood_peer_calls "$line") calls,"
    flood="$flood at most $(value flood_peer_busiest_5s "$line") within 5 s"
  fi
  cpu=$(tr ' ' '\n' <<< "$line" | sed -n 's/^cpu_pct_\([^=]*\)=\(.*\)$/\1 \2/p' \
    | sed 's/^postgres_backends /PG backends /; s/^postgres /PG (all) /' | paste -sd'|' - | sed 's/|/ · /g')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$build" "$load" \
    "$(value delivered_per_s "$line")" "$lat" "$(value lost "$line")" "$(errors_of "$line")" "$flood" "${cpu:-–}"
}

abuse_header() {
  echo '| scenario | servers built from | load avg | honest delivered/s | honest send→recipient ms p50 / p90 / p99 / max | lost | errors | flood: answers; what its peer got | CPU % of one core over the window |'
  echo '|---|---|---|---|---|---|---|---|---|'
}

table_header() {
  echo '| scenario | load avg | accepted/s | delivered/s | send→recipient ms p50 / p90 / p99 / max | accept ms p50 / p99 | lost | dup | errors | sessions open | server CPU µs/pair | server write syscalls/pair | PG µs/pair (all) | PG µs/pair (bench DBs) | bench µs/pair | transactions/pair | metrics: SQL statements per pair (per server) / signature checks per pair (all) |'
  echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
}

machine() {
  local model mem java_version pg_version
  model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
  mem=$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
  java_version=$("$SERVER_JAVA" -version 2>&1 | head -n 1 | sed 's/.*version "\([^"]*\)".*/\1/')
  pg_version=$(psql_admin -tAc 'SHOW server_version' 2>/dev/null | awk '{print $1}')
  echo "$(nproc) cores (${model:-unknown CPU}), $mem, OpenJDK ${java_version:-?}, PostgreSQL ${pg_version:-?}"
}

commit_of() {
  local c
  c=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ "$c" != unknown ] && ! git -C "$ROOT" diff --quiet HEAD -- src pom.xml 2>/dev/null; then
    c="$c (with uncommitted changes to src/pom.xml)"
  fi
  echo "$c"
}

# write_section BLOCK BEGIN END HEADING: replaces the text between the markers BEGIN and END (markers included)
# with BLOCK, or appends a section HEADING holding it.
write_section() {
  local block="$1" begin="$2" end="$3" heading="$4" tmp
  tmp=$(mktemp)
  if grep -qF "$begin" "$DOC" && grep -qF "$end" "$DOC"; then
    BLOCK="$block" awk -v b="$begin" -v e="$end" '
      $0 == b { print ENVIRON["BLOCK"]; skip = 1; next }
      $0 == e { skip = 0; next }
      !skip { print }' "$DOC" > "$tmp"
  else
    { cat "$DOC"; printf '\n## %s\n\n%s\n' "$heading" "$block"; } > "$tmp"
  fi
  cat "$tmp" > "$DOC"
  rm -f "$tmp"
}

command -v curl >/dev/null || apt_install curl
ensure_toolchain
ensure_postgres
command -v psql >/dev/null || apt_install postgresql-client
ensure_jar
ensure_cds
mkdir -p "$DIR"
# record_window OUT TOPOLOGY PREFIX: once the bench in OUT starts its measured window, a flight recording of every
# server of TOPOLOGY for the window's length, into PREFIX-<server>.jfr.
record_window() {
  local out="$1" topology="$2" prefix="$3" name waited=0
  until grep -q '^measuring for' "$out" 2>/dev/null; do
    sleep 0.2
    waited=$((waited + 1))
    [ "$waited" -gt $(( (warmup + 600) * 5 )) ] && return 0
  done
  for name in $(servers_of "$topology"); do
    jcmd "$(pid_of "$name")" JFR.start name=bench settings=profile duration="${seconds}s" \
      filename="$prefix-$name.jfr" > /dev/null || log "jfr: could not start a recording of $name"
  done
  log "jfr: recording $(servers_of "$topology" | tr '\n' ' ')for ${seconds} s into $prefix-*.jfr"
}

started_at=$(date -u '+%Y-%m-%d %H:%M UTC')
rows=()
abuse_rows=()
builds=(after)
[ -n "$before_jar" ] && builds=(before after)
for scenario in "${scenarios[@]}"; do
  topology=$(topology_of "$scenario")
  for build in "${builds[@]}"; do
    if [ "$build" = before ]; then server_jar="$before_jar"; else server_jar="$JAR"; fi
    build_label="target/ ($(commit_of))"
    [ "$build" = before ] && build_label="$before_jar (before)"
    for run in $(seq 1 "$runs"); do
      # fresh JVMs on fresh databases for every run: a run never inherits the JIT or the rows of another
      stop_servers
      start_servers "$topology"
      label="$scenario"
      [ "$warm" = 1 ] && label="$scenario warm"
      [ "$runs" -gt 1 ] && label="$label #$run"
      stem="$scenario-$run"
      if [ "${#builds[@]}" -gt 1 ]; then
        label="$label ($build)"
        stem="$scenario-$build-$run"
      fi
      out="$DIR/$stem.out"
      mapfile -t args < <(bench_args "$scenario")
      load=$(cut -d' ' -f1 /proc/loadavg)
      log "$label: servers from $server_jar; java -jar target/shine-tools.jar ${args[*]}"
      rc=0
      : > "$out"
      recorder=""
      if [ "$jfr" = 1 ]; then
        record_window "$out" "$topology" "$DIR/$stem" &
        recorder=$!
      fi
      timeout $((seconds + warmup + 600)) java $JAVA_OPTS -jar "$TOOLS_JAR" "${args[@]}" > "$out" 2>&1 || rc=$?
      [ -z "$recorder" ] || wait "$recorder" || true
      line=$(grep '^RESULT ' "$out" | tail -n 1 || true)
      if [ -z "$line" ]; then
        log "$label: no RESULT line (exit $rc); see $out"
        tail -n 20 "$out" >&2
        failed="| $label | $load | failed (exit $rc, see run/bench/$stem.out) ||||||||||||||||"
        if is_abuse "$scenario"; then abuse_rows+=("$failed"); else rows+=("$failed"); fi
      else
        grep -E '^(window|send→recipient|accept latency|pairs sent|errors|per second|recipient sessions|flood|  cpu|  syscalls|  transactions|  metric)' "$out" >&2 || true
        if is_abuse "$scenario"; then
          abuse_rows+=("$(abuse_row "$label" "$build_label" "$load" "$line")")
        else
          rows+=("$(row "$label" "$load" "$line")")
        fi
      fi
      stop_servers
    done
  done
done
stop_servers

command_line="scripts/bench.sh --runs $runs --seconds $seconds --warmup $warmup${only:+ --only $only}"
[ "$warm" = 1 ] && command_line="$command_line --warm"
command_line="$command_line${before_jar:+ --before-jar $before_jar}"
# publish TABLE BEGIN END HEADING: prints the table and writes it, with how it was made, between the markers.
publish() {
  local table="$1" begin="$2" end="$3" heading="$4" block
  block=$(printf '%s\nLast written by `%s`\non %s; commit %s; %s; load average (1 min) at each run'"'"'s start in the table.\n\n%s\n%s' \
    "$begin" "$command_line" "$started_at" "$(commit_of)" "$(machine)" "$table" "$end")
  echo "$table"
  if [ "$write" = 1 ]; then
    write_section "$block" "$begin" "$end" "$heading"
    log "table written into $DOC ($heading)"
  fi
}
if [ "${#rows[@]}" -gt 0 ]; then
  publish "$(table_header; printf '%s\n' "${rows[@]}")" "$BEGIN_MARK" "$END_MARK" "The standard set: scripts/bench.sh"
fi
if [ "${#abuse_rows[@]}" -gt 0 ]; then
  publish "$(abuse_header; printf '%s\n' "${abuse_rows[@]}")" "$ABUSE_BEGIN_MARK" "$ABUSE_END_MARK" \
    "Abuse: tarpit flood (scripts/bench.sh, issue 16)"
fi
