#!/bin/sh
# ptltool info: every NAL is listed with what it would use; the TCP NAL's
# addresses follow PTL_TCP_ADDR / PTL_TCP_IF as the NAL's own choice does;
# bad arguments are refused.
set -u
B=${PTL_TOP_BUILDDIR:-.}
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/../time_limit.sh"
# it answers in moments: one that hangs is stopped and named
ptltool() { limited "$PROGRAM_LIMIT" "$B/tools/ptltool" "$@"; }

out=$(ptltool info) || fail "ptltool info failed"
for nal in self shm verbs tcp; do
	echo "$out" | grep -q "^nal $nal: " || fail "no 'nal $nal' line in: $out"
done
echo "$out" | grep -q "^nal tcp: *built, usable: publishes [0-9.]" || fail "tcp line: $out"
echo "$out" | grep -q "not built yet" && fail "a NAL said 'not built yet': $out"

out=$(PTL_TCP_ADDR=10.1.2.3,192.0.2.77 ptltool info 2>&1) || fail "ptltool info with PTL_TCP_ADDR failed"
echo "$out" | grep -q "^nal tcp: *built, usable: publishes 10.1.2.3 192.0.2.77 (PTL_TCP_ADDR)$" ||
	fail "PTL_TCP_ADDR not shown: $out"
out=$(PTL_TCP_ADDR=10.1.2.3,nonsense ptltool info 2>&1)
echo "$out" | grep -q "PTL_TCP_ADDR: 'nonsense' is not an IPv4 address; ignored" ||
	fail "a bad PTL_TCP_ADDR entry is not named: $out"
echo "$out" | grep -q "publishes 10.1.2.3 (PTL_TCP_ADDR)$" || fail "the good entry was lost: $out"
# An interface that does not exist: loopback is all there is.
out=$(PTL_TCP_IF=ptl-no-such-if ptltool info 2>&1)
echo "$out" | grep -q "publishes 127.0.0.1 (PTL_TCP_IF)$" || fail "PTL_TCP_IF: $out"

out=$(ptltool info extra 2>&1)
[ $? = 2 ] || fail "ptltool info with an argument did not exit 2"
echo "$out" | grep -q "ptltool info: unexpected argument 'extra'" || fail "info extra: $out"
out=$(ptltool ps extra 2>&1)
[ $? = 2 ] || fail "ptltool ps with an argument did not exit 2"
echo "$out" | grep -q "ptltool ps: unexpected argument 'extra'" || fail "ps extra: $out"
out=$(ptltool trace frobnicate 2>&1)
[ $? = 2 ] || fail "ptltool trace frobnicate did not exit 2"
echo "$out" | grep -q "ptltool trace: unknown subcommand 'frobnicate'" || fail "trace frobnicate: $out"
echo "PASS: ptltool info"
