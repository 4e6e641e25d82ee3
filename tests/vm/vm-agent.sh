#!/bin/bash
# tests/vm/vm-agent.sh - runs commands in the other Soft-RoCE VM of a pair
# (tests/vm/verbs2.sh): what ssh is to ptlrun --hosts, for VMs that have no
# ssh. Both ends talk plain TCP on the VMs' private link, which only the two
# VMs are on, so a request needs no key: the VMs are throw-away.
#
#   vm-agent.sh HOST PROGRAM [ARG...]   ptlrun's agent ("vm-agent.sh {host}"):
#                                       runs the argv on HOST in this
#                                       directory; here when HOST is ours
#   vm-agent.sh serve                   the server (VM B's job), until stopped
#   vm-agent.sh wait HOST SECONDS       until HOST's server answers
#   vm-agent.sh stop HOST               ends HOST's server (and so its VM)
#
# The remote program's stdout and stderr come back merged on stdout; the
# agent exits with its status. When the agent dies (ptlrun stops a rank),
# the connection closes and the server stops the program's process group.
# A silent program is given up after PTL_VM_AGENT_TIMEOUT seconds (900).
set -u
me=vm-agent
port=${PTL_VM_AGENT_PORT:-7777}
pidfile=/run/ptlvm-agent.pid
# Ends the program's output, which need not end with a newline.
trailer=$'\036PTLVM_AGENT_RC '

die() { echo "$me: $*" >&2; exit 255; }

# One request per connection, one line: "ping", "stop" or "run DIR ARGV",
# each word quoted by printf %q.
conn() {
	local line rc pid
	IFS= read -r -t 30 line || exit 0
	case $line in
	ping) echo "ready"; exit 0 ;;
	stop) kill "$(cat "$pidfile")"; exit 0 ;;
	run\ *) ;;
	*) echo "$me: unknown request" >&2; exit 0 ;;
	esac
	eval "set -- ${line#run }"
	cd -- "$1" 2>/dev/null || { echo "$me: no folder $1 on $(hostname)"; printf '%s127\n' "$trailer"; exit 0; }
	shift
	# Its own process group, so that stopping it stops its children too.
	setsid "$@" </dev/null 2>&1 &
	pid=$!
	# The agent stays connected while the program runs: end of file on
	# the connection means the agent is gone. It may go before setsid has
	# made the group (ptlrun stops a job at once when another rank fails):
	# then the group is not there yet, and the process itself is stopped.
	exec 5<&0
	{ cat <&5 >/dev/null; kill -TERM -- -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; } &
	exec 5<&-
	wait "$pid"
	rc=$?
	printf '%s%d\n' "$trailer" "$rc"
}

# Connects fd 3 to HOST's server; the link is private and point to point,
# so a connect is answered (or refused) at once, or fails when ARP does.
open_conn() {
	exec 3<>"/dev/tcp/$1/$port"
}

case ${1:-} in
"") sed -n '2,/^set -u/p' "$0" | sed '$d' >&2; exit 2 ;;
conn) conn; exit 0 ;;
serve)
	command -v busybox >/dev/null || die "no busybox for its nc server"
	busybox nc -ll -p "$port" -e "$0" conn &
	echo $! >"$pidfile"
	echo "$me: serving on port $port of $(hostname) ($(ip -4 -o addr show eth0 | awk '{ print $4 }'))"
	wait $!
	echo "$me: stopped"
	exit 0 ;;
wait)
	[ $# = 3 ] || die "usage: $me wait HOST SECONDS"
	end=$(($(date +%s) + $3))
	while [ "$(date +%s)" -lt "$end" ]; do
		if open_conn "$2" 2>/dev/null; then
			echo ping >&3
			IFS= read -r -t 10 -u 3 l && [ "$l" = ready ] && exit 0
			exec 3>&-
		fi
		sleep 1
	done
	die "the agent server on $2:$port did not answer within $3 s (is its VM up? see its log)" ;;
stop)
	[ $# = 2 ] || die "usage: $me stop HOST"
	open_conn "$2" || die "cannot reach the agent server on $2:$port to stop it"
	echo stop >&3
	exit 0 ;;
esac

host=$1
shift
[ $# -ge 1 ] || die "no program to run on $host"
# Our own address: run here, as ssh to this host would.
if ip -4 -o addr show | grep -qF " inet $host/"; then
	exec "$@"
fi
open_conn "$host" || die "cannot reach the agent server on $host:$port (is its VM up?)"
{ printf 'run %q' "$PWD"; printf ' %q' "$@"; printf '\n'; } >&3
limit=${PTL_VM_AGENT_TIMEOUT:-900}
while :; do
	IFS= read -r -t "$limit" -u 3 l
	r=$?
	[ $r -gt 128 ] && die "no word from $host for ${limit} s (PTL_VM_AGENT_TIMEOUT) while it ran: $*"
	case $l in
	*"$trailer"*)
		printf '%s' "${l%%"$trailer"*}"
		exit "${l##*"$trailer"}" ;;
	esac
	[ $r = 0 ] || break
	printf '%s\n' "$l"
done
[ -n "$l" ] && printf '%s' "$l"
die "lost the connection to $host before the exit status of: $*"
