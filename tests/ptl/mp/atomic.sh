#!/bin/sh
exec "$(dirname "$0")/run.sh" 4 mp_atomic
