#!/bin/sh
# Sends that wait for ring space (mp_backlog.c): no progress thread, so a
# rank out of the library reads nothing; at most 8 requests queued.
exec "$(dirname "$0")/run.sh" 2 mp_backlog PTL_PROGRESS_THREAD=0 PTL_TEST_TX_REQ_MAX=8
