# tests/vm/vm-common.sh - sourced by verbs.sh and verbs2.sh (POSIX sh).

# The VMs see the host's / read-only but have their own /tmp: share the
# source and build trees (a CI clone may well live under /tmp), then the
# log folder $1, read-write, through PTL_VM_RW.
vm_share_trees() {
	for d in "$PTL_TOP_SRCDIR" "$PTL_TOP_BUILDDIR"; do
		d=$(cd "$d" && pwd -P)
		case ":${PTL_VM_RW:-}:" in *":$d:"*) ;; *) PTL_VM_RW=${PTL_VM_RW:+$PTL_VM_RW:}$d ;; esac
	done
	PTL_VM_RW=$PTL_VM_RW:$1
	export PTL_VM_RW
}

. "$(dirname "$0")/../job_output.sh"

# After a run that failed with status $1 (not a skip), the logs in folder
# $2 of every test that did not pass or skip (vm-tests.sh's results: it
# failed, or the VM ended before it did) and of no test (VM B's), so CI
# output says why.
vm_show_failed() {
	[ "$1" != 0 ] && [ "$1" != 77 ] || return 0
	for f in "$2"/*.log; do
		[ -f "$f" ] || continue
		awk -v f="$(basename "$f")" '$2 == f && ($1 == 0 || $1 == 77) { ok = 1 } END { exit !ok }' \
			"$2/results" 2>/dev/null && continue
		echo "---- $(basename "$f" .log)"
		job_output "$(cat "$f")"
	done
	return 0
}
