#!/bin/sh
# tests/vm/verbs.sh - make check: boots the Soft-RoCE VM once and runs every
# verbs test in it (tests/vm/vm-tests.sh); skipped (77) where the VM cannot
# run. Logs: tests/vm/out/<test>.log in the build tree.
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
: "${PTL_TOP_SRCDIR:=$PTL_TOP_BUILDDIR}"
out=$PTL_TOP_BUILDDIR/tests/vm/out
mkdir -p "$out"
rm -f "$out"/*.log
# The VM sees the host's / read-only but has its own /tmp: share the source
# and build trees (a CI clone may well live under /tmp), then out after them.
for d in "$PTL_TOP_SRCDIR" "$PTL_TOP_BUILDDIR"; do
	d=$(cd "$d" && pwd -P)
	case ":${PTL_VM_RW:-}:" in *":$d:"*) ;; *) PTL_VM_RW=${PTL_VM_RW:+$PTL_VM_RW:}$d ;; esac
done
PTL_VM_RW=$PTL_VM_RW:$out
export PTL_VM_RW
# Each test has its own limit (PTL_VM_TEST_TIMEOUT); this bounds the boot.
PTL_VM_TIMEOUT=${PTL_VM_TIMEOUT:-1200}
export PTL_VM_TIMEOUT
"$PTL_TOP_SRCDIR/tests/vm/rxe-vm.sh" "$PTL_TOP_SRCDIR/tests/vm/vm-tests.sh" "$out" "$@"
rc=$?
# Show the logs of what failed, so CI output says why.
for f in "$out"/*.log; do
	[ -f "$f" ] || continue
	t=$(basename "$f" .log)
	[ "$rc" != 0 ] && [ "$rc" != 77 ] && { echo "---- $t"; tail -n 40 "$f"; }
done
exit $rc
