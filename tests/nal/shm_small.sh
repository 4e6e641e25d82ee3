#!/bin/sh
# shm_small.sh: a /dev/shm too small for the job's segment fails the job at
# start with a message that says so, instead of a SIGBUS mid-run (the
# segment's pages are reserved when it is made), and leaves nothing there.
# The small /dev/shm is a 2 MiB tmpfs in a mount namespace of its own
# (a 4-rank segment is ~20 MiB); the same job with the host's /dev/shm
# runs. Needs root (77 if not, or where mount namespaces are refused).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
B=$PTL_TOP_BUILDDIR
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to mount a small /dev/shm"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: unshare (util-linux) not installed"; exit 77; }
unshare -m sh -c 'mount -t tmpfs -o size=2M tmpfs /dev/shm' 2>/dev/null ||
	{ echo "SKIP: cannot mount a tmpfs in a mount namespace here"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ptl-shm-small.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
unshare -m sh -c 'mount -t tmpfs -o size=2M tmpfs /dev/shm &&
	"$1/tools/ptlrun" -n 4 --timeout 60 "$1/examples/ring" >"$2/out" 2>"$2/err"; echo $? >"$2/rc";
	ls -A /dev/shm >"$2/left"' sh "$B" "$tmp"
cat "$tmp/err"
rc=$(cat "$tmp/rc")
[ "$rc" != 0 ] || { echo "FAIL: the job ran with a segment /dev/shm cannot hold"; fail=1; }
[ "$rc" -lt 128 ] || { echo "FAIL: the job died of a signal ($rc), not of the error"; fail=1; }
grep -Eq '^ptl shm: reserving [0-9]+ bytes of /dev/shm for /ptl\.[0-9a-f]{16}\.seg failed: No space left on device \(is /dev/shm full or too small\?\)$' "$tmp/err" ||
	{ echo "FAIL: no message saying /dev/shm is too small"; fail=1; }
[ ! -s "$tmp/left" ] || { echo "FAIL: left in the small /dev/shm: $(cat "$tmp/left")"; fail=1; }
# The same job where /dev/shm has room.
"$B/tools/ptlrun" -n 4 --timeout 60 "$B/examples/ring" >"$tmp/out2" 2>&1 ||
	{ echo "FAIL: the ring did not run with the host's /dev/shm"; cat "$tmp/out2"; fail=1; }
exit $fail
