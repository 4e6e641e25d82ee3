#!/bin/sh
# netns.sh: two "hosts" on this machine as network namespaces joined by a
# veth pair on 10.77.0.0/24; ptlrun --hosts with the agent
# "ip netns exec {host}" runs 2 hosts x 2 ranks (shm within a host, tcp
# across): the ring example, the Portals tests of tests/ptl/mp and the MPI
# tests mpi_coll, mpi_comm, mpi_dtype and mpi_err of tests/mpi, and
# PtlInit's failure to start a thread. Nothing
# leaves the namespaces; they are removed on exit. Needs root (77 if not).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
B=$PTL_TOP_BUILDDIR
. "$(dirname "$0")/../job_output.sh"
. "$(dirname "$0")/../time_limit.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create network namespaces"; exit 77; }
command -v ip >/dev/null || { echo "SKIP: ip (iproute2) not installed"; exit 77; }
P=ptl$$
A=${P}a
Z=${P}b
cleanup() {
	ip netns del "$A" 2>/dev/null
	ip netns del "$Z" 2>/dev/null
}
trap cleanup EXIT INT TERM
if ! ip netns add "$A" 2>/dev/null || ! ip netns add "$Z" 2>/dev/null; then
	echo "SKIP: ip netns add failed (no CAP_SYS_ADMIN or no netns support here)"
	exit 77
fi
ip link add "${P}x" type veth peer name "${P}y" &&
ip link set "${P}x" netns "$A" && ip link set "${P}y" netns "$Z" &&
ip -n "$A" addr add 10.77.0.1/24 dev "${P}x" && ip -n "$Z" addr add 10.77.0.2/24 dev "${P}y" &&
ip -n "$A" link set "${P}x" up && ip -n "$Z" link set "${P}y" up &&
ip -n "$A" link set lo up && ip -n "$Z" link set lo up || { echo "SKIP: cannot set up the veth pair"; exit 77; }

fail=0
run() {
	what=$1; shift
	out=$(limited "$(job_limit 100)" ip netns exec "$A" "$B/tools/ptlrun" --timeout 100 --hosts "$A,$Z" \
		--agent "ip netns exec {host}" -n 4 "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: $what exited $rc"; job_output "$out"; fail=1
	else
		echo "ok: $what (2 hosts x 2 ranks)"
	fi
}
run "ring" "$B/examples/ring"
echo "$out" | grep -q "initiator .*/3 " || { echo "FAIL: ring output lacks rank 3"; job_output "$out"; fail=1; }
for t in mp_match mp_md mp_bulk mp_atomic mp_threads mp_api; do
	run "$t" "$B/tests/ptl/mp/$t"
done
# MPI tests across the hosts; each prints "PROG: 4 ranks: ok (0 failed
# checks)".
for t in mpi_p2p mpi_coll mpi_comm mpi_dtype mpi_err; do
	out=$(limited "$(job_limit 30)" ip netns exec "$A" "$B/tools/ptlrun" --timeout 30 --hosts "$A,$Z" \
		--agent "ip netns exec {host}" -n 4 "$B/tests/mpi/$t" 2>&1); rc=$?
	if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^$t: 4 ranks: ok (0 failed checks)"; then
		echo "FAIL: $t exited $rc"; job_output "$out"; fail=1
	else
		echo "ok: $t (2 hosts x 2 ranks)"
	fi
done
# A thread PtlInit cannot start (tests/hosts/failthread.c fails one
# pthread_create, 50 ms in): each rank here starts a watcher for tcp, then
# the progress thread. Either failing is PtlInit's PTL_FAIL, said, and the
# job ends at once; the watcher's once hung it (the progress thread, up
# already, waited for the library lock its joiner held).
for at in 1:"a watcher thread for the tcp NAL" 2:"the progress thread"; do
	out=$(limited "$(job_limit 30)" ip netns exec "$A" "$B/tools/ptlrun" --timeout 30 --hosts "$A,$Z" \
		--agent "ip netns exec {host}" -n 4 -x LD_PRELOAD="$B/tests/hosts/.libs/libfailthread.so" \
		-x FAILTHREAD_AT="${at%%:*}" "$B/examples/ring" 2>&1); rc=$?
	if [ $rc -eq 0 ] || echo "$out" | grep -q "timeout after" ||
		! echo "$out" | grep -q "ptl: cannot start ${at#*:}" || ! echo "$out" | grep -q "PtlInit: PTL_FAIL"; then
		echo "FAIL: PtlInit without ${at#*:} (exit $rc)"; job_output "$out"; fail=1
	else
		echo "ok: PtlInit without ${at#*:} fails and says so"
	fi
done
# Ranks without the job key are refused by ptlrun: both hosts' ranks run
# the agent's command, so whichever connects first is refused.
out=$(limited "$(job_limit 30)" ip netns exec "$A" "$B/tools/ptlrun" --timeout 30 --hosts "$A,$Z" \
	--agent "ip netns exec {host}" -n 2 \
	env PTL_RT_JOB_KEY=00000000000000000000000000000000 "$B/examples/ring" 2>&1)
echo "$out" | grep -q "refused a connection from 10\.77\.0\.[12]: wrong job key" ||
	{ echo "FAIL: a rank without the job key was not refused"; job_output "$out"; fail=1; }
exit $fail
