#!/bin/sh
# README command 1: build everything, then pass a token around 4 ranks with
# PtlPut, fetch each neighbour's greeting with PtlGet, and print what every
# rank's event queue saw.
set -e
cd "$(dirname "$0")/.."
./scripts/build.sh
echo "== tools/ptlrun -n 4 examples/ring"
exec ./tools/ptlrun -n 4 --timeout 60 ./examples/ring
