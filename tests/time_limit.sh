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
# PROGRAM_LIMIT: the SECONDS for a program that ends in moments (on a
# loaded machine's moments).
PROGRAM_LIMIT=60

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
