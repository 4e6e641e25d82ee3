#!/bin/bash
# tests/vm/verbs2.sh - make check: the verbs NAL across two hosts, two
# Soft-RoCE VMs joined by a QEMU socket (tests/vm/rxe-vm2.sh). VM A runs
# ptlrun --hosts over both, with tests/vm/vm-agent.sh as the agent that
# places ranks in VM B. The tests are vm-tests.sh's x_* (ptltool info in
# each VM, the ring with rxe0's counters checked on both sides, a failing
# rank on either side, the Portals mp tests on 2 VMs x 2 ranks, ptl's MPI
# point-to-point and collectives on 2 VMs x 2 ranks), or those
# named:
#
#   PTL_TOP_BUILDDIR=$PWD tests/vm/verbs2.sh [x_ring x:mp_md ...]
#
# Skipped (77) where the VMs cannot run. Logs: tests/vm/out2/<test>.log,
# and vmB.log for VM B.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
V=$(cd "$PTL_TOP_SRCDIR/tests/vm" && pwd -P)
out=$PTL_TOP_BUILDDIR/tests/vm/out2
mkdir -p "$out"
rm -f "$out"/*.log "$out/results"
out=$(cd "$out" && pwd -P)
. "$V/vm-common.sh"
vm_share_trees "$out"
# Each test has its own limit (PTL_VM_TEST_TIMEOUT); this bounds a boot.
PTL_VM_TIMEOUT=${PTL_VM_TIMEOUT:-900}
PTL_VM_B_LOG=$out/vmB.log
export PTL_VM_TIMEOUT PTL_VM_B_LOG

tests="x_info x_ring x_ring4 x_fail x:mp_match x:mp_md x:mp_bulk x:mp_atomic x:mp_threads x:mp_api x_mpi"
[ $# -gt 0 ] && tests="$*"

"$V/rxe-vm2.sh" "$V/vm-tests.sh" "$out" $tests
rc=$?
vm_show_failed $rc "$out"
exit $rc
