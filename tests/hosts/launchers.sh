#!/bin/sh
# launchers.sh hydra|hydra-port|mpirun: the ring example, Portals tests
# (tests/ptl/mp) and a few MPI tests (tests/mpi) under another launcher, bootstrapped by lib/rt's PMI-1
# backend (mpiexec.hydra: PMI_FD, or PMI_PORT with -pmi-port) or its PMIx
# backend (Open MPI's mpirun). Skipped (77) when the launcher or, for
# mpirun, PMIx support is missing.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
B=$PTL_TOP_BUILDDIR
. "$(dirname "$0")/../job_output.sh"
# a launcher that hangs is stopped and named (limited)
. "$(dirname "$0")/../time_limit.sh"
mode=$1
case $mode in
hydra|hydra-port)
	command -v mpiexec.hydra >/dev/null || { echo "SKIP: mpiexec.hydra not installed (Debian: mpich)"; exit 77; }
	run() { n=$1; shift; limited "${TMO:-120}" mpiexec.hydra $([ "$mode" = hydra-port ] && echo -pmi-port) -n "$n" "$@"; } ;;
mpirun)
	command -v mpirun.openmpi >/dev/null || { echo "SKIP: mpirun.openmpi not installed (Debian: openmpi-bin)"; exit 77; }
	ldd "$B/lib/.libs/libptl.so" 2>/dev/null | grep -q libpmix || { echo "SKIP: libptl built without PMIx (install libpmix-dev, re-run configure)"; exit 77; }
	run() { n=$1; shift; limited "${TMO:-120}" mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" "$@"; } ;;
*) echo "usage: $0 hydra|hydra-port|mpirun" >&2; exit 2 ;;
esac
fail=0
check() {
	what=$1; shift
	out=$(run "$@" 2>&1); rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL ($mode): $what exited $rc"; job_output "$out"; fail=1
	else
		echo "ok ($mode): $what"
	fi
}
check "ring, 4 ranks" 4 "$B/examples/ring"
for t in mp_match mp_bulk mp_atomic; do
	check "$t, 2 ranks" 2 "$B/tests/ptl/mp/$t"
done
# MPI tests: each prints "PROG: N ranks: ok (0 failed checks)", which also
# says the job has N ranks.
# A timed-out mpirun may leave its ranks behind (reparented to init): those
# of this build tree's program are ended, by pid.
mpicheck() {
	n=$1 prog=$2
	out=$(TMO=30 run "$n" "$B/tests/mpi/$prog" 2>&1); rc=$?
	if [ $rc -ne 0 ] || ! echo "$out" | grep -q "^$prog: $n ranks: ok (0 failed checks)"; then
		echo "FAIL ($mode): $prog, $n ranks exited $rc"; job_output "$out"; fail=1
		for p in $(ps -eo pid=,ppid=,args= | awk -v p="$B/tests/mpi/.libs/$prog" '$2 == 1 && $3 == p { print $1 }'); do
			echo "ending leftover rank $p"; kill -KILL "$p" 2>/dev/null
		done
	else
		echo "ok ($mode): $prog, $n ranks"
	fi
}
mpicheck 3 mpi_p2p
mpicheck 4 mpi_coll
mpicheck 3 mpi_comm
mpicheck 2 mpi_dtype
mpicheck 2 mpi_err
# The bootstrap really joined the launcher's job (not 4 jobs of one).
out=$(run 4 "$B/examples/ring" 2>&1)
echo "$out" | grep -q "initiator .*/3 " || { echo "FAIL ($mode): ring did not see rank 3"; job_output "$out"; fail=1; }
exit $fail
