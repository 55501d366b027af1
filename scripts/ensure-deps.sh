#!/usr/bin/env bash
# Installs what the project needs on a fresh machine, and does nothing the second time:
# npm packages, Debian's redis-server, and mongo-java-server's jars plus our launcher.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "[setup] $*" >&2; }

# npm packages: reinstall only when package-lock.json changed since the last install.
stamp=node_modules/.svc-lock-stamp
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
  log "installing npm packages"
  # `npm ci` installs exactly the lock file and never rewrites it, so a fresh clone stays clean.
  # The lock lists every platform's optional packages (as `npm install` writes it on any machine).
  npm ci --no-audit --no-fund --loglevel=error
  sha256sum package-lock.json | cut -d' ' -f1 > "$stamp"
fi

# Redis: Debian's redis-server, when not configured elsewhere.
if [ -z "${REDIS_URL:-}" ] && ! command -v redis-server >/dev/null 2>&1; then
  log "installing redis-server (apt)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
  # Debian starts a system service on install; we run our own instances.
  ($SUDO systemctl disable --now redis-server >/dev/null 2>&1 || $SUDO service redis-server stop >/dev/null 2>&1) || true
fi

# Tests drive web pages in a real browser: Debian's Chromium (playwright-core drives it).
if [ "${SVC_TEST:-}" = "1" ] && ! command -v chromium >/dev/null 2>&1; then
  log "installing chromium (apt) for browser tests"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The alert rules are checked and unit-tested with promtool: Debian's prometheus package ships it.
if [ "${SVC_TEST:-}" = "1" ] && ! command -v promtool >/dev/null 2>&1; then
  log "installing promtool (apt: prometheus)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq prometheus >/dev/null
  # Only its promtool is wanted: no Prometheus server runs here.
  ($SUDO systemctl disable --now prometheus >/dev/null 2>&1 || $SUDO service prometheus stop >/dev/null 2>&1) || true
fi

# MongoDB wire server: mongo-java-server jars from Maven Central and our tiny launcher.
if [ -z "${MONGODB_URI:-}" ] || [ "${CI:-}" = "true" ] || [ "${SVC_TEST:-}" = "1" ]; then
  mdir=scripts/mongo-server
  # Fetched again whenever pom.xml changed since the last fetch (lib/.pom-stamp holds its hash), so an
  # existing checkout gets a jar the pom adds. Into a fresh folder that then replaces lib/: a jar the pom
  # no longer asks for must go (two slf4j bindings on the classpath, one of them printing nothing), and
  # a failed fetch leaves the old lib/ as it was.
  pom_sum=$(sha256sum "$mdir/pom.xml" | cut -d' ' -f1)
  if [ ! -f "$mdir/lib/.pom-stamp" ] || [ "$(cat "$mdir/lib/.pom-stamp")" != "$pom_sum" ]; then
    log "fetching mongo-java-server jars (maven)"
    rm -rf "$mdir/lib.next"
    # Maven prints its errors on stdout: kept to be shown if the fetch fails.
    mvn_output=$(mktemp)
    if (cd "$mdir" && mvn -q -B dependency:copy-dependencies -DoutputDirectory=lib.next) >"$mvn_output" 2>&1; then
      echo "$pom_sum" >"$mdir/lib.next/.pom-stamp"
      rm -rf "$mdir/lib"
      mv "$mdir/lib.next" "$mdir/lib"
      # The launcher is compiled against these jars.
      rm -f "$mdir/classes/.built"
    elif compgen -G "$mdir/lib/*.jar" >/dev/null; then
      # Offline, say: the jars of the previous pom.xml still run the server (the launcher is
      # compiled against them below, which says so if they no longer fit). The stamp is left
      # as it was, so the next start tries again.
      rm -rf "$mdir/lib.next"
      tail -n 20 "$mvn_output" >&2
      log "could not fetch the jars of scripts/mongo-server/pom.xml (maven's last lines above): the previous jars stay in $mdir/lib, and the next start tries again"
    else
      rm -rf "$mdir/lib.next"
      tail -n 20 "$mvn_output" >&2
      log "could not fetch the jars of scripts/mongo-server/pom.xml (maven's last lines above), and there are none yet"
      rm -f "$mvn_output"
      exit 1
    fi
    rm -f "$mvn_output"
  fi
  # Recompiled when any launcher source is newer than the stamp of the last build.
  if [ ! -f "$mdir/classes/.built" ] || [ -n "$(find "$mdir" -maxdepth 1 -name '*.java' -newer "$mdir/classes/.built")" ]; then
    log "compiling the local MongoDB launcher"
    mkdir -p "$mdir/classes"
    # The sources are UTF-8 (comments hold dashes and quotes): JDK 17 reads them in the locale's
    # encoding otherwise, and refuses them under LANG=C (a container, cron, CI).
    javac -encoding UTF-8 -cp "$mdir/lib/*" -d "$mdir/classes" "$mdir"/*.java
    touch "$mdir/classes/.built"
  fi
fi
