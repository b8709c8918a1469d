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

log() { printf '[shine] %s\n' "$*" >&2; }
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
  (cd "$ROOT" && mvn -B -q package -DskipTests) || die "build failed"
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
  if [ ! -d "$ROOT/web-tests/node_modules/playwright-core" ]; then
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
