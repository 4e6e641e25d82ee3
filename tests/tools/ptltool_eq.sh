#!/bin/sh
# ptltool ps / eq on a live process blocked in PtlEQWait, and its errors.
set -u
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/own_shm.sh"
B=${PTL_TOP_BUILDDIR:-.}
T=$B/tools/ptltool
fail() { echo "FAIL: $*"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null; exit 1; }
. "$(dirname "$0")/../time_limit.sh"
# each answers in moments: one that hangs is stopped and named
ptltool() { limited "$PROGRAM_LIMIT" "$T" "$@"; }
eq_holder() { limited "$PROGRAM_LIMIT" "$B/tests/tools/eq_holder" "$@"; }

out=$(mktemp); fork_out=$(mktemp); trap 'rm -f "$out" "$fork_out"' EXIT
# 10 self-puts into an EQ of 8: 2 overwritten (each put logs one PUT_END).
"$B/tests/tools/eq_holder" 10 > "$out" &
pid=$!
for i in $(seq 100); do grep -q ready "$out" && break; sleep 0.1; done
grep -q "ready $pid" "$out" || fail "eq_holder did not start"
# Into PtlEQWait's sleep (it polls briefly first; slow under load).
for i in $(seq 100); do ptltool ps | grep -q "^ *$pid .* waiting " && break; sleep 0.1; done

ps_out=$(ptltool ps) || fail "ptltool ps failed"
echo "$ps_out" | grep -E "^ *$pid .* 0 +1 up +3 waiting +self +eq_holder" >/dev/null ||
	fail "ptltool ps does not list pid $pid as waiting: $ps_out"
# A view whose pid now names another process (its own died and the pid
# was given again: here a copy of the live view under the pid of a
# process that started at another time) is left over, not live.
sleep 60 & other=$!
cp "/dev/shm/ptl.view.$pid" "/dev/shm/ptl.view.$other" || fail "cp of a view"
ps_other=$(ptltool ps)
rm -f "/dev/shm/ptl.view.$other"; kill "$other"; wait "$other" 2>/dev/null
echo "$ps_other" | grep -q "^ *$other " &&
	fail "ptltool ps lists pid $other, whose view records another process's start time: $ps_other"
echo "$ps_other" | grep -q "^ *$pid " || fail "ptltool ps lost pid $pid beside a stale view: $ps_other"

eq_out=$(ptltool eq "$pid") || fail "ptltool eq $pid failed"
echo "$eq_out"
echo "$eq_out" | grep -q "process $pid (eq_holder): rank 0 of 1, job [0-9a-f]\{16\}, NALs self, blocked in PtlEQWait/PtlEQPoll" || fail "header"
echo "$eq_out" | grep -q "status registers: drops 0, permission violations 0" || fail "status registers"
# eq_holder attached one match entry and keeps it
echo "$eq_out" | grep -q "status registers: .*, match entries in use 1$" || fail "match entries in use"
echo "$eq_out" | grep -q "size 8, next sequence 10, events pending 8, dropped 2" || fail "target EQ summary"
echo "$eq_out" | grep -q "size 64, next sequence 10, events pending 10, dropped 0" || fail "send EQ summary"
echo "$eq_out" | grep -q "size 4, next sequence 0, events pending 0, dropped 0" || fail "idle EQ summary"
[ "$(echo "$eq_out" | grep -c 'PTL_EVENT_PUT_END .* pt 7 bits 0x0000000000abcdef rlength 16 mlength 16')" = 8 ] ||
	fail "expected the 8 surviving PUT_END events decoded"
echo "$eq_out" | grep -q "seq 2 .*PTL_EVENT_PUT_END" || fail "oldest surviving event should be seq 2"
echo "$eq_out" | grep -q "seq 1 .*PTL_EVENT_PUT_END" && fail "overwritten event seq 1 shown"

job=$(echo "$eq_out" | sed -n 's/.*job \([0-9a-f]\{16\}\).*/\1/p' | head -1)
ptltool eq --job "$job" --rank 0 | grep -q "process $pid " || fail "eq --job --rank did not find the process"

# The process is still blocked and unaffected.
kill -0 "$pid" || fail "process died while ptltool looked"
# Another process's sweep of dead processes' views leaves a live one's.
eq_holder fini | grep -q "^fini " || fail "eq_holder fini (live view)"
[ -e "/dev/shm/ptl.view.$pid" ] && [ -e "/dev/shm/ptl.view.$pid.eq2" ] ||
	fail "a live process's view was removed"
