#!/bin/sh
# Every man page renders at 80 columns without a warning from man-db's
# pipeline (preconv, tbl, troff): what it warns about is text a reader
# sees cut, unjustified or misplaced (portals3(7)'s limits table was, in
# that width only). Pages are rendered from man/ so that .so links
# resolve as they do once installed; in the C.UTF-8 locale, so that an
# unset or ungenerated $LANG (man-db: "can't set the locale") is not
# taken for a page's warning.
srcdir=${srcdir:-.}
LC_ALL=C.UTF-8
locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$' || LC_ALL=C
export LC_ALL
unset MANOPT MANROFFOPT
# man-db's man takes --warnings (mandoc's and stubs do not)
if ! man --help 2>/dev/null | grep -q -- --warnings; then
	echo "SKIP: man-db's man is not installed (scripts/deps.sh installs it)"
	exit 77
fi
cd "$srcdir/man" || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=0 bad=0
for f in man[1-9]/*.[1-9]; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	w=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >"$out") && rc=0 || rc=$?
	if [ -n "$w" ] || [ "$rc" -ne 0 ] || [ ! -s "$out" ]; then
		echo "FAIL: $f at 80 columns (exit $rc, $(wc -c <"$out") bytes rendered):"
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
