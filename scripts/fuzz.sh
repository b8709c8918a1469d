#!/usr/bin/env bash
# The long fuzz run (issue 10): every jqwik property of the project with many more tries than the normal suite,
# a progress line per 1,000 tries of a property, and a summary with the tries, checks, outcome and time of each
# property and the distribution of the answers the server gave.
#   scripts/fuzz.sh [--cases N] [--codec-share PERCENT] [--progress-every N]
# --cases (default 100000) is the total over all properties; --codec-share (default 40) of it goes to the three
# codec properties (fast, no server), the rest is shared by the server properties (EnvelopeFuzzIT, CardFuzzIT,
# HubFuzzIT: one real server per class, each on its own database). A failing property prints its shrunk sample and
# seed in the surefire report named in the summary; jqwik tries that sample first on the next run.
# Output: run/fuzz/fuzz.log (the ledger) and run/fuzz/summary.txt; the surefire reports in target/surefire-reports.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DIR="$ROOT/run/fuzz"
CODEC_CLASSES=(DmCodecFuzzTest)
CODEC_PROPERTIES=3
SERVER_CLASSES=(EnvelopeFuzzIT CardFuzzIT HubFuzzIT)
SERVER_PROPERTIES=10

cases=100000
codec_share=40
progress_every=1000
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift 2 ;;
    --codec-share) codec_share="$2"; shift 2 ;;
    --progress-every) progress_every="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[[ "$cases" =~ ^[0-9]+$ && "$cases" -ge 13 ]] || die "--cases must be a whole number of at least 13"
[[ "$codec_share" =~ ^[0-9]+$ && "$codec_share" -le 100 ]] || die "--codec-share must be 0..100"

ensure_toolchain
ensure_postgres
mkdir -p "$DIR"
LEDGER="$DIR/fuzz.log"
: > "$LEDGER"
codec_tries=$(( cases * codec_share / 100 / CODEC_PROPERTIES ))
server_tries=$(( (cases - codec_tries * CODEC_PROPERTIES) / SERVER_PROPERTIES ))
log "fuzzing: $cases cases, $codec_tries tries for each of $CODEC_PROPERTIES codec properties," \
  "$server_tries for each of $SERVER_PROPERTIES server properties; ledger $LEDGER"

cd "$ROOT"
mvn -q -B test-compile >&2

tail -n +1 -F "$LEDGER" 2>/dev/null | sed -u 's/^/[fuzz] /' >&2 &
TAIL=$!
trap 'kill "$TAIL" 2>/dev/null || true' EXIT

started=$(date +%s)
status=0
run_classes() {
  local tries="$1"; shift
  local list
  list=$(IFS=,; echo "$*")
  # only the default surefire execution: the BouncyCastle one would run the same classes again
  mvn -q -B surefire:test@default-test -Dtest="$list" -Dsurefire.failIfNoSpecifiedTests=false \
    -Dshine.fuzz.tries="$tries" -Dshine.fuzz.report="$LEDGER" -Dshine.fuzz.progressEvery="$progress_every" \
    -Djqwik.reporting.onlyfailures=false >&2 || status=1
}
if [ "$codec_tries" -gt 0 ]; then
  run_classes "$codec_tries" "${CODEC_CLASSES[@]}"
fi
run_classes "$server_tries" "${SERVER_CLASSES[@]}"
elapsed=$(( $(date +%s) - started ))
sleep 1

{
  echo "scripts/fuzz.sh --cases $cases --codec-share $codec_share ($(date -u +%Y-%m-%dT%H:%MZ), $elapsed s)"
  echo
  printf '%-46s %8s %8s %-10s %8s\n' property tries checks outcome seconds
  awk '/^done / {
      label = $2; sub(/^done [^ ]+ /, "");
      split($0, f, " ");
      for (i in f) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
      printf "%-46s %8d %8d %-10s %8.1f\n", label, v["tries"], v["checks"], v["status"], v["ms"] / 1000;
      tries += v["tries"]; checks += v["checks"]; if (v["status"] != "SUCCESSFUL") failed++
    }
    END { printf "%-46s %8d %8d %-10s\n", "total", tries, checks, failed ? failed " failed" : "all passed" }' "$LEDGER"
  echo
  echo "answers per property (status and error code, from jqwik's statistics):"
  for class in "${CODEC_CLASSES[@]}" "${SERVER_CLASSES[@]}"; do
    file=$(ls target/surefire-reports/*."$class"-output.txt 2>/dev/null | head -1)
    [ -n "$file" ] || continue
    awk '/\] \([0-9]+\) answers = / { sub(/^.*\[/, ""); sub(/\] \(.*/, ""); print "  " $0; on = 1; next }
         on && /^    / { print "  " $0; next }
         on { on = 0 }' "$file"
  done
  grep -h "failure=" "$LEDGER" | sed 's/^/FAILED: /' || true
} | tee "$DIR/summary.txt"
exit "$status"
