# Shared helpers for the scripts; source it, don't run it.
# Environment: SHINE_DB_HOST (127.0.0.1), SHINE_DB_PORT (5432), SHINE_DB_USER (postgres), SHINE_DB_PASSWORD ("").

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$ROOT/target/shine-server.jar"
# the test bench (bench, chaos, soak: org.shine.tools); built with JAR, holds the product too and runs alone
TOOLS_JAR="$ROOT/target/shine-tools.jar"
DB_HOST="${SHINE_DB_HOST:-127.0.0.1}"
DB_PORT="${SHINE_DB_PORT:-5432}"
DB_USER="${SHINE_DB_USER:-postgres}"

# Every JVM the scripts start ends on OutOfMemoryError (the server halts from its own handlers too): a JVM that ran
# out of memory once may keep answering while its event loops are gone. SHINE_JAVA_OPTS adds to it.
JAVA_OPTS="-XX:+ExitOnOutOfMemoryError ${SHINE_JAVA_OPTS:-}"

# The JVM that runs the servers (run.sh, federation.sh, bench.sh, scale-bench.sh): SHINE_SERVER_JAVA (a java
# command) when set; else the newest JDK 25 under /usr/lib/jvm when there is one; else `java`, as for everything else
# (the build, the tests, the tools). The jar is built for Java 17 and runs on both; on 25 the server JVM keeps an
# ahead-of-time cache with the training run's classes, linkage and method profiles (JEP 483, 514, 515: the JIT
# starts from profiles instead of gathering them under load) and compact object headers (JEP 519: 8-byte headers, a
# smaller heap per session), and Netty keeps its direct memory access (JDK25_OPTS). Only 25 is picked by itself:
# these options are measured there (docs/BENCHMARKS.md); a later JDK is taken when named by SHINE_SERVER_JAVA.
JDK25_OPTS="--sun-misc-unsafe-memory-access=allow -XX:+UseCompactObjectHeaders"
# jdk_major JAVA: the feature version of the JDK of the java command JAVA (its release file), 0 when unknown.
jdk_major() {
  local path home version
  path=$(command -v "$1" 2>/dev/null) || { printf 0; return; }
  home=$(dirname "$(dirname "$(readlink -f "$path")")")
  version=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release" 2>/dev/null | head -n 1)
  printf '%s' "${version:-0}"
}
pick_server_java() {
  local candidate best="" best_version=""
  if [ -n "${SHINE_SERVER_JAVA:-}" ]; then printf '%s' "$SHINE_SERVER_JAVA"; return; fi
  for candidate in /usr/lib/jvm/*/bin/java; do
    [ -x "$candidate" ] && [ "$(jdk_major "$candidate")" = 25 ] || continue
    version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$(dirname "$(dirname "$candidate")")/release")
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best_version" "$version" | sort -V | tail -n 1)" = "$version" ]; then
      best=$candidate; best_version=$version
    fi
  done
  printf '%s' "${best:-java}"
}
SERVER_JAVA=$(pick_server_java)

# The server JVM's start-up archive (issue 18, cold start). A server JVM started by the scripts maps the classes of
# shine-server.jar from an archive instead of reading, parsing and verifying ~7,000 of them from the jar: about a
# third less CPU to start; on JDK 25 the archive is an AOT cache that also holds the training run's method profiles.
# It is made by a training run of the server (cds_train: start, a little traffic, stop; the JVM writes it at exit)
# once per build of the jar and per JVM, and used only while CDS_ARCHIVE.ok says it was made from this jar by this
# java and has all its bytes (Java 17 dies of SIGBUS on a truncated archive); a stale or missing archive only means a
# start without it. It is never written in place (a new one replaces the old by a rename, so a running server keeps
# its mapping). SHINE_CDS=off: no archive. SHINE_SERVER_JAVA_OPTS adds options to the servers' JVMs only
# (experiments), SHINE_JAVA_OPTS to every JVM.
if [ "$(jdk_major "$SERVER_JAVA")" -ge 25 ]; then
  CDS_ARCHIVE="$ROOT/target/shine-server.aot"
else
  CDS_ARCHIVE="$ROOT/target/shine-server.jsa"
fi

log() { printf '[shine] %s\n' "$*" >&2; }
# mvn_plain ARGS...: Maven in batch mode; when its output is not a terminal, without the colour codes the Maven of
# Debian 12 writes even then (stray "\e[0m" in a log or a pipe). The exit code is Maven's.
mvn_plain() {
  if [ -t 1 ]; then
    mvn -B "$@"
  else
    mvn -B "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
    return "${PIPESTATUS[0]}"
  fi
}
# port_taken PORT: whether something accepts TCP connections on 127.0.0.1:PORT.
# key_file_public_key FILE: the device (Ed25519) public key of a key file keygen wrote. The first publicKeyB64 of the
# file: a format 2 file lists its encryption keys' public keys after it.
key_file_public_key() { sed -n '/"publicKeyB64"/{s/.*"publicKeyB64" *: *"\([^"]*\)".*/\1/p;q}' "$1"; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
die() { printf '[shine] error: %s\n' "$*" >&2; exit 1; }

