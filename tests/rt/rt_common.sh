# Sourced by the tests/rt/*.sh scripts: paths and assertions. Every job
# they start runs under ptlrun --timeout (60 s where the timeout is not
# what is tested), so a rank that hangs fails its test with ptlrun's
# report on it instead of holding up make check. What they run without
# ptlrun, and ptlrun itself, runs limited (tests/time_limit.sh).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
. "$(dirname "$0")/../job_output.sh"
. "$(dirname "$0")/../time_limit.sh"
PTLRUN="$PTL_TOP_BUILDDIR/tools/ptlrun"
KVS="$PTL_TOP_BUILDDIR/tests/rt/rt_kvs"
FAIL="$PTL_TOP_BUILDDIR/tests/rt/rt_fail"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ptlrun-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT="$TMP/out"
ERR="$TMP/err"
# run's bound on ptlrun itself: its jobs' 60 s, then its report on up to 4
# ranks (each one's stacks may take 20 s) and their stop
RT_RUN_LIMIT=180
failures=0

fail() {
	echo "FAIL: $*"
	echo "--- stdout:"; job_output "$(cat "$OUT" 2>/dev/null)"
	echo "--- stderr:"; job_output "$(cat "$ERR" 2>/dev/null)"
	failures=$((failures + 1))
}

# run EXPECTED_STATUS cmd...: runs cmd with stdout in $OUT, stderr in $ERR
# (where a hang is said: fail shows it).
run() {
	want=$1
	shift
	limited "$RT_RUN_LIMIT" "$@" >"$OUT" 2>"$ERR"
	got=$?
	echo "# $* -> $got"
	[ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}

# has FILE EXTENDED-REGEX: a line of FILE matches (anchored).
has() {
	grep -Eq "^$2\$" "$1" || fail "no line matching '$2' in $1"
}

hasnot() {
	! grep -Eq "$2" "$1" || fail "unexpected '$2' in $1"
}

# count FILE REGEX N
count() {
	n=$(grep -Ec "^$2\$" "$1")
	[ "$n" -eq "$3" ] || fail "$n lines match '$2' in $1, expected $3"
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)"
		exit 1
	fi
	exit 0
}
