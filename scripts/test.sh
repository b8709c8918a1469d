#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL (installed and started when missing): the Maven tests, then
# the web chat's browser tests (scripts/web-test.sh). Arguments go to Maven and skip the browser tests, e.g.
# scripts/test.sh -Dtest=MultiDeviceIT; SHINE_SKIP_WEB_TESTS=1 skips them too.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_toolchain
ensure_postgres
cd "$ROOT"
mvn -B test "$@"
if [ "$#" -eq 0 ] && [ "${SHINE_SKIP_WEB_TESTS:-}" != 1 ]; then
  bash "$ROOT/scripts/web-test.sh"
fi
