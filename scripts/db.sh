#!/usr/bin/env bash
# Makes PostgreSQL available (an answering server, or Debian's, installed and started as root) and creates the
# databases named as arguments (default: shine_s1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_postgres
for name in "${@:-shine_s1}"; do
  ensure_database "$name"
done
log "PostgreSQL ready at $DB_HOST:$DB_PORT"