# A child forked without exec that frees its copy of an EQ, ends Portals
# and exits leaves its parent's view and EQ alone.
eq_holder fork >"$fork_out" 2>&1
grep -q "^view kept" "$fork_out" || fail "a forked child's exit removed its parent's view"
grep -q "^eq kept" "$fork_out" || fail "a forked child's PtlEQFree removed its parent's EQ object"
grep -q "^eq freed gone" "$fork_out" || fail "the parent's PtlEQFree left its EQ object"
# Killed by a signal, it cannot remove its views itself (in a shared
# /dev/shm another test's ptl process, started meanwhile under make -j,
# may sweep them first).
kill "$pid"; wait "$pid" 2>/dev/null
if [ "$own_shm" = 1 ]; then
	[ -e "/dev/shm/ptl.view.$pid" ] && [ -e "/dev/shm/ptl.view.$pid.eq2" ] ||
		fail "the killed process's view or EQ object is gone before any sweep"
	# What it left is shown as ended, not as a live process blocked in
	# a wait, with its EQs as they were, and exit status 3.
	dead_out=$(ptltool eq "$pid"); rc=$?
	[ $rc = 3 ] || fail "ptltool eq on the killed process's view exited $rc: $dead_out"
	echo "$dead_out" | grep -q "^  NOT RUNNING: the process ended without PtlFini" ||
		fail "ptltool eq does not say the process ended: $dead_out"
	echo "$dead_out" | grep -q "blocked in PtlEQWait" && fail "ptltool eq calls the killed process blocked: $dead_out"
	echo "$dead_out" | grep -q "size 8, next sequence 10, events pending 8, dropped 2" ||
		fail "the killed process's target EQ not shown as it was: $dead_out"
else
	[ -e "/dev/shm/ptl.view.$pid" ] || echo "note: the killed process's view was swept by a concurrent process"
fi

# Errors.
ptltool eq 999999999 2>&1 | grep -q "no ptl process 999999999 on this host" || fail "missing process message"
ptltool eq 999999999 >/dev/null 2>&1; [ $? = 1 ] || fail "missing process exit status"
ptltool eq abc >/dev/null 2>&1; [ $? = 2 ] || fail "bad pid exit status"
ptltool eq --job zz --rank 0 2>&1 | grep -q "not a job id" || fail "bad job message"
ptltool eq --job "$job" --rank 0 2>&1 | grep -q "no live rank 0 of job" || fail "dead job message"
# The next ptl process to start removes the dead one's views, and its own
# at the end; a FIFO under a view's name (anyone can make one in
# /dev/shm) neither stops it nor is removed.
fifo=/dev/shm/ptl.view.2147483647
rm -f "$fifo"; mkfifo "$fifo" || fail "mkfifo $fifo"
fini=$(eq_holder fini | sed -n 's/^fini //p')
[ -p "$fifo" ] || fail "the sweep removed a FIFO"
rm -f "$fifo"
[ -n "$fini" ] || fail "eq_holder fini did not finish (blocked on a FIFO named as a view?)"
# The sweep removed the killed process's view: asserted in our own
# /dev/shm only (in a shared one another sweeper may hold its lock then).
if [ "$own_shm" = 1 ] && { [ -e "/dev/shm/ptl.view.$pid" ] || [ -e "/dev/shm/ptl.view.$pid.eq2" ]; }; then
	fail "the next ptl process's PtlInit left the killed process's view"
fi
# A FIFO under a starting process's own view name fails its PtlInit at
# once (PTL_FAIL), saying so.
out3=$(eq_holder fifo 2>&1)
echo "$out3" | grep -q "^fifo rc PTL_FAIL" ||
	fail "PtlInit with a FIFO as its view: $out3"
echo "$out3" | grep -q "is not a regular file of ours: no view, no EQs" || fail "PtlInit's FIFO message: $out3"
# nor ptltool, looking at a live process (this shell) with such a name
fifo=/dev/shm/ptl.view.$$
rm -f "$fifo"; mkfifo "$fifo" || fail "mkfifo $fifo"
out2=$(ptltool eq $$ 2>&1); rc=$?
rm -f "$fifo"
[ $rc = 124 ] && fail "ptltool eq blocked on a FIFO named as a view"
echo "$out2" | grep -q "no ptl process $$" || fail "ptltool eq on a FIFO: $out2"
# A live process holding a starting process's view name locked (one of
# another pid namespace sharing /dev/shm, with the same pid) fails its
# PtlInit too (PTL_FAIL), once it has waited ~2 s for a sweeper to let go.
t0=$(date +%s)
out4=$(eq_holder busy 2>&1); rc=$?
t1=$(date +%s)
[ $rc = 0 ] || fail "eq_holder busy exited $rc: $out4"
echo "$out4" | grep -q "^busy rc PTL_FAIL" || fail "PtlInit with its view held by a live process: $out4"
echo "$out4" | grep -q "^ptl: /dev/shm/ptl\.view\.[0-9]* is held by another live process .*: no view, no EQs" ||
	fail "PtlInit's message for a held view: $out4"
echo "PtlInit with its view held answered after $((t1 - t0)) s"
left=$(ls /dev/shm | grep -E "^ptl\.view\.($pid|$fini)(\.|$)")
[ -z "$left" ] || fail "views left in /dev/shm: $left"
ptltool ps extra >/dev/null 2>&1; [ $? = 2 ] || fail "ps with an argument"
ptltool nosuch 2>&1 | grep -q "unknown command 'nosuch'" || fail "unknown command"
ptltool info | grep -q "^nal shm: *built" || fail "info lists shm"
echo PASS
