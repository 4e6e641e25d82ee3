# mpi_common.sh: sourced by the tests/mpi/*.sh tests. run N [VAR=VAL...] -- PROG [ARGS]
# Every job under ptlrun --timeout, and ptlrun itself limited
# (tests/time_limit.sh: job_limit), in run and in the tests' own jobs.
B=${PTL_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PTLRUN="$B/tools/ptlrun"
. "$(dirname "$0")/../job_output.sh"
. "$(dirname "$0")/../time_limit.sh"
fails=0
# jobfail WHAT: a job (its output in $out) failed WHAT: all of its output
# (job_output.sh), then the failure, counted.
jobfail() {
	job_output "$out"
	echo "FAIL: $*"
	fails=$((fails + 1))
}
run() {
	n=$1; shift
	envs=""
	while [ "$1" != "--" ]; do envs="$envs -x $1"; shift; done
	shift
	prog=$1; shift
	if ! jlimit=$(job_timeout 120); then
		echo "FAIL: ptlrun -n $n$envs $prog $*: not run, the test's deadline has passed"
		fails=$((fails + 1))
		return
	fi
	out=$(limited "$(job_limit 120)" "$PTLRUN" -n "$n" --timeout "$jlimit" $envs "$B/tests/mpi/$prog" "$@" 2>&1)
	rc=$?
	# A send the library never finished shows only as a slow MPI_Finalize.
	if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'MPI_Finalize gave up'; then
		printf '%s\n' "$out" | grep 'MPI_Finalize gave up'
		rc=1
	fi
	# A pass shows the last lines of its output, a failure all of it.
	if [ $rc -ne 0 ]; then
		jobfail "ptlrun -n $n$envs $prog $*: exit $rc"
	else
		printf '%s\n' "$out" | tail -3
	fi
}
finish() { [ $fails -eq 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }; }
