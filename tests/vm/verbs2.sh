#!/bin/bash
# tests/vm/verbs2.sh - make check: the verbs NAL across two hosts. Two
# Soft-RoCE VMs (tests/vm/rxe-vm.sh, one CPU each: the host may have only
# two) whose NICs are joined by a QEMU socket on 127.0.0.1, rxe0 on each
# eth0. VM A (10.77.0.1) runs ptlrun --hosts over both with the agent
# tests/vm/vm-agent.sh, whose server runs in VM B (10.77.0.2). The tests are
# vm-tests.sh's x_* (ring, the Portals mp tests on 2 VMs x 2 ranks, ptltool
# info in each), or those named:
#
#   PTL_TOP_BUILDDIR=$PWD tests/vm/verbs2.sh [x_ring x:mp_md ...]
#
# PTL_VM_LINK=stream (default): VM A's QEMU listens, VM B's connects; udp:
# each sends datagrams to the other's port. Skipped (77) where the VM cannot
# run. Logs: tests/vm/out2/<test>.log, and vmB.log for VM B.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
V=$(cd "$PTL_TOP_SRCDIR/tests/vm" && pwd -P)
out=$PTL_TOP_BUILDDIR/tests/vm/out2
mkdir -p "$out"
rm -f "$out"/*.log
out=$(cd "$out" && pwd -P)
# Both VMs see the host's / read-only but have their own /tmp: share the
# source and build trees (a CI clone may well live under /tmp), and out.
for d in "$PTL_TOP_SRCDIR" "$PTL_TOP_BUILDDIR"; do
	d=$(cd "$d" && pwd -P)
	case ":${PTL_VM_RW:-}:" in *":$d:"*) ;; *) PTL_VM_RW=${PTL_VM_RW:+$PTL_VM_RW:}$d ;; esac
done
PTL_VM_RW=$PTL_VM_RW:$out
# Each test has its own limit (PTL_VM_TEST_TIMEOUT); this bounds a boot.
PTL_VM_TIMEOUT=${PTL_VM_TIMEOUT:-900}
PTL_VM_SMP=1
PTL_VM_ME=10.77.0.1
PTL_VM_PEER=10.77.0.2
export PTL_VM_RW PTL_VM_TIMEOUT PTL_VM_SMP PTL_VM_ME PTL_VM_PEER

tests="x_ready x_info x_ring x_ring4 x:mp_match x:mp_md x:mp_bulk x:mp_atomic x:mp_threads"
[ $# -gt 0 ] && tests="x_ready $*"

# A port nothing on this host uses (TCP or UDP), from the dynamic range.
free_port() {
	local p i
	for i in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		[ "$p" = "${1:-}" ] && continue
		ss -Hltun "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
command -v ss >/dev/null || { echo "SKIP: verbs2: no ss (apt-get install iproute2)"; exit 77; }
pa=$(free_port) && pb=$(free_port "$pa") || { echo "verbs2: no free port found"; exit 99; }
case ${PTL_VM_LINK:-stream} in
stream) neta=listen:$pa netb=connect:$pa ;;
udp) neta=udp:$pa:$pb netb=udp:$pb:$pa ;;
*) echo "verbs2: PTL_VM_LINK must be stream or udp"; exit 99 ;;
esac

a= b=
stop_vms() {
	[ -n "$a" ] && kill -TERM "$a" 2>/dev/null
	[ -n "$b" ] && kill -TERM "$b" 2>/dev/null
	wait
}
trap 'stop_vms; exit 130' INT TERM HUP

# VM A runs the tests, then tells VM B's agent server to stop.
cmd=$(printf '%q ' "$V/vm-tests.sh" "$out" $tests)
cmd="$cmd; rc=\$?; $(printf '%q' "$V/vm-agent.sh") stop $PTL_VM_PEER; exit \$rc"
PTL_VM_NET=$neta PTL_VM_IP=$PTL_VM_ME/24 "$V/rxe-vm.sh" "$cmd" &
a=$!
# A connecting QEMU fails at once when nobody listens yet.
if [ "${neta%%:*}" = listen ]; then
	n=0
	until ss -Hltn "sport = :$pa" | grep -q .; do
		if ! kill -0 "$a" 2>/dev/null; then
			wait "$a"
			rc=$?
			[ $rc = 77 ] || echo "verbs2: VM A ended (rc $rc) before its QEMU listened on 127.0.0.1:$pa"
			exit $rc
		fi
		n=$((n + 1))
		# up to 10 minutes: VM A may be the one building the initramfs
		[ $n -gt 3000 ] && { echo "verbs2: VM A's QEMU never listened on 127.0.0.1:$pa"; stop_vms; exit 99; }
		sleep 0.2
	done
fi
PTL_VM_NET=$netb PTL_VM_IP=$PTL_VM_PEER/24 "$V/rxe-vm.sh" "$V/vm-agent.sh" serve >"$out/vmB.log" 2>&1 &
b=$!
wait "$a"
rc=$?
a=
# VM B powers off once told to stop; if it was never reached, stop it.
n=0
while kill -0 "$b" 2>/dev/null && [ $n -lt 60 ]; do n=$((n + 1)); sleep 1; done
kill -0 "$b" 2>/dev/null && echo "verbs2: VM B still up 60 s after VM A ended: stopping it"
kill -TERM "$b" 2>/dev/null
wait "$b"
rcb=$?
b=
if [ $rc != 0 ] && [ $rc != 77 ]; then
	for f in "$out"/*.log; do
		[ -f "$f" ] && { echo "---- $(basename "$f" .log)"; tail -n 40 "$f"; }
	done
elif [ $rc = 0 ] && [ $rcb != 0 ]; then
	echo "verbs2: VM B ended with rc $rcb"
	tail -n 40 "$out/vmB.log"
	rc=1
fi
exit $rc
