# Shared by the bench/ scripts: build pgarena, start a named cluster NAME
# (removed on exit), export PG* for it and set PGARENA, DSN and RESULTS;
# PGBIN and PGBENCH name PostgreSQL's binaries and pgbench.
#   start_cluster NAME [extra `pgarena cluster start` flags]
make -s build >/dev/null
PGARENA=$PWD/bin/pgarena
export PGARENA_HOME=${PGARENA_HOME:-/var/tmp/pgarena-bench-home}
mkdir -p "$PGARENA_HOME" "$(dirname "$OUT")"
chmod 755 "$PGARENA_HOME"
RESULTS=$(mktemp -d)
# PostgreSQL's binaries, and pgbench itself (/usr/bin/pgbench is a Perl
# wrapper: profiling it profiles Perl).
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBIN=${PGBIN:-$(pg_config --bindir)}
PGBENCH=${PGBENCH:-$PGBIN/pgbench}

start_cluster() {
	local name=$1
	shift
	"$PGARENA" cluster rm "$name" >/dev/null 2>&1 || true
	"$PGARENA" cluster start --name "$name" "$@" >/dev/null
	# shellcheck disable=SC2064
	trap "\"$PGARENA\" cluster rm \"$name\" >/dev/null 2>&1 || true; rm -rf \"$RESULTS\"" EXIT
	eval "$("$PGARENA" cluster env "$name")"
	DSN="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
	: >"$OUT"
}
