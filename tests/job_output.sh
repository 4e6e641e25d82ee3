# Sourced by the tests that run jobs (under ptlrun, mpiexec.hydra, mpirun,
# srun, in the test VMs) and by scripts/mpich-suite.sh, each from its own
# folder ("$(dirname "$0")/../job_output.sh" and the like), so that it is
# found beside them in a source tree, a VPATH build's and a dist tarball's.
#
# job_output TEXT: prints TEXT, the output of a job that failed, whole up
# to 400 lines. Whole, because why a job failed is seldom in its last few
# lines: a hung job ends at ptlrun --timeout with a report on every rank
# still running (threads, system calls, stacks: tools/ptlrun_stuck.c),
# dozens of lines, and a CI log is all that is left of the run. Bounded,
# because a runaway job can print without end; its last lines are the ones
# kept (ptlrun's report and its verdict come last), the others counted.
job_output() {
	if [ -z "$1" ]; then
		echo "(the job printed nothing)"
		return 0
	fi
	jo_lines=$(printf '%s\n' "$1" | wc -l)
	[ "$jo_lines" -le 400 ] ||
		echo "(the first $((jo_lines - 400)) of the job's $jo_lines lines left out; its last 400:)"
	printf '%s\n' "$1" | tail -n 400
}
