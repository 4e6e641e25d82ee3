#!/bin/bash
# tests/vm/vm-tests.sh - the verbs tests, run inside the Soft-RoCE VM in one
# boot (tests/vm/verbs.sh starts it through rxe-vm.sh).
#
#   vm-tests.sh OUTDIR [TEST...]     default: every test below
#
# mp:NAME runs tests/ptl/mp/NAME.sh over PTL_NAL=verbs, each under its own
# time limit; mp_over_verbs runs them all as one test.
#
# Each test's output goes to OUTDIR/<test>.log; one line per test on stdout:
# "PASS|FAIL|SKIP <test> (<seconds>s)". Exit status: 1 if any test failed,
# 77 if all skipped, else 0. Every test has a time limit (PTL_VM_TEST_TIMEOUT,
# seconds, default 90).
set -u
out=$1
shift
B=${PTL_TOP_BUILDDIR:?set PTL_TOP_BUILDDIR to the build tree}
S=${PTL_TOP_SRCDIR:-$B}
limit=${PTL_VM_TEST_TIMEOUT:-90}
mkdir -p "$out"

# Runs a server in the background and a client against it on rxe0.
pair() {
	local srv=$1 cli=$2
	$srv & local s=$!
	# The server may take a while to listen under emulation: retry a
	# client that could not connect while the server is still there.
	local c=1 i
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
		sleep 1
		$cli && { c=0; break; }
		c=$?
		kill -0 $s 2>/dev/null || break
	done
	wait $s
	local r=$?
	echo "client rc $c, server rc $r"
	[ $c = 0 ] && [ $r = 0 ]
}

t_devinfo() { ibv_devinfo -d rxe0 && ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE; }
t_rc_pingpong() { pair "ibv_rc_pingpong -d rxe0 -g 1 -n 200" "ibv_rc_pingpong -d rxe0 -g 1 -n 200 localhost"; }
t_verbs_unit() {
	[ -x "$B/tests/vm/test_verbs" ] || { echo "tests/vm/test_verbs not built"; return 77; }
	"$B/tests/vm/test_verbs"
}
t_verbs_credits() {
	# the credits race, many times in one boot
	[ -x "$B/tests/vm/test_verbs" ] || { echo "tests/vm/test_verbs not built"; return 77; }
	"$B/tests/vm/test_verbs" -n 20 credits
}
t_ptltool_info() {
	local o
	o=$("$B/tools/ptltool" info) || return 1
	echo "$o"
	echo "$o" | grep -q '^nal verbs: built, usable: rxe0 port 1' &&
		echo "$o" | grep -q 'rxe0: node GUID .*<- ptl uses this device' &&
		echo "$o" | grep -q 'port 1:  ACTIVE, Ethernet.*<- ptl uses this port' &&
		echo "$o" | grep -q 'RoCE v2  *192\.0\.2\.1  *eth0 *<- ptl uses this GID' || return 1
	o=$(PTL_VERBS_DEVICE=nosuch0 "$B/tools/ptltool" info) || return 1
	echo "$o" | grep -q 'NOT usable: PTL_VERBS_DEVICE=nosuch0'
}
t_mp_over_verbs() {
	local rc=0 found=0 t
	for t in "$S"/tests/ptl/mp/*.sh; do
		case $(basename "$t") in run.sh) continue ;; esac
		# a test whose program is not built (yet) is not ours to fail
		prog=$(sed -n 's/.*run\.sh" *[0-9][0-9]* *\([A-Za-z0-9_]*\).*/\1/p' "$t" | head -n1)
		if [ -n "$prog" ] && [ ! -x "$B/tests/ptl/mp/$prog" ]; then
			echo "== $t: skipped, $prog is not built"
			continue
		fi
		found=1
		echo "== $t (PTL_NAL=verbs)"
		PTL_NAL=verbs sh "$t" || { echo "FAILED: $t"; rc=1; }
	done
	[ $found = 1 ] || return 77
	return $rc
}
t_mp() {
	local t="$S/tests/ptl/mp/$1.sh"
	[ -f "$t" ] || { echo "no $t"; return 77; }
	prog=$(sed -n 's/.*run\.sh" *[0-9][0-9]* *\([A-Za-z0-9_]*\).*/\1/p' "$t" | head -n1)
	if [ -n "$prog" ] && [ ! -x "$B/tests/ptl/mp/$prog" ]; then
		echo "$prog is not built"
		return 77
	fi
	PTL_NAL=verbs sh "$t"
}
t_ring_over_verbs() {
	[ -x "$B/examples/ring" ] || return 77
	PTL_NAL=verbs "$B/tools/ptlrun" -n 3 --timeout 60 "$B/examples/ring"
}

mps=$(for f in "$S"/tests/ptl/mp/*.sh; do n=$(basename "$f" .sh); [ "$n" = run ] || echo "mp:$n"; done)
all="devinfo rc_pingpong verbs_unit verbs_credits ptltool_info $mps ring_over_verbs"
[ $# -gt 0 ] && all="$*"
failed=0 ran=0
for t in $all; do
	a=$(date +%s.%N)
	case $t in
	mp:*) fn="t_mp ${t#mp:}" log=$out/mp_${t#mp:}.log ;;
	*) fn=t_$t log=$out/$t.log ;;
	esac
	timeout -k 5 "$limit" bash -c "$(declare -f pair ${fn%% *}); B='$B' S='$S'; $fn" >"$log" 2>&1
	rc=$?
	d=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $a }")
	case $rc in
	0) echo "PASS $t (${d}s)"; ran=1 ;;
	77) echo "SKIP $t (${d}s)" ;;
	124) echo "FAIL $t (timed out after ${limit}s; log $log)"; failed=1; ran=1 ;;
	*) echo "FAIL $t (rc $rc, ${d}s; log $log)"; failed=1; ran=1 ;;
	esac
done
[ $failed = 1 ] && exit 1
[ $ran = 1 ] || exit 77
exit 0
