#!/bin/sh
# A job of two users: rank 0 claims the uid after ours (the test option
# PTL_TEST_UID), rank 1 runs as we do; mp_match's uid group checks what
# each side's access control and events see of the other's uid.
set -u
: "${PTL_TOP_BUILDDIR:?run through make check (or set PTL_TOP_BUILDDIR)}"
uid=$(($(id -u) + 1))
exec "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 2 --timeout 60 sh -c \
	'if [ "$PTL_RT_RANK" = 0 ]; then PTL_TEST_UID=$1; export PTL_TEST_UID; fi; exec "$0" uid' \
	"$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_match" "$uid"
