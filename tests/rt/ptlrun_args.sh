#!/bin/sh
# ptlrun: bad arguments get a message and the usage, exit status 2.
. "${PTL_TOP_SRCDIR:-$(dirname "$0")/../..}/tests/rt/rt_common.sh"

usage_err() {
	msgre=$1
	shift
	run 2 "$PTLRUN" "$@"
	has "$ERR" "ptlrun: $msgre"
	has "$ERR" 'usage: ptlrun -n N \[options\] program \[args\.\.\.\]'
	[ -s "$OUT" ] && fail "stdout not empty for '$*'"
}

usage_err '-n N \(the number of ranks\) is required'
usage_err '-n N \(the number of ranks\) is required' "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not '0'" -n 0 "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not 'four'" -n four "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not '-3'" -n -3 "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not '4x'" -n 4x "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not '1025'" -n 1025 "$KVS"
usage_err "-n needs a number of ranks from 1 to 1024, not ''" -n '' "$KVS"
usage_err "option '-n' needs a value" -n
usage_err "option '--timeout' needs a value" -n 2 --timeout
usage_err "unknown option '--frobnicate'" -n 2 --frobnicate "$KVS"
usage_err "unknown option '-q'" -n 2 -q "$KVS"
usage_err 'no program to run' -n 2
usage_err 'no program to run' -n 2 --tag-output
usage_err "--timeout needs a whole number of seconds, not 'soon'" -n 2 --timeout soon "$KVS"
usage_err "--timeout needs a whole number of seconds, not '-1'" -n 2 --timeout -1 "$KVS"
usage_err "--bind-to takes 'core' or 'none', not 'socket'" -n 2 --bind-to socket "$KVS"
usage_err "-x needs VAR or VAR=VALUE, not '=x'" -n 2 -x =x "$KVS"

# A host file that cannot be read: exit 2, the file and the reason named.
run 2 "$PTLRUN" --hostfile "$TMP/no-such-hostfile" -n 2 "$KVS"
has "$ERR" "ptlrun: cannot read host file '$TMP/no-such-hostfile': No such file or directory"

# A program that cannot run: exit 2, no usage needed, nothing started.
run 2 "$PTLRUN" -n 2 ptlrun-no-such-program-$$
has "$ERR" "ptlrun: program 'ptlrun-no-such-program-$$' not found in PATH"
run 2 "$PTLRUN" -n 2 ./no/such/file
has "$ERR" "ptlrun: cannot run './no/such/file': No such file or directory"
: >"$TMP/notexec"
run 2 "$PTLRUN" -n 2 "$TMP/notexec"
has "$ERR" "ptlrun: cannot run '$TMP/notexec': not an executable file"
run 2 "$PTLRUN" -n 2 "$TMP"
has "$ERR" "ptlrun: cannot run '$TMP': not an executable file"

# Options after the program belong to the program.
run 0 "$PTLRUN" --timeout 60 -n 1 echo -n --tag-output
has "$OUT" '--tag-output'

# --help and --version succeed on stdout.
run 0 "$PTLRUN" --help
has "$OUT" 'usage: ptlrun -n N \[options\] program \[args\.\.\.\]'
run 0 "$PTLRUN" -V
has "$OUT" 'ptlrun \(ptl\) [0-9.]+'

finish
