# Sourced by install-deps.sh: apt-get that waits for apt's and dpkg's
# locks instead of failing (on a fresh machine unattended-upgrades often
# holds them for minutes), and says it is waiting.

# APT_LOCK_WAIT: seconds to wait for the lock (default 600).
APT_LOCK_WAIT="${APT_LOCK_WAIT:-600}"

# apt_lock_holders prints the package managers running now ("name (pid N)"),
# which hold or will take apt's or dpkg's lock.
apt_lock_holders() {
	local p comm
	for p in /proc/[0-9]*; do
		comm="$(cat "$p/comm" 2>/dev/null)" || continue
		case "$comm" in
		apt | apt-get | aptitude | dpkg | unattended-upgr | apt.systemd.dai) printf '%s (pid %s) ' "$comm" "${p#/proc/}" ;;
		esac
	done
}

# apt_wait_lock waits up to $1 seconds (default APT_LOCK_WAIT) while another
# package manager runs, saying so every 10 s; apt-get's own
# DPkg::Lock::Timeout covers what is left.
apt_wait_lock() {
	local limit="${1:-$APT_LOCK_WAIT}" waited=0 holders
	while holders="$(apt_lock_holders)" && [ -n "$holders" ] && [ "$waited" -lt "$limit" ]; do
		if [ $((waited % 10)) -eq 0 ]; then
			printf 'install-deps: waiting for apt/dpkg lock, in use by %s(%ss so far, up to %ss)\n' "$holders" "$waited" "$limit" >&2
		fi
		sleep 1
		waited=$((waited + 1))
	done
}

# apt_get runs apt-get (with $SUDO, non-interactive), after waiting for the
# lock and with apt's own lock timeout.
apt_get() {
	apt_wait_lock
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT" "$@"
}
