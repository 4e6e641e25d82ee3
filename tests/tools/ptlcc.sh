#!/bin/sh
# ptlcc as a user runs it: an MPI program (tests/tools/ptlcc_app.c) and a
# Portals one (examples/ring.c) built with it run under ptlrun, and load
# ptl's libraries from where ptlcc built them (the loader's own search, no
# LD_LIBRARY_PATH, whatever ldconfig knows), with the headers from there
# too; --showme prints the command; the compiler's failure is ptlcc's.
#
#   tests/tools/ptlcc.sh                    the build tree's tools/ptlcc (make check)
#   tests/tools/ptlcc.sh --installed DESTDIR PREFIX BINDIR LIBDIR INCLUDEDIR
#                                           an installed tree (make installcheck,
#                                           after make install DESTDIR=...):
#                                           its ptlcc, ptlrun, ptltool, ptlreplay,
#                                           libptlmpi's own run path to libptl,
#                                           libptl.pc's flags, and the tree moved
#                                           whole (PTLCC_PREFIX) to a directory
#                                           with a space in its name
set -u
fail() { echo "FAIL: $*"; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
top=${PTL_TOP_SRCDIR:-$here/../..}
. "$here/../time_limit.sh"
# nothing of the caller's picks the compiler or moves the tree
unset LD_LIBRARY_PATH PTLCC_CC MPICH_CC PTLCC_PREFIX

if [ "${1-}" = --installed ]; then
	[ $# = 6 ] || fail "usage: $0 --installed DESTDIR PREFIX BINDIR LIBDIR INCLUDEDIR"
	bin=$2$4
	libs=$2$5
	inc=$2$6
	# the installed ptlcc names the configured prefix; under DESTDIR it is moved
	[ -n "$2" ] && PTLCC_PREFIX=$2$3 && export PTLCC_PREFIX
	ptlcc=$bin/ptlcc
	ptlrun=$bin/ptlrun
	what="installed ptlcc"
else
	B=${PTL_TOP_BUILDDIR:-$here/../..}
	libs=$B/lib/mpi-shim/.libs
	inc=$top/include
	ptlcc=$B/tools/ptlcc
	ptlrun=$B/tools/ptlrun
	what="ptlcc"
fi
[ -x "$ptlcc" ] || fail "no $ptlcc"
# the compiler is told of no other headers (one that is not there would be
# passed over in silence, and a stale install's found instead)
[ -f "$inc/mpi.h" ] && [ -f "$inc/portals3.h" ] || fail "no mpi.h and portals3.h in $inc"
out=$("$ptlcc" --showme:compile)
case $out in -I*" "* | -I*-I*) fail "$what --showme:compile: '$out', want -I$inc alone" ;; esac
case $out in -I*) [ "${out#-I}" -ef "$inc" ] ;; *) false ;; esac || fail "$what --showme:compile: '$out', want -I$inc"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# ldd_from FILE DIR...: each of ptl's libraries FILE needs resolves to a
# file in one of the DIRs (not one the loader found elsewhere: an older
# install ldconfig knows, a LD_LIBRARY_PATH)
ldd_from() {
	lf_file=$1
	shift
	lf_out=$(ldd "$lf_file") || fail "ldd $lf_file: $lf_out"
	echo "$lf_out" | grep -q 'libptl' || fail "$lf_file needs no ptl library: $lf_out"
	echo "$lf_out" | grep 'libptl' | while read -r lf_line; do
		# "NAME => PATH (0xADDRESS)", the path maybe with spaces
		lf_name=${lf_line%% *}
		case $lf_line in *"=> not found"*) echo "$lf_name: not found"; exit 1 ;; esac
		lf_path=${lf_line#*=> }
		lf_path=${lf_path% (0x*}
		lf_ok=no
		for lf_dir in "$@"; do
			[ "$(dirname "$lf_path")" -ef "$lf_dir" ] && lf_ok=yes
		done
		[ $lf_ok = yes ] || { echo "$lf_name -> $lf_path, not from $*"; exit 1; }
	done || fail "$lf_file does not load ptl's libraries from $*: $lf_out"
}

# --showme: the compiler command, the link flags last; none with -c
out=$("$ptlcc" --showme -O2 -o app app.c) || fail "$what --showme failed"
case $out in
*" -O2 -o app app.c "*"-lptlmpi -lptl") ;;
*) fail "$what --showme: $out" ;;
esac
case $out in *"-L$libs "*) ;; *) fail "$what --showme links from elsewhere than $libs: $out" ;; esac
out=$("$ptlcc" --showme -c app.c)
case $out in *-lptl*) fail "$what --showme -c links: $out" ;; esac
out=$("$ptlcc" --showme:link)
case $out in "-L$libs "*"-lptlmpi -lptl") ;; *) fail "$what --showme:link: $out" ;; esac
out=$(PTLCC_CC=clang-not-here "$ptlcc" --showme -c app.c)
case $out in "clang-not-here "*) ;; *) fail "$what ignores PTLCC_CC: $out" ;; esac

