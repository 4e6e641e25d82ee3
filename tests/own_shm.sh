# Sourced first by a test that asserts what a job leaves in /dev/shm, or
# that something there is still present: re-runs the test in a mount
# namespace of its own with an empty tmpfs on /dev/shm. Why: under make -j
# other tests start ptl processes meanwhile, and each one's PtlInit sweeps
# /dev/shm of dead processes' views and EQ objects (lib/ptl/ptl_view.c), so
# a check that ptlrun removed a killed rank's view could pass with ptlrun's
# cleanup broken, a count of what ptlrun -v removed could come out short,
# and a dead process's view could vanish before a test looked for it.
# Needs root and util-linux's unshare --propagation; where that cannot be
# had the test runs in the shared /dev/shm and says so (own_shm=0), and
# its checks that another process could satisfy are weaker there.
# PTL_TEST_OWN_SHM=0 in the environment asks for the shared /dev/shm.
own_shm=${PTL_TEST_OWN_SHM:-}
if [ -z "$own_shm" ]; then
	if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
		unshare -m --propagation private sh -c 'mount -t tmpfs -o size=256M tmpfs /dev/shm' 2>/dev/null; then
		PTL_TEST_OWN_SHM=1
		export PTL_TEST_OWN_SHM
		exec unshare -m --propagation private sh -c \
			'mount -t tmpfs -o size=256M,mode=1777 tmpfs /dev/shm && exec sh "$@"' sh "$0" "$@"
	fi
	own_shm=0
	echo "# /dev/shm shared with other tests (no private mount namespace here): a concurrent sweep may act first"
fi