apt_install() {
  [ "$(id -u)" = 0 ] || die "need root to install $* (or install it yourself)"
  command -v apt-get >/dev/null || die "no apt-get here: install $* yourself"
  if [ -z "${SHINE_APT_UPDATED:-}" ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || die "apt-get update failed"
    SHINE_APT_UPDATED=1
  fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 || die "apt-get install $* failed"
}

# Java 17+ and Maven, installed from Debian's packages when missing.
ensure_toolchain() {
  local major=0
  if command -v java >/dev/null; then
    major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}' | cut -d. -f1)
  fi
  if [ "${major:-0}" -lt 17 ]; then
    apt_install openjdk-17-jdk-headless
  fi
  command -v mvn >/dev/null || apt_install maven
}

db_reachable() {
  if command -v pg_isready >/dev/null; then
    pg_isready -q -h "$DB_HOST" -p "$DB_PORT" -t 3
  else
    timeout 3 bash -c "exec 3<>/dev/tcp/$DB_HOST/$DB_PORT" 2>/dev/null
  fi
}

# Uses a PostgreSQL server that answers at DB_HOST:DB_PORT; otherwise (local host only) installs and/or starts
# Debian's PostgreSQL and lets local TCP connections in without a password, as this project's dev setup expects.
ensure_postgres() {
  if db_reachable; then
    return 0
  fi
  case "$DB_HOST" in
    127.0.0.1|localhost|::1) ;;
    *) die "PostgreSQL does not answer at $DB_HOST:$DB_PORT" ;;
  esac
  if ! ls /etc/postgresql/*/main/postgresql.conf >/dev/null 2>&1; then
    apt_install postgresql postgresql-client
  fi
  local version conf_dir
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  conf_dir="/etc/postgresql/$version/main"
  if ! grep -q '^# shine: trust local tcp' "$conf_dir/pg_hba.conf"; then
    log "allowing password-less local TCP connections in $conf_dir/pg_hba.conf"
    local tmp
    tmp=$(mktemp)
    {
      echo '# shine: trust local tcp'
      echo 'host all all 127.0.0.1/32 trust'
      echo 'host all all ::1/128 trust'
      cat "$conf_dir/pg_hba.conf"
    } > "$tmp"
    cat "$tmp" > "$conf_dir/pg_hba.conf"
    rm -f "$tmp"
  fi
  if [ "$DB_PORT" != "$(awk -F'[= \t]+' '/^port/ {print $2}' "$conf_dir/postgresql.conf")" ]; then
    die "the local PostgreSQL $version listens on another port than $DB_PORT; set SHINE_DB_PORT"
  fi
  log "starting PostgreSQL $version"
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$version" main start >&2 2>&1 || pg_ctlcluster --skip-systemctl-redirect "$version" main reload >&2 2>&1 || true
  else
    service postgresql start >&2 || true
  fi
  for _ in $(seq 1 30); do
    db_reachable && return 0
    sleep 1
  done
  die "PostgreSQL did not come up at $DB_HOST:$DB_PORT"
}

# Creates a database when it does not exist (the server would also create it on start).
ensure_database() {
  local name="$1"
  command -v psql >/dev/null || apt_install postgresql-client
  if ! PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
    log "creating database $name"
    PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres -qc "CREATE DATABASE \"$name\"" >&2
  fi
}

# True when the jar $1 exists and no source is newer.
jar_fresh() {
  [ -f "$1" ] && [ -z "$(find "$ROOT/src" "$ROOT/pom.xml" -newer "$1" -print -quit)" ]
}

# Builds the fat jars (JAR and TOOLS_JAR, one `mvn package` makes both) when one is missing or older than any source.
ensure_jar() {
  if jar_fresh "$JAR" && jar_fresh "$TOOLS_JAR"; then
    return 0
  fi
  log "building $JAR and $TOOLS_JAR"
  (cd "$ROOT" && mvn_plain -q package -DskipTests) || die "build failed"
}

# Fails when the product's jar holds a class of the test bench (org/shine/tools/**: the shade filter in pom.xml
# leaves it out) or the tools' jar does not answer `bench --help`.
check_jars() {
  local leaked
  leaked=$(jar tf "$JAR" | grep -c '^org/shine/tools/' || true)
  [ "$leaked" = 0 ] || die "$JAR holds $leaked entries of org/shine/tools (the test bench); see the shade filter in pom.xml"
  java -jar "$TOOLS_JAR" bench --help >/dev/null || die "$TOOLS_JAR does not run: java -jar $TOOLS_JAR bench --help"
  log "jars checked: $JAR holds no org/shine/tools class; $TOOLS_JAR runs"
}

# Debian's Chromium for the browser tests (Playwright drives it; its own browser download is not used).
ensure_chromium() {
  [ -x /usr/bin/chromium ] || apt_install chromium
}

# Node.js (20 or later) with npm for the browser tests, and their npm packages (package-lock.json pins them).
ensure_web_tests() {
  command -v node >/dev/null || apt_install nodejs
  command -v npm >/dev/null || apt_install npm
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  # playwright-core needs Node.js 20 or later (Debian 12's own nodejs is 18)
  [ "$major" -ge 20 ] || die "Node.js $major is too old for the browser tests: install Node.js 20 or later"
  if [ ! -d "$ROOT/web-tests/node_modules/playwright-core" ] || [ ! -d "$ROOT/web-tests/node_modules/jsqr" ]; then
    log "installing the browser tests' npm packages"
    (cd "$ROOT/web-tests" && npm ci --no-audit --no-fund --loglevel=error >&2) || die "npm ci in web-tests failed"
  fi
}

# wait_until_healthy NAME PORT PIDFILE LOGFILE: until the server NAME answers GET /health on PORT (at most 60 s); dies
# when its process (PIDFILE) exits or it never answers.
wait_until_healthy() {
  local name="$1" port="$2" pidfile="$3" logfile="$4"
  for _ in $(seq 1 120); do
    curl -fsS --max-time 5 "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$pidfile")" 2>/dev/null || die "$name exited; see $logfile"
    sleep 0.5
  done
  curl -fsS --max-time 5 "http://127.0.0.1:$port/health" >/dev/null 2>&1 || die "$name did not become healthy; see $logfile"
}

# wait_server_sessions DIR NAME...: until every server NAME has logged the server sessions of all the others
# (DIR/NAME.log), at most 40 s; then a warning naming the missing ones.
wait_server_sessions() {
  local dir="$1" name other missing
  shift
  for _ in $(seq 1 80); do
    missing=""
    for name in "$@"; do
      for other in "$@"; do
        [ "$other" = "$name" ] && continue
        grep -q "server session authenticated \[serverLogin: $other," "$dir/$name.log" || missing="$missing $other→$name"
      done
    done
    [ -z "$missing" ] && return 0
    sleep 0.5
  done
  log "warning: server sessions still missing:$missing"
}

# What an archive is valid for: the jar (size, modification time) and the java that runs it.
cds_key() {
  if [ -z "${CDS_KEY:-}" ]; then
    CDS_KEY="jar $(stat -c '%s %Y' "$JAR" 2>/dev/null) java $(readlink -f "$(command -v "$SERVER_JAVA")") $("$SERVER_JAVA" -version 2>&1 | tr '\n' ' ')"
  fi
  printf '%s' "$CDS_KEY"
}

# True when CDS_ARCHIVE may be used: on, and made from this JAR by this java, all of it there.
cds_usable() {
  [ "${SHINE_CDS:-on}" != off ] && [ -f "$CDS_ARCHIVE" ] && [ -f "$CDS_ARCHIVE.ok" ] || return 1
  case "$CDS_ARCHIVE" in *[[:space:]]*) return 1 ;; esac
  [ "$(cat "$CDS_ARCHIVE.ok" 2>/dev/null)" = "size $(stat -c %s "$CDS_ARCHIVE") $(cds_key)" ]
}

# The options every server JVM gets: JAVA_OPTS, and JDK25_OPTS on a JDK of 25 or later.
server_base_opts() {
  if [ "$(jdk_major "$SERVER_JAVA")" -ge 25 ]; then printf '%s' "$JAVA_OPTS $JDK25_OPTS"; else printf '%s' "$JAVA_OPTS"; fi
}

# The option that hands an archive to SERVER_JAVA (followed by its path).
archive_option() {
  if [ "$(jdk_major "$SERVER_JAVA")" -ge 25 ]; then printf '%s' "-XX:AOTCache="; else printf '%s' "-XX:SharedArchiveFile="; fi
}

# The options of a server JVM started from JAR: the base ones, the archive when usable, SHINE_SERVER_JAVA_OPTS.
server_java_opts() {
  local opts
  opts=$(server_base_opts)
  cds_usable && opts="$opts $(archive_option)$CDS_ARCHIVE"
  printf '%s' "$opts${SHINE_SERVER_JAVA_OPTS:+ $SHINE_SERVER_JAVA_OPTS}"
}

# server_opts_for SERVER_JAR: server_java_opts for target/'s jar; for another jar (a benchmark's "before"), the same
# without the archive, which belongs to target/'s jar.
server_opts_for() {
  if [ "$1" = "$JAR" ]; then
    server_java_opts
  else
    printf '%s' "$(server_base_opts)${SHINE_SERVER_JAVA_OPTS:+ $SHINE_SERVER_JAVA_OPTS}"
  fi
}

# Makes CDS_ARCHIVE when it is not usable (needs PostgreSQL: call after ensure_postgres and ensure_jar). Fails only
# when SERVER_JAVA is no command; without an archive the servers start as before.
ensure_cds() {
  command -v "$SERVER_JAVA" >/dev/null || die "SHINE_SERVER_JAVA=$SERVER_JAVA is not a java command"
  [ "${SHINE_CDS:-on}" = off ] && return 0
  cds_usable && return 0
  case "$CDS_ARCHIVE" in *[[:space:]]*) log "no start-up archive: its path has a space"; return 0 ;; esac
  local started=$SECONDS
  log "making the start-up archive $CDS_ARCHIVE for $SERVER_JAVA (once per build; SHINE_CDS=off skips it)"
  if cds_train; then
    log "start-up archive made in $((SECONDS - started)) s"
  else
    log "warning: no start-up archive (see $ROOT/target/cds-training.log); servers start without it"
  fi
  return 0
}

# A training run: the server on a free loopback port and a database of its own, until /ready answers; a little
# traffic (the test bench's send, when its jar is there; the HTTP endpoints); SIGTERM; the JVM writes the archive
# as it exits. The archive is then checked (a JVM must start on it with -Xshare:on, or -XX:AOTMode=on on 25) before
# it replaces CDS_ARCHIVE.
cds_train() {
  local dir="$ROOT/target/cds-training.$$" port="" db="shine_cds_training_$$" pid rc=0 ok="" candidate url path require
  local saved_traps
  local logfile="$ROOT/target/cds-training.log"
  rm -rf "$dir"; mkdir -p "$dir" || return 1
  for _ in $(seq 1 20); do
    candidate=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
  done
  [ -n "$port" ] || { rm -rf "$dir"; return 1; }
  url="ws://127.0.0.1:$port/ws"
  cat > "$dir/cds.json" <<JSON
{
  "serverLogin": "cds-training",
  "http": {"host": "127.0.0.1", "port": $port},
  "publicUrl": "$url",
  "egress": {"allowCidrs": ["127.0.0.0/8"]},
  "db": {"host": "$DB_HOST", "port": $DB_PORT, "database": "$db", "user": "$DB_USER", "password": "${SHINE_DB_PASSWORD:-}"},
  "admin": {"port": 0},
  "peers": []
}
JSON
  : > "$logfile"
  local made="$dir/$(basename "$CDS_ARCHIVE")" record
  # JDK 25: the cache is written as the JVM exits (by a JVM it starts for that), with the profiles of the run
  if [ "$(jdk_major "$SERVER_JAVA")" -ge 25 ]; then record="-XX:AOTCacheOutput=$made"; else record="-XX:ArchiveClassesAtExit=$made"; fi
  "$SERVER_JAVA" $(server_base_opts) "$record" -jar "$JAR" server --config "$dir/cds.json" >> "$logfile" 2>&1 &
  pid=$!
  # interrupted (Ctrl-C): the training server goes too; the caller's own traps come back after
  saved_traps=$(trap -p INT TERM)
  trap 'kill -KILL "$pid" 2>/dev/null; rm -rf "$dir"; exit 130' INT TERM
  for _ in $(seq 1 240); do
    curl -fsS --max-time 5 "http://127.0.0.1:$port/ready" >/dev/null 2>&1 && { ok=1; break; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -n "$ok" ]; then
    for path in /health /metrics /.well-known/shine-server /app/ /; do
      curl -fsS --max-time 5 "http://127.0.0.1:$port$path" >/dev/null 2>&1 || true
    done
    if [ -f "$TOOLS_JAR" ]; then
      timeout 120 java $JAVA_OPTS -XX:TieredStopAtLevel=1 -jar "$TOOLS_JAR" bench send --server "$url" --clients 2 \
        --window 2 --seconds 1 --warmup 0 --grace 10 --compression offer --metrics on >> "$logfile" 2>&1 || true
    fi
  fi
  kill -TERM "$pid" 2>/dev/null
  # the archive is written as the JVM exits: a few seconds, more on a busy machine
  for _ in $(seq 1 360); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid" 2>/dev/null; ok=""; }
  wait "$pid" 2>/dev/null || rc=$?
  if command -v psql >/dev/null; then
    PGPASSWORD="${SHINE_DB_PASSWORD:-}" psql -h "$DB_HOST" -p "$DB_PORT" -U "$DB_USER" -d postgres -qc \
      "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
  # the archive must be taken, not just tolerated: -Xshare:on (17) and -XX:AOTMode=on (25) fail a JVM that refuses it
  if [ "$(jdk_major "$SERVER_JAVA")" -ge 25 ]; then require="-XX:AOTMode=on"; else require="-Xshare:on"; fi
  if [ -n "$ok" ] && [ "$rc" = 0 ] && [ -s "$made" ] && "$SERVER_JAVA" $(server_base_opts) "$require" \
      "$(archive_option)$made" -jar "$JAR" --version >/dev/null 2>>"$logfile"; then
    printf 'size %s %s\n' "$(stat -c %s "$made")" "$(cds_key)" > "$dir/ok"
    mv -f "$made" "$CDS_ARCHIVE" && mv -f "$dir/ok" "$CDS_ARCHIVE.ok"
  else
    ok=""
  fi
  rm -rf "$dir"
  trap - INT TERM
  eval "$saved_traps"
  [ -n "$ok" ]
}

# Fails unless a server JVM of JAR (SERVER_JAVA) starts whatever the state of its archive: none, one whose
# CDS_ARCHIVE.ok does not match (e.g. cut short: not handed to the JVM, which would die of SIGBUS), garbage that its
# .ok vouches for (the JVM refuses it and starts without). Runs `--version`, no server; CDS_ARCHIVE is pointed at a
# scratch file meanwhile.
check_cds() {
  local real="$CDS_ARCHIVE" scratch opts out flag
  flag=$(archive_option)
  scratch=$(mktemp -d)
  CDS_ARCHIVE="$scratch/$(basename "$real")"
  out=$(
    opts=$(server_java_opts)
    [[ "$opts" != *"$flag"* ]] || { echo "missing archive handed to the JVM"; exit 1; }
    "$SERVER_JAVA" $opts -jar "$JAR" --version >/dev/null 2>&1 || { echo "no start without an archive"; exit 1; }
    head -c 100000 /dev/urandom > "$CDS_ARCHIVE"
    echo "size 200000 $(cds_key)" > "$CDS_ARCHIVE.ok"
    opts=$(server_java_opts)
    [[ "$opts" != *"$flag"* ]] || { echo "an archive shorter than its .ok says was handed to the JVM"; exit 1; }
    echo "size 100000 $(cds_key)" > "$CDS_ARCHIVE.ok"
    opts=$(server_java_opts)
    [[ "$opts" == *"$flag"* ]] || { echo "an archive its .ok vouches for was not used"; exit 1; }
    "$SERVER_JAVA" $opts -jar "$JAR" --version >/dev/null 2>&1 || { echo "no start on a corrupt archive"; exit 1; }
    opts=$(SHINE_CDS=off server_java_opts)
    [[ "$opts" != *"$flag"* ]] || { echo "SHINE_CDS=off still used the archive"; exit 1; }
  ) || { rm -rf "$scratch"; CDS_ARCHIVE="$real"; die "start-up archive ($SERVER_JAVA): ${out:-check failed}"; }
  rm -rf "$scratch"
  CDS_ARCHIVE="$real"
  log "start-up archive checked for $SERVER_JAVA: a server JVM starts with no archive, a cut-short one is not used, a corrupt one is refused"
}
