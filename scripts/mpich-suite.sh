#!/bin/sh
# Runs MPICH's own MPI test programs (test/mpi of the MPICH source Debian
# ships) unmodified against ptl's MPI: an outside check that programs
# written to the standard compile and run here. Not part of `make check`
# (it downloads the source and takes several minutes); run it after
# changing the MPI layer. From a built tree:
#
#   scripts/mpich-suite.sh [dir...]       (default: pt2pt coll datatype comm group init topo attr errhan info)
#
# MPICH's harness (util/mtest.c, mtest_common.c, dtypes.c) is built as it
# is, its intercommunicator generator too. Tests that fail for a reason
# outside the subset are listed in EXPECTED below with the reason; any other
# failure, or a test listed there that passes, makes the run fail.
set -u
B=$(cd "$(dirname "$0")/.." && pwd)
S=${PTL_TOP_SRCDIR:-$B}
VER=4.0.2
CACHE=${PTL_MPICH_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ptl}
DIRS=${*:-pt2pt coll datatype comm group init topo attr errhan info}
EXPECTED='
coll/oplxor       MPI_LXOR on floating types: an MPICH extension (the standard allows integer and logical types)
pt2pt/pscancel    cancels sends: ptl completes a send normally instead (MPI_Cancel of a send may fail), so the test waits for receives that never come
attr/keyval_double_free       frees one keyval twice through a copy of its handle: ptl refuses the second free (MPI_ERR_KEYVAL), MPICH lets it pass
attr/keyval_double_free_comm  the same with MPI_Comm_free_keyval
attr/keyval_double_free_type  the same with MPI_Type_free_keyval
comm/comm_idup             MPI_Comm_idup of an intercommunicator: not provided (intracommunicators only)
comm/comm_idup_iallreduce  the same
comm/comm_idup_isend       the same
comm/comm_idup_nb          the same, and nonblocking collectives on intercommunicators (not provided)
topo/cartsuball   MPI_Cart_sub keeping no dimension: MPICH gives rank 0 a communicator and the others MPI_COMM_NULL; ptl gives every rank its own one-rank subgrid (MPI-3.1 7.5.7: the subgrid containing the calling process)
'
PER_TEST_TIMEOUT=${PTL_MPICH_TIMEOUT:-60}

mkdir -p "$CACHE" || exit 1
tarball="$CACHE/mpich_$VER.orig.tar.xz"
if [ ! -s "$tarball" ]; then
	echo "fetching MPICH $VER's source from Debian's archive"
	curl -fsS -o "$tarball.part" "http://deb.debian.org/debian/pool/main/m/mpich/mpich_$VER.orig.tar.xz" &&
		mv "$tarball.part" "$tarball" || { echo "mpich-suite: cannot fetch the MPICH source" >&2; exit 1; }
fi
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
tar -C "$W" -xJf "$tarball" "mpich-$VER/test/mpi/include" "mpich-$VER/test/mpi/util" \
	$(for d in $DIRS; do printf 'mpich-%s/test/mpi/%s ' "$VER" "$d"; done) || exit 1
T="$W/mpich-$VER/test/mpi"

# What MPICH's configure would find on this machine.
cat > "$T/include/mpitestconf.h" <<'EOF'
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRDUP 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_USLEEP 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_SYS_RESOURCE_H 1
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define POINTERINT_t long
#define STDC_HEADERS 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_NONE
#define HAVE_MPI_INTEGER16 1
EOF
CC="${CC:-cc} -O1 -w -I$S/include -I$T/include"
LIBS="-L$B/lib/mpi-shim/.libs -Wl,-rpath,$B/lib/mpi-shim/.libs:$B/lib/.libs -lptlmpi -lm"
# The harness as MPICH builds it, less its GPU and thread parts.
$CC -I"$T/util" -c "$T/util/mtest.c" -o "$W/mtest.o" && $CC -c "$T/util/mtest_single.c" -o "$W/mtest_single.o" &&
	$CC -I"$T/util" -c "$T/util/mtest_common.c" -o "$W/mtest_common.o" &&
	$CC -I"$T/util" -c "$T/util/dtypes.c" -o "$W/dtypes.o" || exit 1

for d in $DIRS; do
	list=$T/$d/testlist.in
	[ -f "$list" ] || list=$T/$d/testlist
	# One run per test: its first line without arguments or settings.
	grep -v '^#' "$list" | awk 'NF == 2 && !seen[$1]++ { print $1, $2 }' | while read -r t np; do
		if [ ! -f "$T/$d/$t.c" ] ||
			! $CC -o "$W/$t" "$T/$d/$t.c" "$W/mtest.o" "$W/mtest_single.o" "$W/mtest_common.o" "$W/dtypes.o" $LIBS 2>/dev/null; then
			echo "SKIP $d/$t (uses calls outside the subset)"
			continue
		fi
		out=$(cd "$W" && "$B/tools/ptlrun" -n "$np" --timeout "$PER_TEST_TIMEOUT" "./$t" 2>&1)
		rc=$?
		why=$(printf '%s\n' "$EXPECTED" | awk -v t="$d/$t" '$1 == t { $1 = ""; print substr($0, 2) }')
		if [ $rc = 0 ] && printf '%s\n' "$out" | grep -qi '^ *No Errors'; then
			[ -n "$why" ] && echo "XPASS $d/$t ($np ranks): listed as expected to fail: $why" || echo "PASS $d/$t ($np ranks)"
		elif [ -n "$why" ]; then
			echo "XFAIL $d/$t ($np ranks): $why"
		else
			echo "FAIL $d/$t ($np ranks, exit $rc):"
			printf '%s\n' "$out" | head -8 | sed 's/^/    /'
		fi
	done
done > "$W/results"
cat "$W/results"
for k in PASS FAIL SKIP XFAIL XPASS; do
	printf '%s %s  ' "$(grep -c "^$k " "$W/results")" "$k"
done
echo
! grep -q '^\(FAIL\|XPASS\) ' "$W/results"
