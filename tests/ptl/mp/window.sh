#!/bin/sh
# No progress thread: only the ranks' own calls (PtlEQPoll, PtlRtBarrier)
# move their messages.
exec "$(dirname "$0")/run.sh" 2 mp_window PTL_PROGRESS_THREAD=0
