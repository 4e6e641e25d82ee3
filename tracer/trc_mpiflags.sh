#!/bin/sh
# trc_mpiflags.sh MPICC cflags|libs: the compile or link flags an MPI
# compiler wrapper adds, so that MPI pieces build with the project's CC.
cc=$1
what=$2
flags=`$cc -show 2>/dev/null` || { echo "trc_mpiflags.sh: '$cc -show' failed" >&2; exit 1; }
out=
for f in $flags; do
	case $f in
	-I*|-D*) test "$what" = cflags && out="$out $f" ;;
	-L*|-l*|-Wl,*) test "$what" = libs && out="$out $f" ;;
	esac
done
echo $out
