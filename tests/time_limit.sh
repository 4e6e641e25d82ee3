# Sourced by the test scripts that run programs or jobs which could hang,
# from beside them ("$(dirname "$0")/../time_limit.sh" and the like, as
# tests/job_output.sh is), so that a hang fails its test and says what
# hung, instead of holding up make check until CI's own limit ends it
# with nothing said.
#
# limited SECONDS COMMAND [ARG...]: runs COMMAND under timeout(1). One
# still running after SECONDS is stopped (SIGTERM to its process group,
# SIGKILL 5 s later), and "<script>: HUNG: COMMAND ... still running after
# SECONDS s; stopped" goes to stderr; the status is then timeout's 124.
# For a program that ends on its own in moments (a single-process test
# program, ptltool), and around ptlrun as a bound on ptlrun itself: its
# own --timeout, which says what its ranks were doing, must come first.
#
# job_timeout SECONDS: the --timeout for a ptlrun job meant to end within
# SECONDS. That, unless the test has a deadline, PTL_TEST_DEADLINE (seconds
# since the epoch, set by tests/vm/vm-tests.sh): then no later than it.
# Why: a test whose own limit comes first stops its ranks with the rest
# of it, without ptlrun's report on them. Once the deadline has passed it
# says 1 and returns 1: a harness that goes on after a failed job
# (tests/mpi's run) starts no more, each of which would be cut at once
# with a report of its own, until the test's limit cut the reports.
#
# PROGRAM_LIMIT: the SECONDS for a program that ends in moments (on a
# loaded machine's moments).
PROGRAM_LIMIT=60
#
# test_limit SECONDS: SECONDS, 50 times that under PTL_TEST_VALGRIND=1
# (the programs, or every rank of the jobs, under valgrind memcheck:
# valgrind slows a program 20 to 50 times).
test_limit() {
	if [ "${PTL_TEST_VALGRIND:-0}" = 1 ]; then
		echo $(($1 * 50))
	else
		echo "$1"
	fi
}
#
# job_limit SECONDS: the SECONDS for limited around a ptlrun whose
# --timeout is SECONDS (or job_timeout SECONDS): past it, ptlrun's report
# on the ranks still running (the stacks of up to 8, each stack tool given
# 20 s) and their stop, so that the limit cuts only a ptlrun that hangs
# itself. ptlrun's own --timeout must stay what ends a hung job: its
# report says what the ranks were doing.
JOB_REPORT=180
job_limit() {
	echo $(($1 + JOB_REPORT))
}

limited() {
	li_s=$1
	shift
	li_t0=$(date +%s)
	timeout -k 5 "$li_s" "$@"
	li_rc=$?
	# 124 is also a status of its own (ptlrun's at its --timeout): only
	# one that took the whole limit was timeout's
	if { [ $li_rc -eq 124 ] || [ $li_rc -eq 137 ]; } &&
		[ $(($(date +%s) - li_t0)) -ge "$li_s" ]; then
		echo "$(basename "$0"): HUNG: $* still running after $li_s s; stopped" >&2
		li_rc=124
	fi
	return $li_rc
}

# ptl_job SECONDS [VAR=VALUE...] ARG...: the build's ptlrun ARG... with
# those variables in its environment, its --timeout job_timeout SECONDS,
# under limited job_limit SECONDS: a job of a test meant to end within
# SECONDS
ptl_job() {
	pj_s=$1
	shift
	pj_env=
	while [ $# -gt 0 ]; do
		case $1 in
		-*) break ;;
		*=*) pj_env="$pj_env $1" && shift ;;
		*) break ;;
		esac
	done
	limited "$(job_limit "$pj_s")" ${pj_env:+env} $pj_env "$PTL_TOP_BUILDDIR/tools/ptlrun" --timeout "$(job_timeout "$pj_s")" "$@"
}

job_timeout() {
	case ${PTL_TEST_DEADLINE:-} in
	'' | *[!0-9]*)
		echo "$1"
		return 0
		;;
	esac
	jt_left=$((PTL_TEST_DEADLINE - $(date +%s)))
	if [ "$jt_left" -lt 1 ]; then
		echo 1
		return 1
	fi
	[ "$jt_left" -lt "$1" ] && echo "$jt_left" || echo "$1"
}
