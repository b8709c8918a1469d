#!/usr/bin/env bash
# The web chat's tests: its state, outbox and protocol client (Node, no browser), the JS codec and verifier against
# DmCodec's vectors (Node), the JS HPKE against RFC 9180's vectors and the Java side's bodies (Node), then the chat
# in a real Chromium against a four-server federation that the test starts from the fat jar, then what the chat does
# with messages that do not verify and keys the server refuses, against one server (screenshots in
# target/web-screenshots/).
# Installs what it lacks: Debian's chromium, Node.js with npm, the pinned npm packages of web-tests/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ensure_toolchain
ensure_postgres
ensure_chromium
ensure_web_tests
ensure_jar
cd "$ROOT/web-tests"
exec node --test state.test.mjs outbox.test.mjs protocol.test.mjs codec.test.mjs errors.test.mjs chat.test.mjs \
  verify.test.mjs hpke.test.mjs cards.test.mjs qr.test.mjs
