#!/bin/sh
# Configures (once) and builds ptl in this tree, warnings as errors.
set -e
cd "$(dirname "$0")/.."
"$PWD/scripts/deps.sh"
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --enable-werror
make -j"$(nproc)"
