#!/bin/sh
exec "$(dirname "$0")/run.sh" 2 mp_threads
