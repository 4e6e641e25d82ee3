#!/bin/sh
# Every man page renders at 80 columns without a warning from man-db's
# pipeline (preconv, tbl, troff): what it warns about is text a reader
# sees cut, unjustified or misplaced (portals3(7)'s limits table was, in
# that width only). Pages are rendered from man/ so that .so links
# resolve as they do once installed.
srcdir=${srcdir:-.}
if ! command -v man >/dev/null 2>&1; then
	echo "SKIP: man (man-db) is not installed; scripts/deps.sh installs it"
	exit 77
fi
cd "$srcdir/man" || exit 1
n=0 bad=0
for f in man[1-9]/*.[1-9]; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	if [ -n "$w" ]; then
		echo "FAIL: $f at 80 columns:"
		echo "$w" | sed 's/^/  /'
		bad=$((bad + 1))
	fi
done
if [ "$n" -eq 0 ]; then
	echo "FAIL: no man pages under $srcdir/man"
	exit 1
fi
echo "$n pages, $bad with warnings"
[ "$bad" -eq 0 ]
