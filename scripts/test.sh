#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL (installed and started when missing).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_toolchain
ensure_postgres
cd "$ROOT"
exec mvn -B test "$@"
