#!/bin/sh
# Bulk moves by CMA (PTL_SHM_CMA=1), long ones split with the peer.
exec "$(dirname "$0")/run.sh" 2 mp_bulk PTL_SHM_CMA=1
