# Shared by the bench/ scripts: build pgarena, start a named cluster NAME
# (removed on exit), export PG* for it and set PGARENA, DSN and RESULTS.
#   start_cluster NAME [extra `pgarena cluster start` flags]
make -s build >/dev/null
PGARENA=$PWD/bin/pgarena
export PGARENA_HOME=${PGARENA_HOME:-/var/tmp/pgarena-bench-home}
mkdir -p "$PGARENA_HOME" "$(dirname "$OUT")"
chmod 755 "$PGARENA_HOME"
RESULTS=$(mktemp -d)

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
