#!/bin/sh
# ptlrun: jobs that succeed; the key-value exchange; --tag-output; the
# singleton; -x; --bind-to core.
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/rt/rt_common.sh"

# Alone: rank 0 of 1, singleton backend.
limited "$PROGRAM_LIMIT" env -u PTL_RT_FD "$KVS" >"$OUT" 2>"$ERR" || fail "rt_kvs alone failed"
has "$OUT" 'rank 0 of 1 ok \(local 0/1 backend singleton jobid [0-9a-f]{16}\)'

for n in 1 4; do
	run 0 "$PTLRUN" --timeout 60 -n $n "$KVS"
	count "$OUT" "rank [0-9]+ of $n ok \(local [0-9]+/$n backend ptlrun jobid [0-9a-f]{16}\)" $n
	r=0
	while [ $r -lt $n ]; do
		has "$OUT" "rank $r of $n ok .*"
		r=$((r + 1))
	done
	# One job id for the whole job.
	ids=$(sed 's/.*jobid //' "$OUT" | sort -u | wc -l)
	[ "$ids" -eq 1 ] || fail "$ids job ids in one job"
	hasnot "$ERR" '^ptlrun:'
done
# A new job id per job.
id1=$(sed -n 's/.*jobid \([0-9a-f]*\)).*/\1/p' "$OUT" | head -1)
run 0 "$PTLRUN" --timeout 60 --np 2 "$KVS"
id2=$(sed -n 's/.*jobid \([0-9a-f]*\)).*/\1/p' "$OUT" | head -1)
[ "$id1" != "$id2" ] || fail "two jobs got the same id $id1"

# --tag-output: every stdout and stderr line carries "[rank] ".
run 0 "$PTLRUN" --timeout 60 -n 3 --tag-output "$KVS"
for r in 0 1 2; do
	has "$OUT" "\[$r\] rank $r of 3 ok .*"
	has "$ERR" "\[$r\] ptl: rt_put: invalid key .*"
done
hasnot "$OUT" '^[^[]'
hasnot "$ERR" '^[^[]'
# A last line without a newline still comes out, tagged, as a line.
run 0 "$PTLRUN" --timeout 60 -n 2 --tag-output sh -c 'printf "a\nb"; printf "c\n" >&2'
count "$OUT" '\[[01]\] a' 2
count "$OUT" '\[[01]\] b' 2
count "$ERR" '\[[01]\] c' 2

# The environment: inherited, -x VAR=VALUE sets, PTL_RT_* per rank.
PTLRUN_TEST_VAR=inherited run 0 "$PTLRUN" --timeout 60 -n 2 "$FAIL" env PTLRUN_TEST_VAR
count "$OUT" 'rank [01] PTLRUN_TEST_VAR=inherited' 2
run 0 "$PTLRUN" --timeout 60 -n 2 -x PTLRUN_TEST_VAR=set -x HOME "$FAIL" env PTLRUN_TEST_VAR
count "$OUT" 'rank [01] PTLRUN_TEST_VAR=set' 2
run 0 "$PTLRUN" --timeout 60 -n 2 sh -c 'echo "$PTL_RT_RANK/$PTL_RT_SIZE $PTL_RT_LOCAL_RANK/$PTL_RT_LOCAL_SIZE ${#PTL_RT_JOBID} ${#PTL_RT_JOB_KEY} $PTL_RT_NID"'
has "$OUT" '0/2 0/2 16 32 [0-9]+'
has "$OUT" '1/2 1/2 16 32 [0-9]+'

# --bind-to core: rank r on the r-th allowed cpu (mod their number).
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
run 0 "$PTLRUN" --timeout 60 -n 3 --bind-to core "$FAIL" cpu
for r in 0 1 2; do
	has "$OUT" "rank $r cpus [0-9]+"
done
if [ "$(nproc)" -ge 2 ] && [ "$cpus" = "0-$(($(nproc) - 1))" ]; then
	has "$OUT" "rank 0 cpus 0"
	has "$OUT" "rank 1 cpus 1"
	has "$OUT" "rank 2 cpus $((2 % $(nproc)))"
fi
# --bind-to none (the default) leaves the mask alone.
limited "$PROGRAM_LIMIT" env -u PTL_RT_FD "$FAIL" cpu >"$TMP/alone" || fail "rt_fail cpu alone"
run 0 "$PTLRUN" --timeout 60 -n 2 --bind-to none "$FAIL" cpu
has "$OUT" "$(sed 's/rank 0/rank 1/' "$TMP/alone")"

finish
