#!/usr/bin/env bash
# Builds and installs the Citus extension from a source directory into the
# PostgreSQL that pg_config names (Citus is not in Debian's archive, and CI
# cannot download it: bring its source, e.g. a release tarball or a git
# checkout of citusdata/citus v13.x for PostgreSQL 15-17).
#
#   scripts/install-citus.sh SRC_DIR [PG_CONFIG]
#
# Installs the build dependencies it lacks (Debian/Ubuntu, needs root or
# sudo), then configure, make -j2 under nice, make install. Prints the
# Citus and PostgreSQL versions at the end. Tests that need Citus find it
# through internal/pgtest (StartCitus); PGARENA_REQUIRE_CITUS=1 makes them
# fail instead of skipping where it is absent.
set -euo pipefail

log() { printf 'install-citus: %s\n' "$*" >&2; }

if [ $# -lt 1 ] || [ ! -f "$1/configure" ]; then
	log "usage: $0 SRC_DIR [PG_CONFIG] (SRC_DIR: a Citus source tree with ./configure)"
	exit 2
fi
SRC=$(cd "$1" && pwd)
PG_CONFIG=${2:-pg_config}
if ! command -v "$PG_CONFIG" >/dev/null 2>&1; then
	log "$PG_CONFIG not found: install PostgreSQL, or name its pg_config as the second argument"
	exit 2
fi
PGVER=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

# The server headers must match the running server's minor version: only
# install postgresql-server-dev-N when PGXS is missing (it never upgrades
# the server itself: the same candidate version as postgresql-N).
need=()
[ -f "$("$PG_CONFIG" --pgxs)" ] || need+=("postgresql-server-dev-$PGVER")
for pkg in libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev libselinux1-dev \
	libxslt1-dev libpam0g-dev libreadline-dev autoconf flex bison make gcc; do
	dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		log "missing build dependencies: ${need[*]} (install them with your package manager)"
		exit 1
	fi
	log "installing ${need[*]}"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

cd "$SRC"
# PostgreSQL 15.20's commands/dbcommands.h exports have_createdb_privilege;
# Citus 13.x's pg_version_compat.h defines a static copy of it for
# PostgreSQL 15 (a "static declaration follows non-static" error). Where
# the server exports it, rename the unused copy.
compat=src/include/pg_version_compat.h
if grep -q 'extern bool have_createdb_privilege' "$("$PG_CONFIG" --includedir-server)/commands/dbcommands.h" 2>/dev/null &&
	grep -q '^have_createdb_privilege(void)' "$compat" 2>/dev/null; then
	log "renaming $compat's copy of have_createdb_privilege (the server exports it)"
	sed -i 's/^have_createdb_privilege(void)/citus_unused_have_createdb_privilege(void)/' "$compat"
fi
if [ ! -f Makefile.global ]; then
	log "configure (PG_CONFIG=$PG_CONFIG)"
	PG_CONFIG=$PG_CONFIG ./configure --quiet
fi
log "make -j2"
nice make -s -j2 with_llvm=no # no JIT bitcode: half the build time
log "make install"
$SUDO make -s install with_llvm=no

ver=$(sed -n -E "s/^#define CITUS_VERSION \"(.*)\"/\1/p" src/include/citus_version.h 2>/dev/null || true)
log "installed Citus ${ver:-?} into $("$PG_CONFIG" --pkglibdir) for $("$PG_CONFIG" --version)"
