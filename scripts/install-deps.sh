#!/usr/bin/env bash
# Installs what pgarena needs to build, test and demo on Debian/Ubuntu:
# a Go toolchain check, the PostgreSQL server binaries (initdb, pg_ctl,
# postgres) and pgbench, the Go modules, and with --tests chromium (for
# the report tests). Safe to run repeatedly: it only installs what is missing.
set -euo pipefail

# --tests: also what the test suite needs beyond pgarena (chromium).
WITH_TESTS=0
for arg in "$@"; do
	case "$arg" in
	--tests) WITH_TESTS=1 ;;
	*) printf 'install-deps: unknown argument %s (known: --tests)\n' "$arg" >&2; exit 2 ;;
	esac
done

log() { printf 'install-deps: %s\n' "$*" >&2; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="__nosudo"; fi
fi

apt_install() {
	if [ "$SUDO" = "__nosudo" ]; then
		log "need root (or sudo) to install: $*"
		exit 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		log "apt-get not found: install $* with your package manager"
		exit 1
	fi
	if [ -z "${APT_UPDATED:-}" ]; then
		$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
		APT_UPDATED=1
	fi
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Go: the toolchain must be new enough for go.mod.
if ! command -v go >/dev/null 2>&1; then
	log "Go not found; installing golang-go from the distribution"
	apt_install golang-go ca-certificates
fi

# PostgreSQL server binaries: look where pgarena looks.
have_pg_server() {
	local d
	for d in $(command -v initdb 2>/dev/null | xargs -r dirname) \
		$(command -v pg_config >/dev/null 2>&1 && pg_config --bindir 2>/dev/null) \
		/usr/lib/postgresql/*/bin /usr/local/pgsql/bin /usr/pgsql-*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

if ! have_pg_server >/dev/null; then
	log "PostgreSQL server binaries not found; installing postgresql"
	# Do not let the package create and start a cluster of its own: pgarena
	# starts the clusters it needs.
	$SUDO mkdir -p /etc/postgresql-common
	if ! grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf; then
		echo 'create_main_cluster = false' | $SUDO tee -a /etc/postgresql-common/createcluster.conf >/dev/null
	fi
	apt_install postgresql postgresql-contrib
fi
PGBIN="$(have_pg_server)"
if [ ! -x "$PGBIN/pgbench" ] && ! command -v pgbench >/dev/null 2>&1; then
	log "pgbench not found; installing postgresql-contrib"
	apt_install postgresql-contrib
fi
log "PostgreSQL server binaries: $PGBIN ($("$PGBIN/postgres" --version))"

# Chromium: only the HTML report tests need it (they open reports in
# headless Chromium through chromedp); pgarena itself does not. It is
# installed with --tests (make test, which sets PGARENA_REQUIRE_CHROMIUM=1
# so those tests fail rather than skip without it), not for make demo.
if [ "$WITH_TESTS" = 1 ] && [ ! -x /usr/bin/chromium ] && ! command -v chromium >/dev/null 2>&1; then
	log "chromium not found; installing chromium (for the HTML report tests)"
	apt_install chromium fonts-liberation
fi

# Go modules.
cd "$(dirname "$0")/.."
go mod download
log "Go $(go env GOVERSION), modules ready"
