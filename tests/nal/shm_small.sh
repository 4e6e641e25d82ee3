#!/bin/sh
# shm_small.sh: a /dev/shm too small for the job's segment fails the job at
# start with a message that says so, instead of a SIGBUS mid-run (a segment
# of up to 64 MiB has its pages reserved when it is made), and rank 0
# removes it itself; a larger segment (20 ranks: ~71 MiB) stays sparse and
# runs in a /dev/shm smaller than it. Each /dev/shm here is a tmpfs in a
# mount namespace of its own, private (the host's /dev/shm is untouched);
# the same job with the host's /dev/shm runs. Needs root and util-linux's
# unshare --propagation (77 if not, or where such mounts are refused).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
B=$PTL_TOP_BUILDDIR
. "$(dirname "$0")/../job_output.sh"
TIME_LIMIT=$(dirname "$0")/../time_limit.sh
. "$TIME_LIMIT"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a small /dev/shm"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare (util-linux) not installed"; exit 77; }
unshare -m --propagation private sh -c 'mount -t tmpfs -o size=2M tmpfs /dev/shm' 2>/dev/null ||
	{ echo "SKIP: cannot mount a private tmpfs in a mount namespace here"; exit 77; }
# Not under /dev/shm, which the namespaces hide.
case ${TMPDIR:-/tmp} in /dev/shm*) base=/tmp ;; *) base=${TMPDIR:-/tmp} ;; esac
tmp=$(mktemp -d "$base/ptl-shm-small.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
# small SIZE N TAG: N ranks of the ring example under a SIZE /dev/shm;
# ptlrun -v says what it removed, and what is left is listed. ptlrun runs
# limited (time_limit.sh, sourced in the namespace's shell: a hang is in
# $5.err and its status in $5.rc).
small() {
	unshare -m --propagation private sh -c '. "$6"; mount -t tmpfs -o size=$3 tmpfs /dev/shm &&
		limited "$(job_limit 120)" "$1/tools/ptlrun" -v -n $4 --timeout 120 "$1/examples/ring" >"$2/$5.out" 2>"$2/$5.err"
		echo $? >"$2/$5.rc"; ls -A /dev/shm >"$2/$5.left"' shm_small.sh "$B" "$tmp" "$1" "$2" "$3" "$TIME_LIMIT"
	cat "$tmp/$3.err" | grep -v '^ptlrun: ' | head -5
}
small 2M 4 tiny
rc=$(cat "$tmp/tiny.rc")
[ "$rc" != 0 ] || { echo "FAIL: the job ran with a segment /dev/shm cannot hold"; fail=1; }
[ "$rc" -lt 128 ] || { echo "FAIL: the job died of a signal ($rc), not of the error"; fail=1; }
grep -Eq '^ptl shm: reserving [0-9]+ bytes of /dev/shm for /ptl\.[0-9a-f]{16}\.seg failed: No space left on device \(is /dev/shm full or too small\?\)$' "$tmp/tiny.err" ||
	{ echo "FAIL: no message saying /dev/shm is too small"; fail=1; }
! grep -q '^ptlrun: removed /dev/shm/ptl\.[0-9a-f]*\.seg' "$tmp/tiny.err" ||
	{ echo "FAIL: rank 0 left its segment for ptlrun to remove"; fail=1; }
[ ! -s "$tmp/tiny.left" ] || { echo "FAIL: left in the small /dev/shm: $(cat "$tmp/tiny.left")"; fail=1; }
[ $fail = 0 ] || job_output "$(cat "$tmp/tiny.out" "$tmp/tiny.err")"
# Past the reservation's cap: sparse, as before, so 20 ranks run in 64 MiB.
small 64M 20 big
[ "$(cat "$tmp/big.rc")" = 0 ] ||
	{ echo "FAIL: 20 ranks did not run in a 64 MiB /dev/shm"; job_output "$(cat "$tmp/big.out" "$tmp/big.err")"; fail=1; }
[ ! -s "$tmp/big.left" ] || { echo "FAIL: left in /dev/shm: $(cat "$tmp/big.left")"; fail=1; }
# The same job where /dev/shm has room.
limited "$(job_limit 60)" "$B/tools/ptlrun" -n 4 --timeout 60 "$B/examples/ring" >"$tmp/out2" 2>&1 ||
	{ echo "FAIL: the ring did not run with the host's /dev/shm"; job_output "$(cat "$tmp/out2")"; fail=1; }
exit $fail
