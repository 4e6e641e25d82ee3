#!/bin/bash
# tests/vm/vm-tests.sh - the verbs tests, run inside the Soft-RoCE VM in one
# boot (tests/vm/verbs.sh starts it through rxe-vm.sh).
#
#   vm-tests.sh OUTDIR [TEST...]     default: every test below
#
# mp:NAME runs tests/ptl/mp/NAME.sh over PTL_NAL=verbs, each under its own
# time limit; mp_over_verbs runs them all as one test.
#
# The x_* tests (not in the default list) run across two VMs
# (tests/vm/rxe-vm2.sh): this one, PTL_VM_ME, runs ptlrun --hosts and
# tests/vm/vm-agent.sh starts the ranks in the other, PTL_VM_PEER.
# x:NAME runs tests/ptl/mp/NAME on 2 VMs x 2 ranks.
# mpi:NAME runs tests/mpi/NAME.sh over PTL_NAL=verbs.
#
# Each test's output goes to OUTDIR/<test>.log; one line per test on stdout:
# "PASS|FAIL|SKIP <test> (<seconds>s)", and one in OUTDIR/results: "<exit
# status> <test>.log" (vm-common.sh's vm_show_failed shows the logs of the
# tests that failed or never finished). Exit status: 1 if any test failed,
# 77 if all skipped, else 0. Every test has a time limit (PTL_VM_TEST_TIMEOUT,
# seconds, default 90; the MPI ones PTL_VM_MPI_TIMEOUT, default 300): its
# ptlrun jobs end by then, with ptlrun's report on a hung one; the test
# itself is stopped 60 s later (report_margin below).
set -u
out=$1
shift
B=${PTL_TOP_BUILDDIR:?set PTL_TOP_BUILDDIR to the build tree}
S=${PTL_TOP_SRCDIR:-$B}
. "$S/tests/time_limit.sh"
limit=${PTL_VM_TEST_TIMEOUT:-90}
# MPI programs at 2-3 ranks on the VM's 2 vCPUs: 10-60 s on an idle host, five
# times that on a loaded one
mpi_limit=${PTL_VM_MPI_TIMEOUT:-300}
# Why a test's jobs and the test itself have two limits: timeout(1) stops
# the test's whole process group, ranks included, and ranks stopped that
# way say nothing of what they waited for; ptlrun's own --timeout says
# which ranks still ran and where each was (threads, system calls,
# stacks) before it stops them, so it must come first. Each ptlrun
# --timeout in a test is capped at the test's limit (PTL_TEST_DEADLINE,
# read by tests/time_limit.sh's job_timeout), however many jobs the test
# runs one after another and whatever each asks for; this margin after it
# is for the report (a stack tool gets up to 20 s a rank; slow under
# emulation) and for the test to print the output it captured. The outer
# stop is not narrowed to the test's shell: a job whose output the test
# captures ($(...): tests/mpi's run, t_x_ring) would lose its report with
# the shell, and what hangs outside ptlrun (test_verbs, ibv_rc_pingpong)
# has nothing else to end it.
report_margin=60
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
t_verbs_reopen_limit() {
	# a peer whose connection keeps breaking is failed on both sides, and
	# each side says why: every re-open, then the count that ended it
	[ -x "$B/tests/vm/test_verbs" ] || { echo "tests/vm/test_verbs not built"; return 77; }
	local o rc
	o=$("$B/tests/vm/test_verbs" reopen_limit 2>&1)
	rc=$?
	echo "$o"
	[ $rc = 0 ] || return $rc
	echo "$o" | grep -q 'connection to rank 0 broke (remote access error): what was in flight on it fails, and it re-opens' ||
		{ echo "FAILED: no message for a re-open"; return 1; }
	echo "$o" | grep -q 'rank 1: rank 0 failed: its connection broke 3 times within 60 s, the last time by remote access error' ||
		{ echo "FAILED: the side that gave up does not say how often it broke"; return 1; }
	echo "$o" | grep -q 'rank 0: rank 1 failed: it gave up on our connection, which broke too often' ||
		{ echo "FAILED: the other side does not say why it failed the peer"; return 1; }
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
		case $(basename "$t") in run.sh | said.sh | valgrind.sh) continue ;; esac # helpers
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
# tests/mpi/NAME.sh over PTL_NAL=verbs: ptl's MPI between ranks that reach
# each other only through rxe0 (eager sends, rendezvous RDMA reads).
t_mpi() {
	local t="$S/tests/mpi/$1.sh"
	[ -f "$t" ] || { echo "no $t"; return 77; }
	[ -x "$B/tests/mpi/$1" ] || { echo "tests/mpi/$1 is not built"; return 77; }
	# A waiting rank probes a silent peer after the keepalive period, and
	# the probe of a dead one fails after the transport's retries (~2 s):
	# 500 ms, not the default 2 s, keeps a death within mpi_deadpeer's
	# limits under emulation.
	PTL_NAL=verbs PTL_VERBS_KEEPALIVE_MS=${PTL_VERBS_KEEPALIVE_MS:-500} PTL_TOP_BUILDDIR=$B sh "$t"
}
# tests/mpi/mpi_p2p.sh and mpi_coll.sh run their programs in many
# configurations, up to 8 ranks: minutes under emulation, and many more on
# a loaded host. Over verbs: point-to-point at 2 ranks with the default
# eager limit and with 1 KiB (more rendezvous: RDMA reads), every
# collective at 2 and 3 ranks.
t_mpi_p2p() {
	[ -x "$B/tests/mpi/mpi_p2p" ] || { echo "tests/mpi/mpi_p2p is not built"; return 77; }
	PTL_NAL=verbs "$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 200)" "$B/tests/mpi/mpi_p2p" &&
		PTL_NAL=verbs PTL_MPI_EAGER_LIMIT=1024 "$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 200)" "$B/tests/mpi/mpi_p2p"
}
t_mpi_coll() {
	[ -x "$B/tests/mpi/mpi_coll" ] || { echo "tests/mpi/mpi_coll is not built"; return 77; }
	PTL_NAL=verbs "$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 200)" "$B/tests/mpi/mpi_coll" &&
		PTL_NAL=verbs "$B/tools/ptlrun" -n 3 --timeout "$(job_timeout 200)" "$B/tests/mpi/mpi_coll"
}
# A collective that failed while the peer had yet to take its parts
# (tests/mpi/mpi_err.sh's latesend): the buffer exposed for the peer's
# RDMA read re-pointed to the library's copy before the caller unmaps it,
# an overflowed eager part pulled from a copy.
t_mpi_latesend() {
	[ -x "$B/tests/mpi/mpi_err" ] || { echo "tests/mpi/mpi_err is not built"; return 77; }
	PTL_NAL=verbs PTL_MPI_UNEXPECTED_MEM=1 PTL_MPI_NOACK_OFF=1 PTL_MPI_CREDITS=4000 PTL_COLL_TIMEOUT=0.5 \
		"$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 100)" "$B/tests/mpi/mpi_err" latesend
}
# Buffers malloc'ed and freed (and mapped by hand) around every transfer:
# the registration cache must move the memory there now, and must not free
# a registration a transfer in flight uses. Rendezvous sizes by default,
# eager up to 1 MiB, and with the cache off.
t_mpi_regfree() {
	[ -x "$B/tests/vm/mpi_regfree" ] || { echo "tests/vm/mpi_regfree is not built"; return 77; }
	local e
	for e in PTL_VERBS_REG_CACHE=1 PTL_MPI_EAGER_LIMIT=1048576 PTL_VERBS_REG_CACHE=0; do
		echo "== $e"
		env PTL_NAL=verbs "$e" "$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 200)" "$B/tests/vm/mpi_regfree" 4 || return 1
	done
}
# Without CAP_IPC_LOCK (every normal user) pinned memory counts against
# RLIMIT_MEMLOCK, often 8 MiB: registrations that pile up make ibv_reg_mr
# fail after a few MiB ("cannot register ... (memlock limit?)"). With
# CAP_SYS_ADMIN also dropped page frames read as 0, as they do for a normal
# user: nothing is reused, and a registration must go when its transfer
# ends (at most a few live: the debug line at close says how many). With
# it, frames are checked and unused registrations cached: they must make
# room when the limit is hit.
t_mpi_regfree_memlock() {
	[ -x "$B/tests/vm/mpi_regfree" ] || { echo "tests/vm/mpi_regfree is not built"; return 77; }
	command -v setpriv >/dev/null && command -v prlimit >/dev/null || { echo "no setpriv or prlimit"; return 77; }
	local drop o rc most
	for drop in -ipc_lock -ipc_lock,-sys_admin; do
		echo "== capabilities $drop, memlock 8 MiB"
		o=$(PTL_NAL=verbs PTL_VERBS_DEBUG=1 setpriv --bounding-set=$drop --inh-caps=$drop \
			prlimit --memlock=8388608 "$B/tools/ptlrun" -n 2 --timeout "$(job_timeout 200)" "$B/tests/vm/mpi_regfree" 4 2>&1)
		rc=$?
		echo "$o"
		[ $rc = 0 ] || return 1
		o=$(echo "$o" | grep 'ptl: verbs: rank .: registrations:')
		[ "$(echo "$o" | wc -l)" = 2 ] || { echo "FAILED: no registration counts from both ranks"; return 1; }
		case $drop in *sys_admin*)
			most=$(echo "$o" | sed -n 's/.*, \([0-9]*\) at most,.*/\1/p' | sort -n | tail -n1)
			[ "$most" -le 8 ] || { echo "FAILED: $most registrations at once with frames hidden"; return 1; } ;;
		esac
	done
}
t_ring_over_verbs() {
	[ -x "$B/examples/ring" ] || return 77
	PTL_NAL=verbs "$B/tools/ptlrun" -n 3 --timeout "$(job_timeout 60)" "$B/examples/ring"
}

