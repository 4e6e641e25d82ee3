#!/bin/bash
# tests/vm/rxe-vm2.sh - run a command across two throw-away Soft-RoCE VMs
# (tests/vm/rxe-vm.sh, one CPU each: the host may have only two) whose NICs
# are joined by a QEMU socket on 127.0.0.1, rxe0 on each eth0:
#
#   VM A  10.77.0.1  runs the command (PTL_VM_ME=10.77.0.1, PTL_VM_PEER=10.77.0.2)
#   VM B  10.77.0.2  runs tests/vm/vm-agent.sh's server until A is done, so
#                    "vm-agent.sh 10.77.0.2 PROG..." runs PROG there, and
#                    ptlrun --agent "tests/vm/vm-agent.sh {host}" places ranks
#
#   tests/vm/rxe-vm2.sh PROGRAM [ARG...]     run an argv in VM A
#   tests/vm/rxe-vm2.sh 'shell command'      one argument: bash -c
#
# Exit status: the command's; 77 with "SKIP: <reason>" when the VMs cannot
# run here; 99 when a VM failed. Environment, besides rxe-vm.sh's
# (PTL_VM_NET, PTL_VM_IP and PTL_VM_SMP are set here):
#   PTL_VM_LINK=stream   A's QEMU listens, B's connects (TCP); udp: each
#                        sends datagrams to the other's port
#   PTL_VM_B_LOG=FILE    VM B's output (default: our stderr, "vm B: ...")
#   PTL_VM_B_WAIT=300    seconds VM A waits for VM B's agent server
set -u
me=rxe-vm2
V=$(cd "$(dirname "$0")" && pwd -P)
[ $# -ge 1 ] || { sed -n '2,/^set -u/p' "$0" | sed '$d' >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "SKIP: $me: must run as root (rxe-vm.sh)" >&2; exit 77; }
command -v ss >/dev/null || { echo "SKIP: $me: no ss (apt-get install iproute2)" >&2; exit 77; }
PTL_VM_SMP=1
PTL_VM_ME=10.77.0.1
PTL_VM_PEER=10.77.0.2
export PTL_VM_SMP PTL_VM_ME PTL_VM_PEER

# The link's QEMU sockets live in a network namespace of their own whose
# loopback acknowledges at once (route option quickack): QEMU sets
# TCP_NODELAY only on the connecting end, so without it each frame of the
# listening VM waits for the other end's delayed ACK (a half round trip of
# ~24 ms instead of ~1 ms).
ns=ptlvm2.$$
if ip netns add "$ns" 2>/dev/null; then
	trap 'ip netns del "$ns" 2>/dev/null' EXIT
	ip -n "$ns" link set lo up &&
		ip -n "$ns" route replace local 127.0.0.1 dev lo table local src 127.0.0.1 quickack 1 ||
		{ echo "$me: cannot set up the loopback of network namespace $ns" >&2; exit 99; }
	inns=(ip netns exec "$ns")
else
	echo "$me: ip netns add failed: the VMs' link uses this host's loopback and waits on delayed ACKs" >&2
	ns= inns=()
fi
export PTL_VM_NETNS=$ns

# A port nothing on this host uses (TCP or UDP), from the dynamic range.
free_port() {
	local p i
	for i in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		[ "$p" = "${1:-}" ] && continue
		"${inns[@]}" ss -Hltun "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
pa=$(free_port) && pb=$(free_port "$pa") || { echo "$me: no free port found" >&2; exit 99; }
case ${PTL_VM_LINK:-stream} in
stream) neta=listen:$pa netb=connect:$pa ;;
udp) neta=udp:$pa:$pb netb=udp:$pb:$pa ;;
*) echo "$me: PTL_VM_LINK must be stream or udp" >&2; exit 99 ;;
esac

a= b=
stop_vms() {
	[ -n "$a" ] && kill -TERM "$a" 2>/dev/null
	[ -n "$b" ] && kill -TERM "$b" 2>/dev/null
	wait
}
trap 'stop_vms; exit 130' INT TERM HUP

# VM A waits for VM B's agent server, runs the command, then tells the
# server to stop, which powers VM B off.
if [ $# -eq 1 ]; then
	cmd=$1
else
	cmd=$(printf '%q ' "$@")
fi
agent=$(printf '%q' "$V/vm-agent.sh")
PTL_VM_NET=$neta PTL_VM_IP=$PTL_VM_ME/24 "$V/rxe-vm.sh" \
	"$agent wait $PTL_VM_PEER ${PTL_VM_B_WAIT:-300} || exit 99"$'\n'"$cmd"$'\n'"rc=\$?; $agent stop $PTL_VM_PEER; exit \$rc" &
a=$!
# A connecting QEMU fails at once when nobody listens yet.
if [ "${neta%%:*}" = listen ]; then
	n=0
	until "${inns[@]}" ss -Hltn "sport = :$pa" | grep -q .; do
		if ! kill -0 "$a" 2>/dev/null; then
			wait "$a"
			rc=$?
			[ $rc = 77 ] || echo "$me: VM A ended (rc $rc) before its QEMU listened on 127.0.0.1:$pa" >&2
			exit $rc
		fi
		n=$((n + 1))
		# up to 10 minutes: VM A may be the one building the initramfs
		[ $n -gt 3000 ] && { echo "$me: VM A's QEMU never listened on 127.0.0.1:$pa" >&2; stop_vms; exit 99; }
		sleep 0.2
	done
fi
if [ -n "${PTL_VM_B_LOG:-}" ]; then
	PTL_VM_NET=$netb PTL_VM_IP=$PTL_VM_PEER/24 "$V/rxe-vm.sh" "$V/vm-agent.sh" serve \
		>"$PTL_VM_B_LOG" 2>&1 &
else
	PTL_VM_NET=$netb PTL_VM_IP=$PTL_VM_PEER/24 "$V/rxe-vm.sh" "$V/vm-agent.sh" serve \
		> >(sed 's/^/vm B: /' >&2) 2>&1 &
fi
b=$!
wait "$a"
rc=$?
a=
# VM B powers off once told to stop; if it never was (A failed early), stop it.
n=0
while kill -0 "$b" 2>/dev/null && [ $n -lt 60 ]; do n=$((n + 1)); sleep 1; done
kill -0 "$b" 2>/dev/null && echo "$me: VM B still up 60 s after VM A ended: stopping it" >&2
kill -TERM "$b" 2>/dev/null
wait "$b"
rcb=$?
b=
if [ "$rc" = 0 ] && [ "$rcb" != 0 ]; then
	echo "$me: VM B ended with rc $rcb${PTL_VM_B_LOG:+ (log $PTL_VM_B_LOG)}" >&2
	exit 99
fi
exit "$rc"
