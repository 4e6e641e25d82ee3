# Sourced by the tracer's MPI tests. Finds the build tree, the preload
# library, the tools and mpiexec.hydra; every run and tool the tests start
# runs limited (tests/time_limit.sh: a hang is stopped and named).
. "$(dirname "$0")/../job_output.sh"
. "$(dirname "$0")/../time_limit.sh"
: "${PTL_TOP_BUILDDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
B=$PTL_TOP_BUILDDIR
PRELOAD=$B/tracer/.libs/libptltrace-mpich.so
PTLTOOL=$B/tools/ptltool
PTLREPLAY=$B/tools/ptlreplay-mpich
PROGS=$B/tests/tracer/programs
MPIEXEC=${MPIEXEC_HYDRA:-mpiexec.hydra}
RUN_TIMEOUT=${TRC_RUN_TIMEOUT:-90}

if ! command -v "$MPIEXEC" >/dev/null 2>&1; then
	echo "SKIP: mpiexec.hydra not found"
	exit 77
fi
test -f "$PRELOAD" || { echo "FAIL: $PRELOAD not built"; exit 1; }

# Oversubscribed MPICH spins; ask it and UCX to yield the core.
export MPIR_CVAR_CH4_OFI_ENABLE_PROGRESS_THREAD=0
export UCX_TLS=${UCX_TLS:-self,sm,tcp}
export HYDRA_LAUNCHER=fork

WORK=$(mktemp -d "${TMPDIR:-/tmp}/trc-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0

fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# jobfail WHAT FILE...: WHAT, a job, failed; its output (the FILEs) says why.
jobfail() {
	fail "$1"
	shift
	job_output "$(cat "$@" 2>/dev/null)"
}

