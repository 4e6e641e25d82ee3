#!/bin/sh
# A job of two users: mp_match's uid group, in which rank 0 claims the
# uid after ours (the test option PTL_TEST_UID) and rank 1 runs as we do.
# Then a PTL_TEST_UID that is no uid (the wildcard PTL_UID_ANY, which
# would make the default AC entry admit every user): said on stderr by
# each rank and ignored (mp_api's checks PtlGetUid against getuid()).
set -u
d=$(dirname "$0")
"$d/run.sh" 2 mp_match MP_MATCH_GROUP=uid || exit $?
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
"$d/run.sh" 2 mp_api PTL_TEST_UID=4294967295 >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || exit "$rc"
. "$d/said.sh"
said_once "$out" uid.sh "PTL_TEST_UID=4294967295 is not a uid below 4294967295: ignored" || exit 1
echo "uid.sh: a PTL_TEST_UID that is no uid was said and ignored by each rank"
