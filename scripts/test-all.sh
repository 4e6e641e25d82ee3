#!/bin/sh
# README command 2 (and CI's .ci/run): build everything and run the whole
# test suite. A failing test prints its log.
set -e
cd "$(dirname "$0")/.."
./scripts/build.sh
status=0
make -j"$(nproc)" check VERBOSE=1 || status=$?
if [ $status != 0 ]; then
	echo "== test-all: some tests failed; their logs are above (and in */*.log)" >&2
fi
exit $status
