#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL (installed and started when missing): the Maven tests, the
# check of the two jars (shine-server.jar holds no class of the test bench, shine-tools.jar runs), of the start-up
# archive's guards (scripts/lib.sh check_cds: a server JVM starts whatever the archive), of the server JVM the
# scripts pick (a training run: the server runs, takes its archive, prints no JVM warning), of
# scripts/federation.sh refusing a taken port and of the links of README.md and docs/ (scripts/check-links.sh), then
# the web chat's browser tests (scripts/web-test.sh). Every part runs even when an earlier one fails; a summary of
# all of them ends the output, and the exit code is 1 when any failed. Arguments go to Maven and skip the other
# parts, e.g. scripts/test.sh -Dtest=MultiDeviceIT; SHINE_SKIP_WEB_TESTS=1 skips the browser tests.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_toolchain
ensure_postgres
cd "$ROOT"
set +e

results=()
# part NAME COMMAND...: runs one part in a subshell (a part that dies does not stop the others) and notes its result.
# The subshell is a statement of its own, not the test of an `if` or a `||`: there bash ignores `set -e`, and a part
# whose last command succeeds would pass whatever failed before it.
part() {
  local name="$1" started=$SECONDS rc
  shift
  ( set -e; "$@" )
  rc=$?
  if [ "$rc" = 0 ]; then
    results+=("passed  $name ($((SECONDS - started)) s)")
  else
    results+=("FAILED  $name ($((SECONDS - started)) s, exit code $rc)")
  fi
}

# scripts/federation.sh start with its first port taken (a stand-in listener on loopback): refused before any server
# starts, and nothing left running.
check_federation_port() {
  local scratch base holder out
  scratch=$(mktemp -d)
  base=$((20000 + RANDOM % 20000))
  # a listener of the JDK the tests need anyway (a fresh Debian may have no python3 or nc)
  cat > "$scratch/Listen.java" <<'JAVA'
public class Listen {
  public static void main(String[] args) throws Exception {
    try (var socket = new java.net.ServerSocket(Integer.parseInt(args[0]), 50,
        java.net.InetAddress.getLoopbackAddress())) {
      while (true) {
        socket.accept().close();
      }
    }
  }
}
JAVA
  java "$scratch/Listen.java" "$((base + 1))" >/dev/null 2>&1 &
  holder=$!
  for _ in $(seq 1 200); do port_taken "$((base + 1))" && break; sleep 0.1; done
  port_taken "$((base + 1))" || { kill "$holder"; rm -rf "$scratch"; die "the stand-in listener did not start"; }
  out=$(SHINE_FED_DIR="$scratch" SHINE_FED_PORT_BASE="$base" bash "$ROOT/scripts/federation.sh" start 2>&1) && {
    kill "$holder"; rm -rf "$scratch"; die "federation.sh started beside a taken port"; }
  kill "$holder"
  [[ "$out" == *"port $((base + 1)) (s1) is taken by another process"* ]] || {
    rm -rf "$scratch"; die "federation.sh did not name the taken port: $out"; }
  if ls "$scratch"/*.pid >/dev/null 2>&1; then rm -rf "$scratch"; die "federation.sh left servers behind"; fi
  rm -rf "$scratch"
  log "federation.sh checked: a taken port is named and nothing starts"
}

# The server JVM the scripts pick (lib.sh SERVER_JAVA) with the options they give it: a training run (lib.sh
# cds_train, into a scratch archive) starts the server, sends it pairs and stops it; every pair arrived (the send waits
# up to 10 s for the last), the archive was made and taken, and the JVM printed no warning of its own (native access,
# sun.misc.Unsafe, a refused archive).
check_server_jvm() {
  local real="$CDS_ARCHIVE" scratch logfile="$ROOT/target/cds-training.log" result
  scratch=$(mktemp -d)
  CDS_ARCHIVE="$scratch/$(basename "$real")"
  cds_train || { rm -rf "$scratch"; die "no start-up archive from a training run of $SERVER_JAVA (see $logfile)"; }
  cds_usable || { rm -rf "$scratch"; die "the training run's archive is not usable"; }
  rm -rf "$scratch"
  CDS_ARCHIVE="$real"
  result=$(grep '^RESULT scenario=send' "$logfile") || die "the training run sent no pairs (see $logfile)"
  [[ "$result" =~ \ arrived=([0-9]+)\  ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [[ "$result" == *" lost=0 dup=0 "* ]] \
    || die "the training run's pairs did not all arrive: $result"
  if grep -E '^(WARNING|Error):|\[(warning|error) *\]\[(cds|aot)\] (Unable|An error)' "$logfile"; then
    die "$SERVER_JAVA printed warnings (above, from $logfile)"
  fi
  log "server JVM checked: $SERVER_JAVA ($(server_base_opts | xargs)) ran the server, ${BASH_REMATCH[1]} pairs arrived, its archive was taken, no JVM warning"
}

jars_checked() { ensure_jar; check_jars; }
cds_checked() { ensure_jar; check_cds; }
server_jvm_checked() { ensure_jar; check_server_jvm; }

part "maven tests" mvn_plain test "$@"
if [ "$#" -eq 0 ]; then
  part "jars" jars_checked
  part "start-up archive" cds_checked
  part "server JVM" server_jvm_checked
  part "federation.sh port check" check_federation_port
  part "doc links" bash "$ROOT/scripts/check-links.sh"
  if [ "${SHINE_SKIP_WEB_TESTS:-}" != 1 ]; then
    part "browser tests" bash "$ROOT/scripts/web-test.sh"
  fi
fi

log "summary:"
failed=0
for r in "${results[@]}"; do
  log "  $r"
  [[ "$r" == FAILED* ]] && failed=1
done
exit "$failed"