# the compiler's failure, and its message, are ptlcc's
printf 'int main(void) { return undeclared_thing; }\n' >"$T/bad.c"
out=$(limited "$PROGRAM_LIMIT" "$ptlcc" -o "$T/bad" "$T/bad.c" 2>&1) && fail "$what built a program that does not compile"
echo "$out" | grep -q undeclared_thing || fail "$what hid the compiler's message: $out"
[ -e "$T/bad" ] && fail "$what left a program behind a failed compile"

# an MPI program and a Portals one, built and run as the README says
limited "$PROGRAM_LIMIT" "$ptlcc" -O2 -Wall -Werror -o "$T/app" "$top/tests/tools/ptlcc_app.c" ||
	fail "$what could not build tests/tools/ptlcc_app.c"
limited "$PROGRAM_LIMIT" "$ptlcc" -O2 -o "$T/ring" "$top/examples/ring.c" ||
	fail "$what could not build examples/ring.c"
ldd_from "$T/app" "$libs" "${B:+$B/lib/.libs}"
ldd_from "$T/ring" "$libs" "${B:+$B/lib/.libs}"
jt=$(job_timeout 60) || fail "past the test's deadline"
# run2 PROGRAM HOW: PROGRAM on 2 ranks under this tree's ptlrun (as
# time_limit.sh's ptl_job runs the build tree's), its output in $out
run2() {
	out=$(limited "$(job_limit "$jt")" "$ptlrun" --timeout "$jt" -n 2 "$1" 2>&1) ||
		fail "ptlrun -n 2 $(basename "$1") ($2) failed: $out"
}
run2 "$T/app" "built by $what"
for r in 0 1; do
	echo "$out" | grep -q "^ptlcc_app: rank $r of 2: ok$" || fail "app's rank $r: $out"
done
run2 "$T/ring" "built by $what"
echo "$out" | grep -q "PTL_EVENT_REPLY_END" || fail "ring printed no event queue: $out"

if [ "${1-}" = --installed ]; then
	# a Portals program built as the README says, with pkg-config's flags
	# for the installed libptl (its prefix moved as PTLCC_PREFIX moves
	# ptlcc's), loads it from there too
	pc=$(PKG_CONFIG_PATH=$libs/pkgconfig pkg-config ${PTLCC_PREFIX:+--define-variable=prefix="$PTLCC_PREFIX"} \
		--cflags --libs libptl) || fail "pkg-config libptl: $pc"
	# shellcheck disable=SC2086
	limited "$PROGRAM_LIMIT" cc -O2 -o "$T/ring_pc" "$top/examples/ring.c" $pc ||
		fail "examples/ring.c did not build with pkg-config's flags: $pc"
	ldd_from "$T/ring_pc" "$libs"
	run2 "$T/ring_pc" "built with pkg-config's flags"
	echo "$out" | grep -q "PTL_EVENT_REPLY_END" || fail "ring_pc printed no event queue: $out"
	# the installed tools load the installed libraries, and run; libptlmpi
	# finds libptl by its own run path (a program linked --as-needed, as
	# Debian's gcc does, names only libptlmpi)
	for t in "$bin/ptltool" "$bin/ptlreplay" "$libs/libptlmpi.so"; do
		ldd_from "$t" "$libs"
	done
	out=$(limited "$PROGRAM_LIMIT" "$bin/ptltool" info 2>&1) || fail "installed ptltool info: $out"
	echo "$out" | grep -q "^nal shm: " || fail "installed ptltool info: $out"
	out=$(limited "$PROGRAM_LIMIT" "$bin/ptlreplay" 2>&1)
	echo "$out" | grep -q "^usage: " || fail "installed ptlreplay: $out"
	# the installed tree moved whole, to a directory with a space in its
	# name: PTLCC_PREFIX moves ptlcc's flags, each of them one word
	case $4:$5 in
	"$3"/*:"$3"/*)
		moved="$T/moved tree"
		cp -a "$2$3" "$moved" || fail "could not copy the installed tree to $moved"
		mlibs=$moved${5#"$3"}
		limited "$PROGRAM_LIMIT" env PTLCC_PREFIX="$moved" "$moved${4#"$3"}/ptlcc" -O2 -o "$T/app_moved" \
			"$top/tests/tools/ptlcc_app.c" || fail "the moved tree's ptlcc could not build ptlcc_app.c"
		ldd_from "$T/app_moved" "$mlibs"
		run2 "$T/app_moved" "built by the moved tree's ptlcc"
		echo "$out" | grep -q "^ptlcc_app: rank 1 of 2: ok$" || fail "app built in the moved tree: $out"
		;;
	esac
fi
echo "PASS: $what"
