# Sourced first by a test that asserts what a job leaves in /dev/shm, or
# that something there is still present: re-runs the test in a mount
# namespace of its own with an empty tmpfs on /dev/shm. Why: under make -j
# other tests start ptl processes meanwhile, and each one's PtlInit sweeps
# /dev/shm of dead processes' views and EQ objects (lib/ptl/ptl_view.c), so
# a check that ptlrun removed a killed rank's view could pass with ptlrun's
# cleanup broken, a count of what ptlrun -v removed could come out short,
# and a dead process's view could vanish before a test looked for it.
# Whatever is left in that /dev/shm when the test ends fails it: the
# tmpfs goes with the namespace, and nothing else would see a leak.
# Needs root and util-linux's unshare --propagation, and the trees and
# the current directory outside /dev/shm (the mount hides them); where
# that cannot be had the test runs in the shared /dev/shm and says so
# (own_shm=0), and its checks that another process could satisfy are
# weaker there. PTL_TEST_OWN_SHM=0 asks for the shared /dev/shm;
# PTL_TEST_OWN_SHM=1 is this file's own mark for the re-run test.
own_shm=${PTL_TEST_OWN_SHM:-}
case ${PTL_TOP_BUILDDIR:-}:${PTL_TOP_SRCDIR:-}:$(pwd) in
/dev/shm* | *:/dev/shm*) own_shm=${own_shm:-0} ;;
esac
if [ -z "$own_shm" ]; then
	if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
		unshare -m --propagation private sh -c 'mount -t tmpfs -o size=256M,mode=1777 tmpfs /dev/shm' 2>/dev/null; then
		# TMPDIR inside /dev/shm would be hidden too
		case ${TMPDIR:-} in /dev/shm*) TMPDIR=/tmp; export TMPDIR ;; esac
		exec unshare -m --propagation private sh -c '
			if ! mount -t tmpfs -o size=256M,mode=1777 tmpfs /dev/shm; then
				echo "# /dev/shm: no private tmpfs after all; the shared one"
				PTL_TEST_OWN_SHM=0 exec sh "$@"
			fi
			echo "# /dev/shm: a private tmpfs for this test"
			PTL_TEST_OWN_SHM=1 sh "$@"
			rc=$?
			left=$(ls -A /dev/shm)
			if [ -n "$left" ]; then
				echo "FAIL: left in /dev/shm when the test ended:" $left
				[ "$rc" -ne 0 ] || rc=1
			fi
			exit $rc' sh "$0" "$@"
	fi
	own_shm=0
fi
[ "$own_shm" = 1 ] || echo "# /dev/shm shared with other tests: a concurrent sweep may act first"
