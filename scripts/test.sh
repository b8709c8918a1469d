#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL (installed and started when missing): the Maven tests, the
# check of the two jars (shine-server.jar holds no class of the test bench, shine-tools.jar runs) and of the
# class-data sharing archive's guards (scripts/lib.sh check_cds: a server JVM starts whatever the archive), then the web
# chat's browser tests (scripts/web-test.sh). Arguments go to Maven and skip the jar check and the browser tests,
# e.g. scripts/test.sh -Dtest=MultiDeviceIT; SHINE_SKIP_WEB_TESTS=1 skips the browser tests too.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_toolchain
ensure_postgres
cd "$ROOT"
mvn -B test "$@"
if [ "$#" -eq 0 ]; then
  ensure_jar
  check_jars
  check_cds
fi
if [ "$#" -eq 0 ] && [ "${SHINE_SKIP_WEB_TESTS:-}" != 1 ]; then
  bash "$ROOT/scripts/web-test.sh"
fi