# ---- across two VMs
agent() { "$S/tests/vm/vm-agent.sh" "$@"; }
# x_run NP PROGRAM [ARG...]: ptlrun over both VMs, verbs between them
# (and within each: PTL_NAL=verbs leaves only verbs and self).
x_run() {
	local np=$1
	shift
	PTL_NAL=verbs "$B/tools/ptlrun" --timeout "$(job_timeout "${PTL_VM_X_JOB_TIMEOUT:-80}")" \
		--hosts "$PTL_VM_ME,$PTL_VM_PEER" --agent "$S/tests/vm/vm-agent.sh {host}" \
		--kvs-addr "$PTL_VM_ME" -x PTL_NAL -n "$np" "$@"
}
# rxe_pkts HOST: "SENT RECEIVED" packets of rxe0 port 1 on HOST.
rxe_pkts() {
	local c=/sys/class/infiniband/rxe0/ports/1/hw_counters
	agent "$1" cat "$c/sent_pkts" "$c/rcvd_pkts" | tr '\n' ' '
}
t_x_info() {
	local h o
	for h in "$PTL_VM_ME" "$PTL_VM_PEER"; do
		o=$(agent "$h" "$B/tools/ptltool" info) || return 1
		echo "== $h"
		echo "$o"
		echo "$o" | grep -q '^nal verbs: built, usable: rxe0 port 1' &&
			echo "$o" | grep -q "RoCE v2  *$h  *eth0 *<- ptl uses this GID" ||
			{ echo "FAILED: $h's ptltool info does not show rxe0 usable with $h"; return 1; }
	done
}
# One rank per VM: every packet rxe0 counts crossed the link, so both
# VMs' counters must have moved both ways.
t_x_ring() {
	local a0 b0 a1 b1 o
	a0=($(rxe_pkts "$PTL_VM_ME")) && b0=($(rxe_pkts "$PTL_VM_PEER")) || return 1
	o=$(x_run 2 "$B/examples/ring" 2>&1)
	local rc=$?
	echo "$o"
	a1=($(rxe_pkts "$PTL_VM_ME")) && b1=($(rxe_pkts "$PTL_VM_PEER")) || return 1
	echo "rxe0 packets sent/received: $PTL_VM_ME $((a1[0] - a0[0]))/$((a1[1] - a0[1])), $PTL_VM_PEER $((b1[0] - b0[0]))/$((b1[1] - b0[1]))"
	[ $rc = 0 ] || return 1
	echo "$o" | grep -q "initiator .*/1 " || { echo "FAILED: no line from rank 1"; return 1; }
	[ $((a1[0] - a0[0])) -gt 0 ] && [ $((a1[1] - a0[1])) -gt 0 ] &&
		[ $((b1[0] - b0[0])) -gt 0 ] && [ $((b1[1] - b0[1])) -gt 0 ] ||
		{ echo "FAILED: rxe0 did not carry the ring both ways"; return 1; }
}
t_x_ring4() {
	local o
	o=$(x_run 4 "$B/examples/ring" 2>&1) || { echo "$o"; return 1; }
	echo "$o"
	echo "$o" | grep -q "initiator .*/3 " || { echo "FAILED: no line from rank 3"; return 1; }
}
# A rank failing in VM B fails the job with its status; a rank failing
# here stops the one in VM B (ptlrun ends its agent, the server kills it).
t_x_fail() {
	local o rc
	o=$(x_run 2 sh -c '[ "$PTL_RT_RANK" = 1 ] && exit 3; exec sleep 40' 2>&1)
	rc=$?
	echo "$o"
	[ $rc = 3 ] && echo "$o" | grep -q "rank 1 .* exited with status 3" ||
		{ echo "FAILED: ptlrun exited $rc, not 3 for rank 1 in $PTL_VM_PEER"; return 1; }
	o=$(x_run 2 sh -c '[ "$PTL_RT_RANK" = 0 ] && exit 4; exec sleep 41' 2>&1)
	rc=$?
	echo "$o"
	[ $rc = 4 ] || { echo "FAILED: ptlrun exited $rc, not 4 for rank 0"; return 1; }
	# The agent's server stops the rank when ptlrun drops the agent: give
	# a loaded host (two TCG guests on two cores) up to 20 s for it.
	local i
	for i in $(seq 20); do
		o=$(agent "$PTL_VM_PEER" ps -eo args)
		echo "$o" | grep -q '^sleep 41' || return 0
		sleep 1
	done
	echo "FAILED: rank 1 still runs in $PTL_VM_PEER 20 s after ptlrun ended"
	return 1
}
# ptl's MPI across the two VMs: point-to-point (eager and rendezvous
# sizes) and every collective, 2 VMs x 2 ranks.
t_x_mpi() {
	[ -x "$B/tests/mpi/mpi_p2p" ] && [ -x "$B/tests/mpi/mpi_coll" ] || { echo "tests/mpi is not built"; return 77; }
	x_run 4 "$B/tests/mpi/mpi_p2p" && x_run 4 "$B/tests/mpi/mpi_coll"
}
t_x() {
	[ -x "$B/tests/ptl/mp/$1" ] || { echo "tests/ptl/mp/$1 is not built"; return 77; }
	x_run 4 "$B/tests/ptl/mp/$1"
}

