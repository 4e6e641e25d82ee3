#!/bin/sh
# A job of two users: mp_match's uid group, in which rank 0 claims the
# uid after ours (the test option PTL_TEST_UID) and rank 1 runs as we do.
exec "$(dirname "$0")/run.sh" 2 mp_match MP_MATCH_GROUP=uid
