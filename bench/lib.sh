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

# start_bouncer DIR HOST PORT CLIENTS starts a pgbouncer (transaction mode,
# trust) in DIR in front of the server at HOST:PORT, for CLIENTS clients,
# listening on its unix socket in DIR at port bport=PORT+1000; it writes
# DIR/pgbouncer.pid (the caller's EXIT trap kills it).
start_bouncer() {
	local dir=$1 host=$2 port=$3 clients=$4
	mkdir -p "$dir"
	bport=$((port + 1000))
	cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$host port=$port
[pgbouncer]
listen_addr =
listen_port = $bport
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
max_client_conn = $((clients + 100))
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,application_name
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
	echo "\"$PGUSER\" \"\"" >"$dir/users.txt"
	chmod -R a+rwX "$RESULTS"
	# pgbouncer refuses to run as root; setpriv (not runuser: PAM would
	# reset the open-files limit to 1024) keeps the raised limit.
	local asuser=()
	[ "$(id -u)" = 0 ] && asuser=(setpriv --reuid=postgres --regid=postgres --init-groups)
	(ulimit -n $((clients + 200)) && "${asuser[@]}" pgbouncer -d "$dir/pgbouncer.ini")
	for _ in $(seq 50); do [ -S "$dir/.s.PGSQL.$bport" ] && break; sleep 0.1; done
}
