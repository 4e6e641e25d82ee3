#!/bin/sh
# Targets that die with an operation of rank 0 in flight to each: the ACK
# and REPLYs libptl makes in their stead carry their uid and jid (each is
# another user), the bulk put's SEND_END rank 0's (tests/ptl/mp/mp_deadpeer.c).
set -u
: "${PTL_TOP_BUILDDIR:?run through make check}"
exec "$PTL_TOP_BUILDDIR/tools/ptlrun" -n 4 --timeout 90 "$PTL_TOP_BUILDDIR/tests/ptl/mp/mp_deadpeer"
