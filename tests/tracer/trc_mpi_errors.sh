#!/bin/sh
# What a user gets wrong: a malformed record.in, a malformed variable, an
# unwritable output path, a request-offset buffer too small, a corrupt
# trace file. Each must give a message naming the problem, and the program
# must still run to completion (exit 0). Last, histogram mode: lossy only
# when asked, and marked so.
. "$(dirname "$0")/trc_mpi_common.sh"
P=$PROGS/trc_stencil

run() {	# run DIR N ENV...: the stencil in DIR, stderr to DIR/err; its output if it fails
	dir=$1 n=$2
	shift 2
	(cd "$dir" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" "$@" "$MPIEXEC" -n "$n" "$P" 12 \
		>"$dir/out" 2>"$dir/err") && return 0
	st=$?
	job_output "$(cat "$dir/out" "$dir/err")"
	return $st
}

expect() {	# expect DIR PATTERN WHAT
	grep -q "$2" "$1/err" || { fail "$3: no message matching '$2'"; job_output "$(cat "$1/err")"; }
}

# 1. malformed record.in: each bad line named, defaults used, trace still written
d=$WORK/recordin
mkdir -p "$d"
printf 'xml\nlots\n0\n%s\n' "$d/t.trace" >"$d/record.in"
run "$d" 2 || fail "record.in: program did not complete"
expect "$d" "record.in: line 1: format 'xml'" "record.in line 1"
expect "$d" "record.in: line 2: compression window 'lots'" "record.in line 2"
expect "$d" "record.in: line 3: request-offset buffer size '0'" "record.in line 3"
test -s "$d/t.trace" || fail "record.in: line 4 (output path) was not used"
# a short record.in
printf 'ascii\n' >"$d/record.in"
run "$d" 1 PTL_TRACE_OUT="$d/short.trace" || fail "short record.in: program did not complete"
expect "$d" "line 2 missing" "short record.in"
grep -q "^# ptl trace" "$d/short.trace" || fail "short record.in: format line 1 (ascii) not used"
# a good record.in in binary (flat) format at level node
printf 'binary\n-1\n64\n%s\n' "$d/flat.trace" >"$d/record.in"
run "$d" 2 PTL_TRACE_LEVEL=node || fail "binary record.in: program did not complete"
test -s "$d/flat.trace.0" && test -s "$d/flat.trace.1" || fail "level node: one file per rank expected"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace expand "$d/flat.trace.1" >/dev/null || fail "level node binary: unreadable"
rm -f "$d/record.in"

# 2. malformed environment variables, which override record.in
d=$WORK/env
mkdir -p "$d"
run "$d" 2 PTL_TRACE_OUT="$d/t" PTL_TRACE_WINDOW=-7 PTL_TRACE_LEVEL=all PTL_TRACE_HISTO=lots \
	PTL_TRACE_FORMAT=pdf PTL_TRACE_REQBUF=x || fail "bad variables: program did not complete"
expect "$d" "PTL_TRACE_WINDOW='-7'" "PTL_TRACE_WINDOW"
expect "$d" "PTL_TRACE_LEVEL='all' is not dump, node or glob" "PTL_TRACE_LEVEL"
expect "$d" "PTL_TRACE_HISTO='lots'" "PTL_TRACE_HISTO"
expect "$d" "PTL_TRACE_FORMAT='pdf'" "PTL_TRACE_FORMAT"
expect "$d" "PTL_TRACE_REQBUF='x'" "PTL_TRACE_REQBUF"
test -s "$d/t" || fail "bad variables: trace not written with the defaults"

# 3. unwritable output path
d=$WORK/unwritable
mkdir -p "$d"
run "$d" 2 PTL_TRACE_OUT=/nonexistent-dir/sub/t.trace || fail "unwritable path: program did not complete"
expect "$d" "cannot write the trace to /nonexistent-dir/sub/t.trace" "unwritable path at start"
expect "$d" "cannot write trace /nonexistent-dir/sub/t.trace" "unwritable path at the end"

# 4. request-offset buffer overflow: the stencil keeps up to 8 requests
# outstanding at 4 ranks... and 4 at 2 ranks; a buffer of 3 overflows.
d=$WORK/overflow
mkdir -p "$d"
run "$d" 4 PTL_TRACE_OUT="$d/t" PTL_TRACE_REQBUF=3 || fail "overflow: program did not complete"
expect "$d" "request-offset buffer overflow: more than 3 requests outstanding; raise PTL_TRACE_REQBUF" \
	"request buffer overflow"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace show "$d/t" | head -1 | grep -q INCOMPLETE || fail "overflow: trace not marked INCOMPLETE"

# 5. corrupt, truncated and foreign files: clean error, exit 2, never a crash
d=$WORK/corrupt
mkdir -p "$d"
run "$d" 2 PTL_TRACE_OUT="$d/t" || fail "corrupt: program did not complete"
size=$(wc -c <"$d/t")
i=0
while [ $i -lt "$size" ]; do
	head -c $i "$d/t" >"$d/cut"
	limited "$PROGRAM_LIMIT" "$PTLTOOL" trace show "$d/cut" >/dev/null 2>"$d/cut.err"
	rc=$?
	[ $rc -eq 2 ] || { fail "truncated to $i bytes: exit $rc, expected 2"; break; }
	grep -q "truncated\|bad magic\|checksum" "$d/cut.err" || { fail "truncated to $i: $(cat "$d/cut.err")"; break; }
	i=$((i + 7))
done
printf 'hello, I am a text file\n' >"$d/foreign"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace stats "$d/foreign" 2>"$d/f.err"
[ $? -eq 2 ] && grep -q "not a ptl trace" "$d/f.err" || fail "foreign file not rejected cleanly"
# flip one byte in the middle
cp "$d/t" "$d/flip"
printf '\377' | dd of="$d/flip" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace expand "$d/flip" 2>"$d/flip.err"
[ $? -eq 2 ] && grep -q "checksum mismatch" "$d/flip.err" || fail "corrupted byte not detected"

# 6. histogram mode: lossy by the user's choice, and the trace says so;
# the nested program's rank-dependent trip counts (2, 3, 4) merge
d=$WORK/histo
mkdir -p "$d"
(cd "$d" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$d/lossless" \
	"$MPIEXEC" -n 4 "$PROGS/trc_nested" 3 >"$d/out" 2>"$d/err") || jobfail "histo: lossless run" "$d/out" "$d/err"
(cd "$d" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$d/lossy" PTL_TRACE_HISTO=60 \
	"$MPIEXEC" -n 4 "$PROGS/trc_nested" 3 >"$d/out" 2>"$d/err") || jobfail "histo: lossy run" "$d/out" "$d/err"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace show "$d/lossy" >"$d/show"
head -1 "$d/show" | grep -q "LOSSY(histograms)" || fail "histo: trace not marked lossy"
grep -q "loop [0-9]*~{" "$d/show" || fail "histo: no loop-count histogram"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace show "$d/lossless" | head -1 | grep -q LOSSY && fail "histo: lossless trace marked lossy"
[ "$(wc -c <"$d/lossy")" -lt "$(wc -c <"$d/lossless")" ] || fail "histo: lossy trace not smaller"
limited "$PROGRAM_LIMIT" "$PTLTOOL" trace stats "$d/lossy" | grep -q "lossy (histograms)" || fail "histo: stats does not say lossy"
(cd "$d" && limited "$RUN_TIMEOUT" "$MPIEXEC" -n 4 "$PTLREPLAY" "$d/lossy" >"$d/rout" 2>&1) ||
	jobfail "histo: replay of a lossy trace" "$d/rout"
grep -q "histogram mode" "$d/rout" || fail "histo: replay does not warn that counts are approximate"

# 7. ptlreplay --compute reproduces the recorded compute time: a ring with
# 10 steps of 100 ms "compute" replays in at least 0.95 s with it, and in
# much less without (times as ptlreplay --verbose measures them)
d=$WORK/compute
mkdir -p "$d"
(cd "$d" && limited "$RUN_TIMEOUT" env LD_PRELOAD="$PRELOAD" PTL_TRACE_OUT="$d/t" \
	"$MPIEXEC" -n 2 "$PROGS/trc_ring" 10 100000 >"$d/out" 2>&1) || jobfail "compute: recording" "$d/out"
(cd "$d" && limited "$RUN_TIMEOUT" "$MPIEXEC" -n 2 "$PTLREPLAY" --verbose "$d/t" >"$d/r1" 2>&1) ||
	jobfail "compute: replay" "$d/r1"
(cd "$d" && limited "$RUN_TIMEOUT" "$MPIEXEC" -n 2 "$PTLREPLAY" --verbose --compute "$d/t" >"$d/r2" 2>&1) ||
	jobfail "compute: replay --compute" "$d/r2"
# what ptlreplay waited out, from --verbose: "... in T ms, C ms of it recorded compute time"
waited() { sed -n 's/^ptlreplay: rank 0: .* ms, \([0-9]*\) ms of it recorded compute time$/\1/p' "$1"; }
took() { sed -n 's/^ptlreplay: rank 0: .* replayed in \([0-9]*\) ms,.*/\1/p' "$1"; }
echo "replay: $(took "$d/r1") ms; with --compute: $(took "$d/r2") ms, $(waited "$d/r2") ms waited"
[ "$(waited "$d/r1")" = 0 ] || fail "compute: plain replay waited $(waited "$d/r1") ms"
c=$(waited "$d/r2")
[ "${c:-0}" -ge 950 ] && [ "${c:-0}" -le 1500 ] || fail "compute: --compute waited ${c:-?} ms, recorded 10 x 100 ms"
[ "$(took "$d/r2")" -ge "${c:-0}" ] || fail "compute: replay took less than the compute it waited"

test $FAILS -eq 0
