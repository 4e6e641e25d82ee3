#!/bin/sh
# README command 2 (and CI's .ci/run): build everything and run the whole
# test suite, then install under a scratch directory and check the install.
# A failing test prints its log.
set -e
cd "$(dirname "$0")/.."
./scripts/build.sh
status=0
make -j"$(nproc)" check VERBOSE=1 || status=$?
# and what `make install` puts in place, installed under a scratch DESTDIR:
# its ptlcc builds programs that run, its tools start (tests/tools/ptlcc.sh)
dest=$(mktemp -d)
if make install DESTDIR="$dest" >"$dest.log" 2>&1; then
	make installcheck DESTDIR="$dest" || status=1
else
	cat "$dest.log" >&2
	echo "== test-all: make install DESTDIR=$dest failed" >&2
	status=1
fi
rm -rf "$dest" "$dest.log"
if [ $status != 0 ]; then
	echo "== test-all: some tests failed; their logs are above (and in */*.log)" >&2
fi
exit $status
