# Sourced by tests/ptl/mp scripts.
# said_once OUT WHO TEXT: ranks 0 and 1 each said "ptl: rank R: TEXT"
# exactly once in file OUT; else says so as WHO and returns 1.
said_once() {
	so_out=$1 so_who=$2
	shift 2
	for so_r in 0 1; do
		so_want="ptl: rank $so_r: $*"
		so_n=$(grep -cF "$so_want" "$so_out")
		if [ "$so_n" != 1 ]; then
			echo "$so_who: said $so_n times, want once: $so_want"
			return 1
		fi
	done
}
