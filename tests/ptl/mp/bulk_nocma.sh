#!/bin/sh
# The pipelined copy through shared buffers (the default way), with CMA
# turned off altogether.
exec "$(dirname "$0")/run.sh" 2 mp_bulk PTL_SHM_CMA=0