mps=$(for f in "$S"/tests/ptl/mp/*.sh; do n=$(basename "$f" .sh); case $n in run | said | valgrind) ;; *) echo "mp:$n" ;; esac; done)
all="devinfo rc_pingpong verbs_unit verbs_credits verbs_reopen_limit ptltool_info $mps ring_over_verbs
	mpi_p2p mpi:mpi_deadpeer mpi_coll mpi_latesend mpi_regfree mpi_regfree_memlock"
[ $# -gt 0 ] && all="$*"
failed=0 ran=0
for t in $all; do
	a=$(date +%s.%N)
	case $t in
	mp:*) fn="t_mp ${t#mp:}" log=$out/mp_${t#mp:}.log ;;
	x:*) fn="t_x ${t#x:}" log=$out/x_${t#x:}.log ;;
	mpi:*) fn="t_mpi ${t#mpi:}" log=$out/mpi_${t#mpi:}.log ;;
	*) fn=t_$t log=$out/$t.log ;;
	esac
	tl=$limit
	case $t in mpi*) tl=$mpi_limit ;; esac
	stop=$((tl + report_margin))
	PTL_TEST_DEADLINE=$(($(date +%s) + tl)) timeout -k 5 "$stop" bash -c \
		"$(declare -f job_timeout pair agent x_run rxe_pkts ${fn%% *}); B='$B' S='$S'; $fn" >"$log" 2>&1
	rc=$?
	d=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $a }")
	echo "$rc $(basename "$log")" >>"$out/results"
	# 124 is also ptlrun's status at its --timeout: the test's own limit
	# is the one that took all of its time
	[ $rc = 124 ] && [ "${d%.*}" -lt "$stop" ] && rc=124-job
	case $rc in
	0) echo "PASS $t (${d}s)"; ran=1 ;;
	77) echo "SKIP $t (${d}s)" ;;
	124) echo "FAIL $t (timed out after ${stop}s; log $log)"; failed=1; ran=1 ;;
	124-job) echo "FAIL $t (rc 124, ${d}s: a job's --timeout; ptlrun's report in $log)"; failed=1; ran=1 ;;
	*) echo "FAIL $t (rc $rc, ${d}s; log $log)"; failed=1; ran=1 ;;
	esac
done
[ $failed = 1 ] && exit 1
[ $ran = 1 ] || exit 77
exit 0
