#!/bin/sh
# tests/vm/verbs.sh - make check: boots the Soft-RoCE VM once and runs every
# verbs test in it (tests/vm/vm-tests.sh); skipped (77) where the VM cannot
# run. Logs: tests/vm/out/<test>.log in the build tree.
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
out=$PTL_TOP_BUILDDIR/tests/vm/out
mkdir -p "$out"
rm -f "$out"/*.log "$out/results"
. "$PTL_TOP_SRCDIR/tests/vm/vm-common.sh"
vm_share_trees "$out"
# Each test has its own limit (PTL_VM_TEST_TIMEOUT); this bounds the boot.
PTL_VM_TIMEOUT=${PTL_VM_TIMEOUT:-1200}
export PTL_VM_TIMEOUT
"$PTL_TOP_SRCDIR/tests/vm/rxe-vm.sh" "$PTL_TOP_SRCDIR/tests/vm/vm-tests.sh" "$out" "$@"
rc=$?
vm_show_failed $rc "$out"
exit $rc
