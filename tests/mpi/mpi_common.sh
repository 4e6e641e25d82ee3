# mpi_common.sh: sourced by the tests/mpi/*.sh tests. run N [VAR=VAL...] -- PROG [ARGS]
B=${PTL_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PTLRUN="$B/tools/ptlrun"
fails=0
run() {
	n=$1; shift
	envs=""
	while [ "$1" != "--" ]; do envs="$envs -x $1"; shift; done
	shift
	prog=$1; shift
	out=$("$PTLRUN" -n "$n" --timeout 120 $envs "$B/tests/mpi/$prog" "$@" 2>&1)
	rc=$?
	# A send the library never finished shows only as a slow MPI_Finalize.
	if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -q 'MPI_Finalize gave up'; then
		printf '%s\n' "$out" | grep 'MPI_Finalize gave up'
		rc=1
	fi
	# A failure shows all of it (a timeout's report of what the ranks
	# were doing is many lines), a pass its last lines.
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | tail -400
	else
		printf '%s\n' "$out" | tail -3
	fi
	if [ $rc -ne 0 ]; then
		echo "FAIL: ptlrun -n $n$envs $prog $*: exit $rc"
		fails=$((fails + 1))
	fi
}
finish() { [ $fails -eq 0 ] && echo "all passed" || { echo "$fails failed"; exit 1; }; }
